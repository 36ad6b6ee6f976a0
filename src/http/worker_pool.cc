#include "http/worker_pool.h"

#include <algorithm>
#include <cassert>

#include "base/thread_name.h"

namespace fdyno::http {

WorkerPool::WorkerPool(size_t threads, size_t queue_bound)
    : max_threads_(threads), queue_bound_(queue_bound) {
  assert(threads >= 1);
  std::lock_guard lock(mu_);
  while (threads_.size() < std::min(threads, kInitialThreads)) StartThread();
}

void WorkerPool::StartThread() {
  threads_.emplace_back([this] {
    SetThreadName("fdyno-worker");
    Loop();
  });
}

void WorkerPool::Enqueue(std::function<void()> task) {
  queue_.push_back(std::move(task));
  if (queue_.size() > idle_ && threads_.size() < max_threads_) StartThread();
  cv_.notify_one();
}

size_t WorkerPool::threads() const {
  std::lock_guard lock(mu_);
  return threads_.size();
}

WorkerPool::~WorkerPool() { Stop(); }

bool WorkerPool::Reserve() {
  if (load_.fetch_add(1, std::memory_order_relaxed) < queue_bound_) return true;
  load_.fetch_sub(1, std::memory_order_relaxed);
  return false;
}

bool WorkerPool::TryAdmit() { return Reserve(); }

void WorkerPool::Release() { load_.fetch_sub(1, std::memory_order_relaxed); }

bool WorkerPool::TrySubmit(std::function<void()> task) {
  if (!Reserve()) return false;
  {
    std::lock_guard lock(mu_);
    if (stopping_) {
      Release();
      return false;
    }
    Enqueue(std::move(task));
  }
  return true;
}

void WorkerPool::Submit(std::function<void()> task) {
  {
    std::lock_guard lock(mu_);
    if (!stopping_) {
      load_.fetch_add(1, std::memory_order_relaxed);
      Enqueue(std::move(task));
      return;
    }
  }
  std::thread(std::move(task)).detach();
}

void WorkerPool::Stop() {
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;  // no thread starts after this
    threads.swap(threads_);
  }
  cv_.notify_all();
  for (auto& t : threads) t.join();
}

size_t WorkerPool::queued() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

void WorkerPool::Loop() {
  while (true) {
    std::function<void()> task;
    {
      std::unique_lock lock(mu_);
      ++idle_;
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      --idle_;
      if (queue_.empty()) return;  // stopping and drained
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    Release();  // a running task no longer waits
    task();
  }
}

}  // namespace fdyno::http
