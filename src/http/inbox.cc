#include "http/inbox.h"

#include <boost/asio/post.hpp>
#include <utility>

namespace fdyno::http {

Inbox::Inbox(boost::asio::execution_context& context)
    : boost::asio::execution_context::service(context),
      io_(static_cast<boost::asio::io_context&>(context)) {}

void Inbox::Post(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.push_back(std::move(task));
    if (std::exchange(drain_posted_, true)) return;
  }
  boost::asio::post(io_, [this] { Drain(); });
}

void Inbox::Drain() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    running_.swap(tasks_);
    drain_posted_ = false;
  }
  // A task may Post again (a retry's next attempt): that lands in tasks_ and a new drain.
  for (std::function<void()>& task : running_) std::exchange(task, nullptr)();
  running_.clear();
}

void Inbox::shutdown() {
  std::vector<std::function<void()>> tasks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks.swap(tasks_);
  }
  running_.clear();
}

}  // namespace fdyno::http
