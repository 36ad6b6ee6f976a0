// The HTTP server: listeners (data, optional admin), IO threads, the worker pool, and a
// graceful shutdown that stops accepting, answers requests in flight and then returns.
//
// Usage: Server::Create(...) binds the listeners (so "address in use" is reported before
// anything starts); Run() serves until Shutdown() (from any thread, or SIGINT/SIGTERM when
// handle_signals is set) and returns once in-flight requests are answered.
#pragma once

#include <memory>
#include <string>

#include "api/operation.h"
#include "base/result.h"
#include "http/config.h"
#include "http/router.h"

namespace fdyno::http {

class Server {
 public:
  virtual ~Server() = default;

  // REQUIRES: registry and credentials outlive the server.
  static Result<std::unique_ptr<Server>> Create(const ServerConfig& config,
                                                const api::OperationRegistry& registry,
                                                const RouterOptions& router_options,
                                                bool handle_signals);

  // The bound addresses (with the real port when 0 was asked for).
  virtual Endpoint data_endpoint() const = 0;
  virtual std::optional<Endpoint> admin_endpoint() const = 0;
  // The --mcp-listen listener's, when there is one.
  virtual std::optional<Endpoint> mcp_endpoint() const = 0;

  // Serves until shutdown; then waits up to config.drain_timeout for requests in flight,
  // stops the IO threads and the worker pool, and returns.
  virtual void Run() = 0;
  // Begins a graceful shutdown. Thread-safe and idempotent.
  virtual void Shutdown() = 0;
};

}  // namespace fdyno::http
