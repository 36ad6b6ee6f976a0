// What `fdyno serve` configures in the HTTP layer: listeners, TLS, limits, timeouts and the
// worker pool. Filled from flags and DYNODB_* variables by src/main.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace fdyno::http {

struct Endpoint {
  std::string host;  // IPv4 or IPv6 literal, "localhost" (127.0.0.1), or a name (http/resolve.h)
  uint16_t port = 0;
  std::string ToString() const;
};

// "HOST:PORT", "[IPv6]:PORT" or ":PORT" (meaning 0.0.0.0). Port 0 asks for a free port.
Result<Endpoint> ParseEndpoint(std::string_view text);
// 127.0.0.0/8, ::1 and "localhost".
bool IsLoopbackHost(std::string_view host);

struct ServerConfig {
  Endpoint listen{"127.0.0.1", 8000};
  std::optional<Endpoint> admin_listen;  // when set, /metrics lives only there
  std::optional<Endpoint> mcp_listen;    // the Model Context Protocol (http/mcp_endpoint.h)
  std::string tls_cert_file;             // both set: the data listener speaks TLS
  std::string tls_key_file;
  size_t io_threads = 2;
  size_t workers = 8;
  // Operations waiting for a worker or running on a network thread before
  // ThrottlingException (WorkerPool).
  size_t queue_bound = 1024;
  // GetItem runs on the network thread instead of a worker: a bounded single-item read that
  // never waits for a commit, so the handoff to a worker and back would cost more than it.
  // So do Query and Scan pages of at most api::QueryOptions::inline_page_bytes (64 KB); a
  // larger page gives up there and is read on a worker.
  bool inline_reads = true;
  // PutItem, UpdateItem and DeleteItem run on the network thread up to their commit, which the
  // engine finishes without holding a thread (Transaction::CommitAsync); retries go to a
  // worker. Only worth it, and only set, for an engine that commits asynchronously.
  bool inline_writes = true;
  // An inline request (above) that held its network thread longer than slow_inline, such as
  // one that met a slow disk read, pauses inline work on that thread for inline_pause: those
  // requests go to the workers meanwhile, so a slow engine holds the other connections of a
  // network thread once per pause, not on every request.
  std::chrono::milliseconds slow_inline{10};
  std::chrono::milliseconds inline_pause{1'000};
  // Open connections (both listeners) beyond which a new one is answered 503 and closed;
  // 0: no limit.
  size_t max_connections = 0;
  size_t max_header_bytes = 16 * 1024;
  size_t max_body_bytes = 16 * 1024 * 1024;
  std::chrono::milliseconds idle_timeout{60'000};    // keep-alive wait for the next request
  std::chrono::milliseconds header_timeout{10'000};  // first byte to end of headers
  std::chrono::milliseconds body_timeout{60'000};    // end of headers to end of body
  std::chrono::milliseconds write_timeout{60'000};
  std::chrono::milliseconds drain_timeout{30'000};  // shutdown: wait for in-flight requests
};

}  // namespace fdyno::http
