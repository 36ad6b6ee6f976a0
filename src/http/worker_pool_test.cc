#include "http/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>

namespace fdyno::http {
namespace {

// Submits a task that holds the pool's only worker until `release` is set, and returns once it
// runs (false when the pool refused it).
bool OccupyTheOnlyWorker(WorkerPool& pool, std::promise<void>& release) {
  std::shared_future<void> gate = release.get_future().share();
  std::promise<void> started;
  std::future<void> running = started.get_future();
  if (!pool.TrySubmit([&started, gate] {
        started.set_value();
        gate.wait();
      })) {
    return false;
  }
  running.wait();
  return true;
}

TEST(WorkerPoolTest, RunsTasks) {
  WorkerPool pool(3, 100);
  std::atomic<int> done{0};
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(pool.TrySubmit([&] { done++; }));
  pool.Stop();
  EXPECT_EQ(done.load(), 50);
  EXPECT_FALSE(pool.TrySubmit([] {}));
}

// Threads start as tasks wait for them, up to the pool's size: eight tasks that each wait for
// all eight to run at once only finish if the pool started eight threads.
TEST(WorkerPoolTest, ThreadsStartWhenTasksWaitUpToThePoolSize) {
  WorkerPool pool(8, 100);
  EXPECT_EQ(pool.threads(), WorkerPool::kInitialThreads);
  std::atomic<int> running{0};
  std::promise<void> all_running;
  std::shared_future<void> gate = all_running.get_future().share();
  std::atomic<int> done{0};
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(pool.TrySubmit([&, gate] {
      if (++running == 8) all_running.set_value();
      if (gate.wait_for(std::chrono::seconds(10)) == std::future_status::ready) done++;
    }));
  }
  ASSERT_EQ(gate.wait_for(std::chrono::seconds(10)), std::future_status::ready)
      << "the eight tasks never ran at once: " << running << " did, on " << pool.threads()
      << " threads";
  EXPECT_EQ(pool.threads(), 8u);
  pool.Stop();
  EXPECT_EQ(done.load(), 8);
}

TEST(WorkerPoolTest, NoMoreThreadsThanThePoolSize) {
  WorkerPool pool(3, 100);
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(pool.TrySubmit([gate] { gate.wait(); }));
  EXPECT_EQ(pool.threads(), 3u);
  release.set_value();
  pool.Stop();
}

TEST(WorkerPoolTest, RefusesWhenQueueIsFull) {
  WorkerPool pool(1, 2);
  std::promise<void> release;
  ASSERT_TRUE(OccupyTheOnlyWorker(pool, release));
  EXPECT_TRUE(pool.TrySubmit([] {}));
  EXPECT_TRUE(pool.TrySubmit([] {}));
  EXPECT_EQ(pool.queued(), 2u);
  EXPECT_FALSE(pool.TrySubmit([] {}));  // bound reached: refused, not queued
  release.set_value();
  pool.Stop();
  EXPECT_EQ(pool.queued(), 0u);
}

// Operations admitted to run outside the pool share its bound with the waiting tasks.
TEST(WorkerPoolTest, AdmittedOperationsCountAgainstTheBound) {
  WorkerPool pool(1, 2);
  std::promise<void> release;
  ASSERT_TRUE(OccupyTheOnlyWorker(pool, release));
  EXPECT_EQ(pool.load(), 0u);  // running, no longer waiting
  ASSERT_TRUE(pool.TryAdmit());
  ASSERT_TRUE(pool.TrySubmit([] {}));
  EXPECT_EQ(pool.load(), 2u);
  EXPECT_FALSE(pool.TryAdmit());
  EXPECT_FALSE(pool.TrySubmit([] {}));
  pool.Release();
  EXPECT_TRUE(pool.TryAdmit());
  pool.Release();
  // Past the bound, and counted while it waits.
  pool.Submit([] {});
  EXPECT_EQ(pool.load(), 2u);
  EXPECT_FALSE(pool.TryAdmit());
  release.set_value();
  pool.Stop();
  EXPECT_EQ(pool.load(), 0u);
}

}  // namespace
}  // namespace fdyno::http
