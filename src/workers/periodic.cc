#include "workers/periodic.h"

#include <utility>

#include "base/thread_name.h"

namespace fdyno::workers {

Periodic::Periodic(std::string name, std::chrono::milliseconds interval, std::function<void()> pass,
                   bool run_first)
    : name_(std::move(name)), interval_(interval), pass_(std::move(pass)), run_first_(run_first) {}

Periodic::~Periodic() { Stop(); }

void Periodic::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (interval_.count() <= 0 || thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] {
    SetThreadName(name_.c_str());
    Loop();
  });
}

void Periodic::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Periodic::Wake() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    woken_ = true;
  }
  cv_.notify_all();
}

void Periodic::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  bool first = true;
  while (!stop_) {
    if (!(first && run_first_)) {
      cv_.wait_for(lock, interval_, [this] { return stop_ || woken_; });
      if (stop_) break;
    }
    first = false;
    woken_ = false;
    lock.unlock();
    pass_();  // errors are the pass's to log; the next pass retries
    lock.lock();
  }
}

}  // namespace fdyno::workers
