#include "main/mcp_command.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <iostream>
#include <string>

#include "http/sigv4.h"
#include "main/backend.h"
#include "main/logging.h"
#include "mcp/session.h"

namespace fdyno::main {

CLI::App* AddMcpCommand(CLI::App& app, ServeFlags& flags) {
  CLI::App* command = app.add_subcommand(
      "mcp", "Serve the Model Context Protocol on standard input and output (coding agents)");
  AddStorageFlags(*command, flags);
  AddWorkerFlags(*command, flags);
  AddRegionFlag(*command, flags);
  AddLogFlags(*command, flags);
  return command;
}

int RunMcp(const ServeFlags& flags) {
  ConfigureLogging(flags.log_format == "json" ? LogFormat::kJson : LogFormat::kText,
                   flags.log_level);
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
  mcp::Session session((*backend)->registry(), context, FDYNO_VERSION);
  spdlog::info("fdyno mcp on standard input and output ({})", (*backend)->description());
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (std::optional<std::string> answer = session.Handle(line)) {
      std::fwrite(answer->data(), 1, answer->size(), stdout);
      std::fputc('\n', stdout);
      std::fflush(stdout);
    }
  }
  spdlog::info("standard input closed; closing the engine");
  return 0;
}

}  // namespace fdyno::main
