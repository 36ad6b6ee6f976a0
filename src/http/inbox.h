// Tasks handed to a network thread from other threads (the engine's commit thread finishing a
// batch of writes), run there in arrival order. One Inbox per io_context (an asio service):
// a hand-over appends to a vector under a mutex and posts one drain to the io_context only when
// none is pending, so a commit batch of N writes costs one post instead of N (each a scheduler
// lock, a wake-up check and a handler allocation on the commit thread).
//
// Thread-safety: Post from any thread; the drain runs on the io_context's thread(s). Tasks
// still queued when the io_context is destroyed are destroyed without running, as posted
// handlers are.
#pragma once

#include <boost/asio/execution_context.hpp>
#include <boost/asio/io_context.hpp>
#include <functional>
#include <mutex>
#include <vector>

namespace fdyno::http {

class Inbox : public boost::asio::execution_context::service {
 public:
  using key_type = Inbox;
  static inline boost::asio::execution_context::id id;

  explicit Inbox(boost::asio::execution_context& context);

  // The io_context's inbox, created on first use.
  static Inbox& Of(boost::asio::io_context& io) { return boost::asio::use_service<Inbox>(io); }

  void Post(std::function<void()> task);

 private:
  void shutdown() override;
  void Drain();

  boost::asio::io_context& io_;
  std::mutex mu_;
  std::vector<std::function<void()>> tasks_;    // guarded by mu_
  bool drain_posted_ = false;                   // guarded by mu_
  std::vector<std::function<void()>> running_;  // the drain's batch (io_context thread only)
};

}  // namespace fdyno::http
