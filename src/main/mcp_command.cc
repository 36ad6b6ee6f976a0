#include "main/mcp_command.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "http/sigv4.h"
#include "main/backend.h"
#include "main/logging.h"
#include "mcp/remote.h"
#include "mcp/session.h"

namespace fdyno::main {
namespace {

// The options of the database `fdyno mcp` opens itself, which --endpoint leaves to the server.
std::vector<const CLI::Option*>& OwnDatabaseOptions() {
  static std::vector<const CLI::Option*> options;
  return options;
}

std::string Env(const char* name, std::string fallback = {}) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : fallback;
}

// Answers each line of standard input with `session` until it ends.
void Converse(mcp::Session& session) {
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (std::optional<std::string> answer = session.Handle(line)) {
      std::fwrite(answer->data(), 1, answer->size(), stdout);
      std::fputc('\n', stdout);
      std::fflush(stdout);
    }
  }
}

// On a running server: its endpoint, signed with the standard AWS variables' key (any key in
// its open mode).
int RunRemote(const ServeFlags& flags, const std::string& endpoint) {
  for (const CLI::Option* option : OwnDatabaseOptions()) {
    if (option->count() > 0) {
      spdlog::error("--endpoint works on the server's database: {} does not apply",
                    option->get_name());
      return 2;
    }
  }
  Result<mcp::Invoke> invoke =
      mcp::RemoteInvoke({.endpoint = endpoint,
                         .ca_file = Env("AWS_CA_BUNDLE"),
                         .access_key_id = Env("AWS_ACCESS_KEY_ID", "fdyno-mcp"),
                         .secret_access_key = Env("AWS_SECRET_ACCESS_KEY", "fdyno-mcp"),
                         .region = flags.region,
                         .timeout = std::chrono::milliseconds(30'000)});
  if (!invoke.ok()) {
    spdlog::error("{}", invoke.error().message);
    return 2;
  }
  mcp::Session session(std::move(invoke).value(), FDYNO_VERSION);
  spdlog::info("fdyno mcp on standard input and output (the server at {})", endpoint);
  Converse(session);
  return 0;
}

}  // namespace

CLI::App* AddMcpCommand(CLI::App& app, ServeFlags& flags, std::string& endpoint) {
  CLI::App* command = app.add_subcommand(
      "mcp", "Serve the Model Context Protocol on standard input and output (coding agents)");
  command->add_option("--endpoint", endpoint,
                      "A running server's URL (http[s]://HOST:PORT) to work on instead of a "
                      "database of its own; requests are signed with AWS_ACCESS_KEY_ID and "
                      "AWS_SECRET_ACCESS_KEY, and https checks the server against "
                      "AWS_CA_BUNDLE or the system's certificate authorities");
  const size_t before = command->get_options().size();
  AddStorageFlags(*command, flags);
  AddWorkerFlags(*command, flags);
  for (size_t i = before; i < command->get_options().size(); ++i) {
    OwnDatabaseOptions().push_back(command->get_options()[i]);
  }
  AddRegionFlag(*command, flags);
  AddLogFlags(*command, flags);
  return command;
}

int RunMcp(const ServeFlags& flags, const std::string& endpoint) {
  ConfigureLogging(flags.log_format == "json" ? LogFormat::kJson : LogFormat::kText,
                   flags.log_level);
  if (!endpoint.empty()) return RunRemote(flags, endpoint);
  Result<std::unique_ptr<Backend>> backend = Backend::Start(flags, Clock::Real());
  if (!backend.ok()) {
    spdlog::error("{}", backend.error().message);
    return backend.error().type == ErrorType::kValidation ? 2 : 1;
  }
  // The tables belong to open mode's account, as those of `fdyno serve` without --credentials
  // on the same data.
  api::RequestContext context;
  context.account_id = std::string(http::kOpenModeAccount);
  context.region = flags.region;
  context.access_key_id = "mcp";
  mcp::Session session(mcp::LocalInvoke((*backend)->registry(), context), FDYNO_VERSION);
  spdlog::info("fdyno mcp on standard input and output ({})", (*backend)->description());
  Converse(session);
  spdlog::info("standard input closed; closing the engine");
  return 0;
}

}  // namespace fdyno::main
