// A background thread that runs one pass of a worker's work, then waits for its interval (or a
// Wake), until stopped. Shared by the workers (index backfill, purge, backups, token GC, TTL,
// streams), so each keeps only its pass; a long pass polls stop_flag() to return early.
//
// Thread-safety: Start, Stop and Wake from any thread; the pass runs on the worker's thread only.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace fdyno::workers {

class Periodic {
 public:
  // `name` names the thread (at most 15 characters). `run_first`: the first pass runs at
  // once rather than after one interval.
  Periodic(std::string name, std::chrono::milliseconds interval, std::function<void()> pass,
           bool run_first = true);
  ~Periodic();  // stops the thread
  Periodic(const Periodic&) = delete;
  Periodic& operator=(const Periodic&) = delete;

  // Starts the thread (no-op when the interval is 0 or it runs already).
  void Start();
  // Stops it and waits for the current pass.
  void Stop();
  // Runs the next pass now rather than at the end of the interval.
  void Wake();
  // Set from Stop() until the next Start(): a long pass checks it between its steps and returns
  // early, leaving the rest to a later pass (or process).
  const std::atomic<bool>* stop_flag() const { return &stop_; }

 private:
  void Loop();

  std::string name_;
  std::chrono::milliseconds interval_;
  std::function<void()> pass_;
  bool run_first_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<bool> stop_{false};  // written under mu_, read by passes without it
  bool woken_ = false;
  std::thread thread_;
};

}  // namespace fdyno::workers
