#include "http/inbox.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <memory>
#include <thread>
#include <vector>

namespace fdyno::http {
namespace {

// Tasks from several threads all run on the io_context's thread, each thread's in the order it
// posted them, and tasks posted by a running task run too.
TEST(InboxTest, RunsEveryTaskOnTheIoThreadInPostOrder) {
  boost::asio::io_context io(1);
  auto guard = boost::asio::make_work_guard(io);
  std::thread runner([&] { io.run(); });
  const std::thread::id io_thread = runner.get_id();
  constexpr int kThreads = 4, kPerThread = 2000;
  std::vector<std::vector<int>> seen(kThreads);  // touched on the io thread only
  std::atomic<int> wrong_thread{0};
  std::atomic<int> done{0};
  Inbox& inbox = Inbox::Of(io);
  std::vector<std::thread> posters;
  for (int t = 0; t < kThreads; ++t) {
    posters.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        inbox.Post([&, t, i] {
          if (std::this_thread::get_id() != io_thread) ++wrong_thread;
          seen[t].push_back(i);
          if (i == kPerThread - 1) {
            // A task that posts again: runs in a later drain.
            inbox.Post([&] { ++done; });
          }
        });
      }
    });
  }
  for (auto& p : posters) p.join();
  while (done.load() < kThreads) std::this_thread::yield();
  guard.reset();
  runner.join();
  EXPECT_EQ(wrong_thread.load(), 0);
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(seen[t].size(), static_cast<size_t>(kPerThread));
    for (int i = 0; i < kPerThread; ++i) ASSERT_EQ(seen[t][i], i);
  }
}

// A task still queued when its io_context goes away is destroyed without running.
TEST(InboxTest, QueuedTasksAreDestroyedWithTheIoContext) {
  auto alive = std::make_shared<int>(0);
  bool ran = false;
  {
    boost::asio::io_context io(1);
    Inbox::Of(io).Post([alive, &ran] { ran = true; });
    EXPECT_EQ(alive.use_count(), 2);
  }
  EXPECT_FALSE(ran);
  EXPECT_EQ(alive.use_count(), 1);
}

}  // namespace
}  // namespace fdyno::http
