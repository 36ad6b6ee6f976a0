// A fixed set of threads running operations from a bounded queue. When the queue is full,
// TrySubmit refuses the task at once (the caller answers with DynamoDB's throttling error)
// instead of queueing without bound.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace fdyno::http {

class WorkerPool {
 public:
  // REQUIRES: threads >= 1.
  WorkerPool(size_t threads, size_t queue_bound);
  // Stop().
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues a task. False when queue_bound tasks are already waiting, or after Stop().
  bool TrySubmit(std::function<void()> task);
  // Queues a task past the bound: work that must not be refused, such as the retry of a
  // write whose commit may have been applied. After Stop() it runs on a thread of its own.
  void Submit(std::function<void()> task);

  // Refuses new tasks, runs the ones already queued, and joins the threads. Idempotent.
  void Stop();

  size_t queued() const;
  size_t threads() const { return threads_.size(); }
  size_t queue_bound() const { return queue_bound_; }

 private:
  void Loop();

  const size_t queue_bound_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace fdyno::http
