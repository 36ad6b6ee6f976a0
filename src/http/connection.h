// One client connection: HTTP/1.1 with keep-alive over plain TCP or TLS. It reads a request
// under a header-size limit, a body limit and timeouts (idle, header, body, write), answers 400
// to one that breaks HTTP's syntax or framing, hands API calls to the worker pool (answering
// ThrottlingException when it is at its bound; GetItem and small Query/Scan pages run on the
// network thread when ServerConfig::inline_reads is set, and the single-item writes up to
// their commit when ServerConfig::inline_writes is set, under the same bound and never waiting
// there for a retry), writes the response with x-amzn-RequestId and x-amz-crc32, and closes
// cleanly on shutdown once the request in flight is answered.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "http/config.h"
#include "http/router.h"
#include "http/worker_pool.h"

namespace fdyno::http {

class Session {
 public:
  virtual ~Session() = default;
  // Called on any thread: stop reading new requests; answer the one in flight, then close.
  virtual void Shutdown() = 0;
};

// The set of live sessions, so shutdown can reach them and wait until they are gone.
// Thread-safe.
class SessionTracker {
 public:
  void Add(Session* session, std::weak_ptr<Session> weak);
  void Remove(Session* session);
  // Calls Shutdown() on every live session.
  void ShutdownAll();
  // Waits until no session is left or the deadline passes; true when none is left.
  bool WaitEmpty(std::chrono::steady_clock::time_point deadline);
  size_t size() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable empty_cv_;
  std::unordered_map<Session*, std::weak_ptr<Session>> sessions_;
};

// What every session of one listener shares. Outlives the sessions.
struct ConnectionEnv {
  const Router* router = nullptr;
  WorkerPool* pool = nullptr;
  const ServerConfig* config = nullptr;
  SessionTracker* tracker = nullptr;
};

// A socket bound to an io_context's executor (not the type-erased any_io_executor of
// tcp::socket): every handler of a connection then skips copying and destroying the
// type-erased executor, a measurable share of the network thread under PutItem
// (bench/README.md, "Figures behind settings in the code").
using Socket =
    boost::asio::basic_stream_socket<boost::asio::ip::tcp, boost::asio::io_context::executor_type>;

// Starts serving an accepted socket. Its io_context must be run by one thread (a connection's
// handlers run one at a time). `refuse`: the server is at its connection limit; the session
// reads one request, answers it with 503 ServiceUnavailable and closes.
void StartPlainSession(Socket socket, const ConnectionEnv& env, bool refuse = false);
void StartTlsSession(Socket socket, boost::asio::ssl::context& tls, const ConnectionEnv& env,
                     bool refuse = false);

}  // namespace fdyno::http
