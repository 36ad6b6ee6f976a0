#include "http/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>

namespace fdyno::http {
namespace {

TEST(WorkerPoolTest, RunsTasks) {
  WorkerPool pool(3, 100);
  std::atomic<int> done{0};
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(pool.TrySubmit([&] { done++; }));
  pool.Stop();
  EXPECT_EQ(done.load(), 50);
  EXPECT_FALSE(pool.TrySubmit([] {}));
}

TEST(WorkerPoolTest, RefusesWhenQueueIsFull) {
  WorkerPool pool(1, 2);
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::promise<void> started;
  ASSERT_TRUE(pool.TrySubmit([&, gate] {
    started.set_value();
    gate.wait();
  }));
  started.get_future().wait();  // the only worker is now busy
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
  std::shared_future<void> gate = release.get_future().share();
  std::promise<void> started;
  ASSERT_TRUE(pool.TrySubmit([&, gate] {
    started.set_value();
    gate.wait();
  }));
  started.get_future().wait();
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
