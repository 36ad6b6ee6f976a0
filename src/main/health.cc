#include "main/health.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cstdio>
#include <string>

#include "http/config.h"
#include "http/resolve.h"

namespace fdyno::main {
namespace {

namespace net = boost::asio;

constexpr size_t kMaxAnswerBytes = 64 * 1024;

// The server's answer to GET / within the timeout, or why there is none.
Result<std::string> AskRoot(const http::Endpoint& endpoint, std::chrono::milliseconds timeout) {
  net::io_context io;
  FDYNO_ASSIGN_OR_RETURN(net::ip::tcp::endpoint address,
                         http::ResolveEndpoint(io, endpoint, /*passive=*/false));
  net::ip::tcp::socket socket(io);
  const std::string request =
      "GET / HTTP/1.1\r\nHost: " + endpoint.ToString() + "\r\nConnection: close\r\n\r\n";
  std::string answer;
  boost::system::error_code failed;
  socket.async_connect(address, [&](boost::system::error_code ec) {
    if (ec) {
      failed = ec;
      return;
    }
    net::async_write(socket, net::buffer(request), [&](boost::system::error_code ec, size_t) {
      if (ec) {
        failed = ec;
        return;
      }
      net::async_read(socket, net::dynamic_buffer(answer, kMaxAnswerBytes),
                      [&](boost::system::error_code ec, size_t) {
                        if (ec != net::error::eof) failed = ec;
                      });
    });
  });
  io.run_for(timeout);
  if (!io.stopped())
    return Error::Validation("no answer within " + std::to_string(timeout.count()) + " ms");
  if (failed) return Error::Validation(failed.message());
  return answer;
}

}  // namespace

CLI::App* AddHealthCommand(CLI::App& app) {
  CLI::App* command =
      app.add_subcommand("health", "Exit 0 if a server answers at the endpoint, 1 if not");
  command->add_option("--endpoint", "The server's HOST:PORT (its --listen)")
      ->default_val("127.0.0.1:8000")
      ->envname("DYNODB_LISTEN");
  command->add_option("-p,--port", "The server's port (replaces --endpoint's port)")
      ->envname("DYNODB_PORT")
      ->check(CLI::Range(1, 65535));
  command->add_option("--timeout-ms", "How long to wait for the answer")->default_val("2000");
  return command;
}

int RunHealth(const CLI::App& command) {
  const std::string text = command.get_option("--endpoint")->as<std::string>();
  Result<http::Endpoint> endpoint = http::ParseEndpoint(text);
  if (!endpoint.ok()) {
    std::fprintf(stderr, "%s\n", endpoint.error().message.c_str());
    return 2;
  }
  if (const CLI::Option* port = command.get_option("--port"); port->count() > 0) {
    endpoint->port = port->as<uint16_t>();
  }
  if (endpoint->host == "0.0.0.0") endpoint->host = "127.0.0.1";
  if (endpoint->host == "::") endpoint->host = "::1";
  const auto timeout = std::chrono::milliseconds(command.get_option("--timeout-ms")->as<int>());
  Result<std::string> answer = AskRoot(*endpoint, timeout);
  if (!answer.ok()) {
    std::fprintf(stderr, "unhealthy: %s: %s\n", endpoint->ToString().c_str(),
                 answer.error().message.c_str());
    return 1;
  }
  const bool healthy = answer->rfind("HTTP/1.1 200", 0) == 0 &&
                       answer->find("\r\n\r\nhealthy: ") != std::string::npos;
  if (!healthy) {
    std::fprintf(stderr, "unhealthy: %s answered: %.200s\n", endpoint->ToString().c_str(),
                 answer->c_str());
    return 1;
  }
  std::printf("healthy: %s\n", endpoint->ToString().c_str());
  return 0;
}

}  // namespace fdyno::main
