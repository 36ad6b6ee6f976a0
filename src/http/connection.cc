#include "http/connection.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <optional>

#include "base/log_limiter.h"
#include "http/inbox.h"
#include "http/wire.h"

namespace fdyno::http {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;
using PlainStream = beast::basic_stream<tcp, net::io_context::executor_type>;

// Bytes a rejected client may still send before the socket is closed (lingering close keeps
// the client from seeing a reset before it reads the error).
constexpr size_t kMaxDrainBytes = 64 * 1024 * 1024;
constexpr std::chrono::seconds kDrainTimeout{5};
// The slowest body upload a connection is given time for (ReadBody's deadline): a 400 KB item
// gets 50 s, and 16 MiB gets the whole body timeout.
constexpr uint64_t kMinBodyBytesPerSecond = 8 * 1024;
// A connection keeps its response head buffer up to this size (TLS appends the body to it).
constexpr size_t kKeptHeadBytes = 4096;
// What a connection may hold unparsed beyond the header limit: one read (Beast reads at most
// 64 KiB at a time). Beast 1.74 holds a chunk-size line (with its extensions) or the trailer of
// a chunked body whole until its end arrives, with no limit of its own: without this bound on
// the read buffer a client could grow a connection's memory for the whole body timeout.
constexpr size_t kMaxReadBytes = 64 * 1024;

using SteadyTime = std::chrono::steady_clock::time_point;

// Until when inline work is paused on this network thread (ServerConfig::slow_inline).
thread_local SteadyTime inline_paused_until;

LogLimiter& SlowInlineLog() {
  static LogLimiter* log = new LogLimiter(std::chrono::seconds(10));
  return *log;
}

template <typename Stream>
class HttpSession : public Session, public std::enable_shared_from_this<HttpSession<Stream>> {
 public:
  template <typename... Args>
  HttpSession(const ConnectionEnv& env, bool refuse, Args&&... args)
      : env_(env),
        refuse_(refuse),
        stream_(std::forward<Args>(args)...),
        buffer_(env.config->max_header_bytes + kMaxReadBytes) {}

  ~HttpSession() override { env_.tracker->Remove(this); }

  void Start() {
    env_.tracker->Add(this, this->weak_from_this());
    net::dispatch(stream_.get_executor(), [self = this->shared_from_this()] { self->Begin(); });
  }

  void Shutdown() override {
    net::post(stream_.get_executor(), [self = this->shared_from_this()] {
      self->closing_ = true;
      // A request that has begun to arrive (bytes buffered, or waiting in the socket) is read,
      // answered and then the connection closes; an idle keep-alive connection closes now.
      if (self->state_ == State::kIdle) {
        beast::error_code ec;
        size_t pending = self->Lowest().socket().available(ec);
        if (ec || pending == 0) self->CloseNow();
      }
    });
  }

 private:
  enum class State {
    kIdle,        // waiting for the first byte of a request, nothing buffered
    kReading,     // a request is arriving
    kProcessing,  // on a worker
    kWriting,
    kClosed,
  };

  static constexpr bool kTls = !std::is_same_v<Stream, PlainStream>;

  auto& Lowest() { return beast::get_lowest_layer(stream_); }

  void Begin() {
    if constexpr (kTls) {
      Lowest().expires_after(env_.config->header_timeout);
      stream_.async_handshake(net::ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code ec) {
                                if (ec) return self->CloseNow();
                                self->ReadRequest();
                              });
    } else {
      ReadRequest();
    }
  }

  // Waits (idle timeout) for the first byte of the next request, then reads its header
  // (header timeout), so a slow client cannot hold a connection with a trickle of bytes.
  void ReadRequest() {
    if (closing_) return CloseNow();
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(env_.config->max_header_bytes));
    parser_->body_limit(env_.config->max_body_bytes);
    if (buffer_.size() > 0) return ParseBuffered();
    state_ = State::kIdle;
    Lowest().expires_after(env_.config->idle_timeout);
    stream_.async_read_some(buffer_.prepare(4096),
                            [self = this->shared_from_this()](beast::error_code ec, size_t n) {
                              if (ec) return self->CloseNow();
                              self->buffer_.commit(n);
                              self->ParseBuffered();
                            });
  }

  // Parses what is already buffered without another asynchronous read: a small request
  // usually arrives in one segment, and each extra asynchronous step costs a trip through
  // the executor and a timer update. Whatever is missing is read asynchronously as before.
  void ParseBuffered() {
    state_ = State::kReading;
    beast::error_code ec;
    while (!parser_->is_done() && buffer_.size() > 0) {
      size_t n = parser_->put(buffer_.data(), ec);
      buffer_.consume(n);
      if (ec || n == 0) break;
    }
    if (ec == bhttp::error::need_more) ec = {};
    if (!parser_->is_header_done()) {
      if (ec) return OnHeader(ec);
      return ReadHeader();
    }
    if (parser_->is_done() || ec) {
      // The header checks of OnHeader (size limits) are implied: the parser enforces them.
      return OnRequest(ec);
    }
    OnHeader(ec);  // header complete, body still arriving (or Expect: 100-continue)
  }

  void ReadHeader() {
    state_ = State::kReading;
    Lowest().expires_after(env_.config->header_timeout);
    bhttp::async_read_header(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, size_t) { self->OnHeader(ec); });
  }

  void OnHeader(beast::error_code ec) {
    if (ec == bhttp::error::header_limit) {
      // An oversized request line or header block is a bad request (400), as DynamoDB answers.
      return Reject(Error::Validation("Request header exceeds the maximum of " +
                                      std::to_string(env_.config->max_header_bytes) + " bytes"));
    }
    // Beast reports a Content-Length above the body limit while parsing the header.
    if (ec == bhttp::error::body_limit) return Reject(TooLarge(), TargetHeader());
    if (IsMalformed(ec)) return Reject(Malformed(ec));
    if (ec) return CloseNow();
    auto& header = parser_->get();
    if (refuse_) return Refuse(header);  // before reading a body that will not be used
    if (auto length = parser_->content_length(); length && *length > env_.config->max_body_bytes) {
      return Reject(TooLarge(), TargetHeader());
    }
    auto expect = header.find(bhttp::field::expect);
    if (expect != header.end() && beast::iequals(expect->value(), "100-continue")) {
      continue_.emplace(bhttp::status::continue_, header.version());
      Lowest().expires_after(env_.config->write_timeout);
      bhttp::async_write(stream_, *continue_,
                         [self = this->shared_from_this()](beast::error_code ec, size_t) {
                           if (ec) return self->CloseNow();
                           self->ReadBody();
                         });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    Lowest().expires_after(BodyTimeout());
    bhttp::async_read(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, size_t) { self->OnRequest(ec); });
  }

  // The time a body may take to arrive: what its Content-Length needs at
  // kMinBodyBytesPerSecond, at least header_timeout and at most body_timeout (also for a
  // chunked body, whose length is unknown). A client trickling a small body a byte at a time
  // is cut off as soon as one trickling its header, not after the whole body_timeout.
  std::chrono::milliseconds BodyTimeout() const {
    const ServerConfig& c = *env_.config;
    auto length = parser_->content_length();
    if (!length) return c.body_timeout;
    auto needed = std::chrono::milliseconds(*length * 1000 / kMinBodyBytesPerSecond);
    return std::clamp(needed, std::min(c.header_timeout, c.body_timeout), c.body_timeout);
  }

  std::string TargetHeader() {
    auto& header = parser_->get();
    auto it = header.find("x-amz-target");
    return it == header.end() ? std::string() : std::string(it->value());
  }

  // The answer at the connection limit (ServerConfig::max_connections).
  template <typename Header>
  void Refuse(const Header& header) {
    auto it = header.find("x-amz-target");
    std::string target = it == header.end() ? std::string() : std::string(it->value());
    Reject(Error::Make(ErrorType::kServiceUnavailable,
                       "The server is at its connection limit (--max-connections " +
                           std::to_string(env_.config->max_connections) + "); retry later"),
           target);
  }

  // A request that breaks HTTP/1.1's syntax or framing (request line, header fields,
  // Content-Length, Transfer-Encoding, chunks), or whose sender ended it before its end
  // (partial_message: a client that half-closed may still read the answer). It is answered 400
  // before the connection closes, not closed silently: the client learns why. A connection
  // that times out mid-request is closed by the stream itself.
  static bool IsMalformed(beast::error_code ec) {
    using E = bhttp::error;
    for (E e : {E::bad_line_ending, E::bad_method, E::bad_target, E::bad_version, E::bad_field,
                E::bad_value, E::bad_content_length, E::bad_transfer_encoding, E::bad_chunk,
                E::bad_chunk_extension, E::bad_obs_fold, E::partial_message}) {
      if (ec == e) return true;
    }
    return false;
  }

  static Error Malformed(beast::error_code ec) {
    return Error::Validation("Malformed HTTP request: " + ec.message());
  }

  Error TooLarge() const {
    return Error::Make(ErrorType::kRequestEntityTooLarge,
                       "Request body exceeds the maximum of " +
                           std::to_string(env_.config->max_body_bytes) + " bytes");
  }

  void OnRequest(beast::error_code ec) {
    if (ec == bhttp::error::body_limit) return Reject(TooLarge(), TargetHeader());
    // The read buffer is full (kMaxReadBytes): a chunk-size line or trailer that never ends.
    if (ec == bhttp::error::buffer_overflow) {
      return Reject(Error::Validation(
                        "Malformed HTTP request: a chunk header or trailer does not end within " +
                        std::to_string(env_.config->max_header_bytes + kMaxReadBytes) + " bytes"),
                    TargetHeader());
    }
    if (IsMalformed(ec)) return Reject(Malformed(ec), TargetHeader());
    if (ec) return CloseNow();
    request_ = parser_->release();
    parser_.reset();
    keep_alive_ = request_.keep_alive();
    const Router& router = *env_.router;
    if (refuse_) return Refuse(request_);
    if (!router.IsApiCall(request_)) {
      return Write(router.HandleLocal(request_));
    }
    state_ = State::kProcessing;
    const SteadyTime now = std::chrono::steady_clock::now();
    if (now < inline_paused_until || router.faults_active()) return RunOnWorker();
    if (env_.config->inline_reads && Router::IsInlineRead(request_)) return RunInlineRead(now);
    const Router::AsyncForm form = router.AsyncFormOf(request_);
    if ((form == Router::AsyncForm::kWrite && env_.config->inline_writes) ||
        (form == Router::AsyncForm::kRead && env_.config->inline_reads)) {
      return RunInlineAsync(now);
    }
    RunOnWorker();
  }

  // After inline work that began at `start`: when it held the thread too long, the thread's
  // next inline-able requests go to the workers for a while.
  void AfterInline(SteadyTime start) const {
    const SteadyTime end = std::chrono::steady_clock::now();
    if (end - start <= env_.config->slow_inline) return;
    inline_paused_until = end + env_.config->inline_pause;
    if (auto left_out = SlowInlineLog().Allow()) {
      spdlog::warn(
          "a request held a network thread for {} ms (a slow engine read?): that thread sends "
          "its requests to the workers for {} ms ({} more such pauses since the last line)",
          std::chrono::duration_cast<std::chrono::milliseconds>(end - start).count(),
          env_.config->inline_pause.count(), *left_out);
    }
  }

  // Work on this thread takes a place under the worker pool's bound like work queued for a
  // worker, so that shedding (ThrottlingException) applies to it too; and it never waits here:
  // an attempt that would back off and retry gives up and the request runs again on a worker.
  void RunInlineRead(SteadyTime start) {
    const Router& router = *env_.router;
    if (!env_.pool->TryAdmit()) return Write(router.Throttled(request_));
    router.in_flight().Add(1);
    std::optional<HttpResponse> response = router.HandleInline(request_);
    router.in_flight().Add(-1);
    env_.pool->Release();
    AfterInline(start);
    if (!response) return RunOnWorker();
    Write(std::move(*response));
  }

  // Runs here: a write up to its commit, whose engine thread then only hands the rest back to
  // this connection's thread (resume) to finish and answer; a Query or Scan whole when its page
  // is small. A retry, or a larger page, runs on a worker, whose answer is posted here. Its
  // place under the pool's bound is held until the answer.
  void RunInlineAsync(SteadyTime start) {
    const Router& router = *env_.router;
    if (!env_.pool->TryAdmit()) return Write(router.Throttled(request_));
    router.in_flight().Add(1);
    auto executor = stream_.get_executor();
    router.HandleApiAsync(
        request_,
        [self = this->shared_from_this(),
         guard = net::make_work_guard(executor)](HttpResponse response) mutable {
          const Router& router = *self->env_.router;
          WorkerPool& pool = *self->env_.pool;
          auto executor = self->stream_.get_executor();
          // On this connection's thread it writes now; from a worker it is posted.
          net::dispatch(executor,
                        [self = std::move(self), response = std::move(response),
                         guard = std::move(guard)]() mutable { self->Write(std::move(response)); });
          pool.Release();
          router.in_flight().Add(-1);  // after the hand-over: shutdown waits for it (server.cc)
        },
        [inbox = InboxOfThisThread()](std::function<void()> task) {
          inbox->Post(std::move(task));
        });
    AfterInline(start);
  }

  void RunOnWorker() {
    const Router& router = *env_.router;
    // The work guard keeps the io_context running while the operation is on a worker.
    router.in_flight().Add(1);
    auto task = [self = this->shared_from_this(),
                 guard = net::make_work_guard(stream_.get_executor())]() mutable {
      HttpResponse response = self->env_.router->HandleApi(self->request_);
      self->env_.router->in_flight().Add(-1);
      auto executor = self->stream_.get_executor();
      net::post(executor,
                [self = std::move(self), response = std::move(response),
                 guard = std::move(guard)]() mutable { self->Write(std::move(response)); });
    };
    if (!env_.pool->TrySubmit(std::move(task))) {
      router.in_flight().Add(-1);
      Write(router.Throttled(request_));
    }
  }

  // The inbox of the io_context this connection's socket is bound to (Socket's executor).
  Inbox* InboxOfThisThread() {
    if (inbox_ == nullptr) {
      inbox_ = &Inbox::Of(static_cast<net::io_context&>(
          net::query(stream_.get_executor(), net::execution::context)));
    }
    return inbox_;
  }

  // Answers a request that cannot be read to its end, then closes after draining what the
  // client is still sending.
  void Reject(const Error& error, std::string_view target = {}) {
    keep_alive_ = false;
    drain_after_write_ = true;
    Write(env_.router->Rejected(error, target));
  }

  void Write(HttpResponse response) {
    if (response.fault.hold.count() > 0 || response.fault.drop != ResponseFault::Drop::kNone) {
      return WriteFaulted(std::move(response));
    }
    state_ = State::kWriting;
    if (response.request_id.empty()) response.request_id = NewRequestId();
    response_keep_alive_ = keep_alive_ && !closing_;
    response_head_.clear();
    AppendResponseHead(
        {response.status, request_.version() == 10 ? 10u : 11u, HttpDate(), response.content_type,
         response.content_encoding, response.request_id, Crc32(response.body), response.headers,
         response.head_content_length.value_or(response.body.size()), response_keep_alive_},
        &response_head_);
    response_body_ = std::move(response.body);
    if (request_.method() == bhttp::verb::head) response_body_.clear();
    Lowest().expires_after(env_.config->write_timeout);
    if constexpr (kTls) {
      // One buffer: Boost 1.74's beast::flat_stream (under ssl_stream) answers a write whose
      // first buffer is empty, as the second step of a two-buffer write is once the head is
      // out, with 0 bytes, and async_write then stops: a body over 16 KiB was never sent.
      response_head_ += response_body_;
      response_body_ = std::string();
      net::async_write(
          stream_, net::buffer(response_head_),
          [self = this->shared_from_this()](beast::error_code ec, size_t) { self->OnWrite(ec); });
      return;
    }
    const std::array<net::const_buffer, 2> buffers{net::buffer(response_head_),
                                                   net::buffer(response_body_)};
    net::async_write(
        stream_, buffers,
        [self = this->shared_from_this()](beast::error_code ec, size_t) { self->OnWrite(ec); });
  }

  // An answer a fault rule holds (then sends or drops) or drops: the connection is reset (a
  // linger of 0 sends RST) or closed without an answer (http/faults.h).
  void WriteFaulted(HttpResponse response) {
    ResponseFault fault = std::exchange(response.fault, {});
    state_ = State::kWriting;
    if (fault.hold.count() > 0) {
      auto timer = std::make_shared<net::steady_timer>(stream_.get_executor(), fault.hold);
      fault.hold = {};
      timer->async_wait([self = this->shared_from_this(), timer, fault,
                         response = std::move(response)](beast::error_code) mutable {
        response.fault = fault;
        self->Write(std::move(response));
      });
      return;
    }
    beast::error_code ec;
    if (fault.drop == ResponseFault::Drop::kReset) {
      Lowest().socket().set_option(tcp::socket::linger(true, 0), ec);
    } else {
      Lowest().socket().shutdown(tcp::socket::shutdown_both, ec);
    }
    CloseNow();
  }

  void OnWrite(beast::error_code ec) {
    const bool keep = response_keep_alive_;
    response_body_ = std::string();  // a page of up to 1 MB is not kept per connection
    if (response_head_.capacity() > kKeptHeadBytes) response_head_ = std::string();  // TLS
    request_ = {};
    if (ec) return CloseNow();
    if (drain_after_write_) return DrainAndClose();
    if (!keep) return CloseGracefully();
    ReadRequest();
  }

  void DrainAndClose() {
    state_ = State::kClosed;
    beast::error_code ec;
    Lowest().socket().shutdown(tcp::socket::shutdown_send, ec);
    Lowest().expires_after(kDrainTimeout);
    DrainSome();
  }

  void DrainSome() {
    drain_buffer_.resize(64 * 1024);
    Lowest().async_read_some(net::buffer(drain_buffer_),
                             [self = this->shared_from_this()](beast::error_code ec, size_t n) {
                               self->drained_ += n;
                               if (ec || self->drained_ > kMaxDrainBytes) return self->CloseNow();
                               self->DrainSome();
                             });
  }

  void CloseGracefully() {
    state_ = State::kClosed;
    beast::error_code ec;
    Lowest().socket().shutdown(tcp::socket::shutdown_send, ec);
    Lowest().close();
  }

  void CloseNow() {
    state_ = State::kClosed;
    Lowest().close();
  }

  ConnectionEnv env_;
  const bool refuse_;  // at the connection limit: answer 503 and close
  Stream stream_;
  Inbox* inbox_ = nullptr;  // InboxOfThisThread()
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  HttpRequest request_;
  // The response being written: head (status line and headers) and body.
  std::string response_head_;
  std::string response_body_;
  bool response_keep_alive_ = false;
  std::optional<bhttp::response<bhttp::empty_body>> continue_;
  std::string drain_buffer_;
  size_t drained_ = 0;
  State state_ = State::kIdle;
  bool keep_alive_ = true;
  bool closing_ = false;
  bool drain_after_write_ = false;
};

}  // namespace

void SessionTracker::Add(Session* session, std::weak_ptr<Session> weak) {
  std::lock_guard lock(mu_);
  sessions_.emplace(session, std::move(weak));
}

void SessionTracker::Remove(Session* session) {
  std::lock_guard lock(mu_);
  sessions_.erase(session);
  if (sessions_.empty()) empty_cv_.notify_all();
}

void SessionTracker::ShutdownAll() {
  std::vector<std::shared_ptr<Session>> live;
  {
    std::lock_guard lock(mu_);
    for (auto& [ptr, weak] : sessions_) {
      if (auto s = weak.lock()) live.push_back(std::move(s));
    }
  }
  for (auto& s : live) s->Shutdown();
}

bool SessionTracker::WaitEmpty(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mu_);
  return empty_cv_.wait_until(lock, deadline, [&] { return sessions_.empty(); });
}

size_t SessionTracker::size() const {
  std::lock_guard lock(mu_);
  return sessions_.size();
}

void StartPlainSession(Socket socket, const ConnectionEnv& env, bool refuse) {
  beast::error_code ec;
  socket.set_option(tcp::no_delay(true), ec);
  std::make_shared<HttpSession<PlainStream>>(env, refuse, std::move(socket))->Start();
}

void StartTlsSession(Socket socket, net::ssl::context& tls, const ConnectionEnv& env, bool refuse) {
  beast::error_code ec;
  socket.set_option(tcp::no_delay(true), ec);
  std::make_shared<HttpSession<beast::ssl_stream<PlainStream>>>(env, refuse, std::move(socket), tls)
      ->Start();
}

}  // namespace fdyno::http
