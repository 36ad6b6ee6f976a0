#include "http/server.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "base/log_limiter.h"
#include "base/thread_name.h"
#include "http/connection.h"
#include "http/resolve.h"
#include "http/tls.h"
#include "http/worker_pool.h"

namespace fdyno::http {
namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;

// Accepts connections on the first network thread's io_context and spreads them over all of
// them, round robin: each connection then runs on one thread, without a strand.
//
// Past ServerConfig::max_connections a connection is still accepted, but only to answer its
// request with 503 ServiceUnavailable and close, up to kRefusingSessions such answers at once;
// beyond those it is closed at once. When accept itself fails for want of a file descriptor
// (or kernel memory), the listener pauses, doubling the pause up to kMaxAcceptPause, instead of
// retrying at once: the pending connection keeps the socket readable, so an immediate retry
// spins a core and floods the log.
class Listener {
 public:
  Listener(const std::vector<std::unique_ptr<net::io_context>>& iocs, const ConnectionEnv& env,
           net::ssl::context* tls)
      : iocs_(iocs), acceptor_(*iocs.front()), pause_(*iocs.front()), env_(env), tls_(tls) {}

  Status Bind(const Endpoint& endpoint) {
    FDYNO_ASSIGN_OR_RETURN(tcp::endpoint ep,
                           ResolveEndpoint(*iocs_.front(), endpoint, /*passive=*/true));
    boost::system::error_code ec;
    acceptor_.open(ep.protocol(), ec);
    if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(ep, ec);
    if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
    if (ec)
      return Error::Validation("cannot listen on " + endpoint.ToString() + ": " + ec.message());
    bound_ = {ep.address().to_string(), acceptor_.local_endpoint().port()};
    return Status::Ok();
  }

  void Start() { Accept(); }

  void Close() {
    net::post(acceptor_.get_executor(), [this] {
      boost::system::error_code ec;
      acceptor_.close(ec);
      pause_.cancel();
    });
  }

  const Endpoint& bound() const { return bound_; }

 private:
  static constexpr size_t kRefusingSessions = 64;
  static constexpr std::chrono::milliseconds kMinAcceptPause{5};
  static constexpr std::chrono::milliseconds kMaxAcceptPause{1000};
  static constexpr std::chrono::seconds kLogPeriod{10};

  void Accept() {
    net::io_context& target = *iocs_[next_++ % iocs_.size()];
    acceptor_.async_accept(target, [this](boost::system::error_code ec, Socket socket) {
      if (ec == net::error::operation_aborted || !acceptor_.is_open()) return;
      if (ec) return OnAcceptError(ec);
      accept_pause_ = std::chrono::milliseconds(0);
      Serve(std::move(socket));
      Accept();
    });
  }

  void Serve(Socket socket) {
    const size_t open = env_.tracker->size();
    const size_t cap = env_.config->max_connections;
    bool refuse = false;
    if (cap != 0 && open >= cap) {
      if (auto left_out = refused_log_.Allow()) {
        spdlog::warn(
            "connection limit reached ({} open, --max-connections {}): new connections get "
            "503 ServiceUnavailable{}",
            open, cap, Suppressed(*left_out));
      }
      if (open >= cap + kRefusingSessions) return;  // closed by the socket's destructor
      refuse = true;
    }
    if (tls_) {
      StartTlsSession(std::move(socket), *tls_, env_, refuse);
    } else {
      StartPlainSession(std::move(socket), env_, refuse);
    }
  }

  void OnAcceptError(boost::system::error_code ec) {
    const bool out_of_resources = ec == net::error::no_descriptors ||
                                  ec == boost::system::errc::too_many_files_open_in_system ||
                                  ec == net::error::no_buffer_space || ec == net::error::no_memory;
    if (!out_of_resources) {
      if (auto left_out = error_log_.Allow()) {
        spdlog::warn("accept: {}{}", ec.message(), Suppressed(*left_out));
      }
      return Accept();
    }
    accept_pause_ = std::clamp(2 * accept_pause_, kMinAcceptPause, kMaxAcceptPause);
    if (auto left_out = error_log_.Allow()) {
      spdlog::warn(
          "accept: {} (out of file descriptors: {} connections open); pausing accepts for up to "
          "{} ms at a time{}",
          ec.message(), env_.tracker->size(), kMaxAcceptPause.count(), Suppressed(*left_out));
    }
    pause_.expires_after(accept_pause_);
    pause_.async_wait([this](boost::system::error_code wait_ec) {
      if (wait_ec || !acceptor_.is_open()) return;
      Accept();
    });
  }

  static std::string Suppressed(int64_t left_out) {
    if (left_out == 0) return "";
    return " (" + std::to_string(left_out) + " more since the last such line)";
  }

  const std::vector<std::unique_ptr<net::io_context>>& iocs_;
  size_t next_ = 0;  // used by the first io_context's thread only
  tcp::acceptor acceptor_;
  net::steady_timer pause_;
  std::chrono::milliseconds accept_pause_{0};
  LogLimiter error_log_{kLogPeriod};
  LogLimiter refused_log_{kLogPeriod};
  ConnectionEnv env_;
  net::ssl::context* tls_;
  Endpoint bound_;
};

class ServerImpl : public Server {
 public:
  ServerImpl(const ServerConfig& config, const api::OperationRegistry& registry,
             const RouterOptions& router_options)
      : config_(config), pool_(std::max<size_t>(1, config.workers), config.queue_bound) {
    // One io_context per network thread: a connection's handlers all run on its thread, so
    // they need no strand, and each thread waits on its own epoll set.
    for (size_t i = 0; i < std::max<size_t>(1, config.io_threads); ++i) {
      iocs_.push_back(std::make_unique<net::io_context>(1));
      // Keeps run() going while a thread has no connection yet.
      keep_running_.push_back(net::make_work_guard(*iocs_.back()));
    }
    if (config.mcp_listen && router_options.mcp != nullptr) {
      RouterOptions mcp_options = router_options;
      mcp_options.faults = nullptr;
      mcp_options.s3 = nullptr;
      mcp_options.blocking = [this](std::function<void()> task) { pool_.Submit(std::move(task)); };
      mcp_router_ = std::make_unique<Router>(registry, mcp_options);
    }
    RouterOptions data_options = router_options;
    data_options.mcp = nullptr;
    data_options.max_body_bytes = config.max_body_bytes;
    // Retries of network-thread writes, which must not be refused: past the queue bound.
    data_options.blocking = [this](std::function<void()> task) { pool_.Submit(std::move(task)); };
    data_options.serve_metrics = !config.admin_listen.has_value();
    data_options.serve_console =
        !config.admin_listen.has_value() &&
        (router_options.credentials == nullptr || router_options.credentials->empty()) &&
        IsLoopbackHost(config.listen.host);
    data_router_ = std::make_unique<Router>(registry, data_options);
    RouterOptions admin_options = router_options;
    admin_options.mcp = nullptr;
    admin_options.serve_metrics = true;
    admin_options.serve_fault_api = true;
    admin_options.serve_api = false;  // but the console's calls (RouterOptions::serve_console)
    admin_options.serve_console = true;
    admin_options.s3 = nullptr;
    admin_options.max_body_bytes = config.max_body_bytes;
    admin_options.blocking = data_options.blocking;
    admin_router_ = std::make_unique<Router>(registry, admin_options);
  }

  ~ServerImpl() override {
    Shutdown();
    StopNetwork();
    pool_.Stop();
  }

  Status Init(bool handle_signals) {
    if (!config_.tls_cert_file.empty() || !config_.tls_key_file.empty()) {
      if (config_.tls_cert_file.empty() || config_.tls_key_file.empty()) {
        return Error::Validation("--tls-cert and --tls-key must be given together");
      }
      FDYNO_ASSIGN_OR_RETURN(tls_,
                             MakeServerTlsContext(config_.tls_cert_file, config_.tls_key_file));
    }
    ConnectionEnv data_env{data_router_.get(), &pool_, &config_, &tracker_};
    data_ = std::make_unique<Listener>(iocs_, data_env, tls_.get());
    FDYNO_RETURN_IF_ERROR(data_->Bind(config_.listen));
    if (config_.admin_listen) {
      ConnectionEnv admin_env{admin_router_.get(), &pool_, &config_, &tracker_};
      admin_ = std::make_unique<Listener>(iocs_, admin_env, tls_.get());
      FDYNO_RETURN_IF_ERROR(admin_->Bind(*config_.admin_listen));
    }
    if (config_.mcp_listen) {
      if (mcp_router_ == nullptr) return Error::Validation("--mcp-listen needs an MCP session");
      ConnectionEnv mcp_env{mcp_router_.get(), &pool_, &config_, &tracker_};
      mcp_ = std::make_unique<Listener>(iocs_, mcp_env, tls_.get());
      FDYNO_RETURN_IF_ERROR(mcp_->Bind(*config_.mcp_listen));
    }
    if (handle_signals) {
      signals_ = std::make_unique<net::signal_set>(*iocs_.front(), SIGINT, SIGTERM);
      signals_->async_wait([this](boost::system::error_code ec, int signal) {
        if (ec) return;
        spdlog::info("received signal {}, shutting down", signal);
        Shutdown();
      });
    }
    return Status::Ok();
  }

  Endpoint data_endpoint() const override { return data_->bound(); }
  std::optional<Endpoint> admin_endpoint() const override {
    if (!admin_) return std::nullopt;
    return admin_->bound();
  }
  std::optional<Endpoint> mcp_endpoint() const override {
    if (!mcp_) return std::nullopt;
    return mcp_->bound();
  }

  void Run() override {
    data_->Start();
    if (admin_) admin_->Start();
    if (mcp_) mcp_->Start();
    for (auto& ioc : iocs_) {
      threads_.emplace_back([ioc = ioc.get()] {
        SetThreadName("fdyno-net");
        ioc->run();
      });
    }

    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return shutdown_; });
    }
    // Stop accepting, then let every session finish the request it is answering.
    data_->Close();
    if (admin_) admin_->Close();
    if (mcp_) mcp_->Close();
    if (signals_) {
      net::post(*iocs_.front(), [this] {
        boost::system::error_code ec;
        signals_->cancel(ec);
      });
    }
    tracker_.ShutdownAll();
    auto deadline = std::chrono::steady_clock::now() + config_.drain_timeout;
    if (!tracker_.WaitEmpty(deadline)) {
      spdlog::warn("shutdown: {} connection(s) still open after {} ms, closing them",
                   tracker_.size(), config_.drain_timeout.count());
    }
    // An operation still in flight (a write whose commit is in the engine, a page a worker is
    // reading) answers into an io_context: they must stay alive until then. Commits finish
    // (the engine drains its queue) and workers keep running, so this ends.
    for (int waited_s = 0; data_router_->in_flight().value() > 0; ++waited_s) {
      if (waited_s % 5 == 4) {
        spdlog::warn("shutdown: waiting for {} operation(s) in flight",
                     data_router_->in_flight().value());
      }
      for (int i = 0; i < 100 && data_router_->in_flight().value() > 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    StopNetwork();
    pool_.Stop();
  }

  // Stops the network threads and joins them. Idempotent.
  void StopNetwork() {
    keep_running_.clear();
    for (auto& ioc : iocs_) ioc->stop();
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
    threads_.clear();
  }

  void Shutdown() override {
    {
      std::lock_guard lock(mu_);
      shutdown_ = true;
    }
    cv_.notify_all();
  }

 private:
  ServerConfig config_;
  // Declared before the io_context: sessions destroyed with it still reach the tracker.
  SessionTracker tracker_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool shutdown_ = false;
  std::unique_ptr<Router> data_router_;
  std::unique_ptr<Router> admin_router_;
  std::unique_ptr<Router> mcp_router_;  // with --mcp-listen
  std::unique_ptr<net::ssl::context> tls_;
  std::vector<std::unique_ptr<net::io_context>> iocs_;
  std::vector<net::executor_work_guard<net::io_context::executor_type>> keep_running_;
  WorkerPool pool_;
  std::unique_ptr<net::signal_set> signals_;
  std::unique_ptr<Listener> data_;
  std::unique_ptr<Listener> admin_;
  std::unique_ptr<Listener> mcp_;
  std::vector<std::thread> threads_;
};

}  // namespace

Result<std::unique_ptr<Server>> Server::Create(const ServerConfig& config,
                                               const api::OperationRegistry& registry,
                                               const RouterOptions& router_options,
                                               bool handle_signals) {
  auto server = std::make_unique<ServerImpl>(config, registry, router_options);
  FDYNO_RETURN_IF_ERROR(server->Init(handle_signals));
  return std::unique_ptr<Server>(std::move(server));
}

}  // namespace fdyno::http
