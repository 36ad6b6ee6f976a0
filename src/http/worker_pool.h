// Up to a fixed number of threads running operations from a bounded queue, and the admission
// bound that sheds load.
//
// Threads start on demand: a task queued while more tasks wait than threads are idle starts one
// more, up to the pool's size, and started threads stay until Stop(). An idle server so runs a
// few workers, not its 32 or more (each a stack, and the allocator's cache for it).
//
// The bound counts tasks waiting for a worker and operations admitted to run elsewhere (on a
// network thread, TryAdmit): when it is reached, TrySubmit and TryAdmit refuse at once (the
// caller answers with DynamoDB's throttling error) instead of queueing without bound or running
// everything inline.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <atomic>
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
  // Starts min(threads, kInitialThreads) threads. REQUIRES: threads >= 1.
  WorkerPool(size_t threads, size_t queue_bound);
  static constexpr size_t kInitialThreads = 2;
  // Stop().
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues a task. False when the bound is reached (see load()), or after Stop().
  bool TrySubmit(std::function<void()> task);
  // Queues a task past the bound: work that must not be refused, such as the retry of a
  // write whose commit may have been applied. It counts in load() while it waits. After
  // Stop() it runs on a thread of its own.
  void Submit(std::function<void()> task);

  // Admits an operation that runs outside the pool (on a network thread): true when the bound
  // is not reached, and the caller must then Release() once the operation is answered; false:
  // the caller sheds it (ThrottlingException).
  bool TryAdmit();
  void Release();

  // Refuses new tasks, runs the ones already queued, and joins the threads. Idempotent.
  void Stop();

  size_t queued() const;
  // Tasks waiting for a worker plus operations admitted and not released: refused past
  // queue_bound().
  size_t load() const { return load_.load(std::memory_order_relaxed); }
  // Threads started so far, and the most the pool starts.
  size_t threads() const;
  size_t max_threads() const { return max_threads_; }
  size_t queue_bound() const { return queue_bound_; }

 private:
  void Loop();
  // Starts one more thread. REQUIRES: mu_ held, threads_.size() < max_threads_.
  void StartThread();
  // Queues a task and starts a thread when more tasks wait than threads are idle.
  // REQUIRES: mu_ held, !stopping_.
  void Enqueue(std::function<void()> task);
  // Takes a place under the bound; false (nothing taken) when it is reached.
  bool Reserve();

  const size_t max_threads_;
  const size_t queue_bound_;
  std::atomic<size_t> load_{0};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  size_t idle_ = 0;                   // threads waiting for a task
  std::vector<std::thread> threads_;  // grows under mu_ until stopping_
};

}  // namespace fdyno::http
