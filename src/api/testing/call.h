// Calling operation handlers from tests the way the router does after parsing the body.
// Test-only: reports bad test input with gtest's ADD_FAILURE.
#pragma once

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "api/operation.h"
#include "base/result.h"

namespace fdyno::api::testing {

// Runs operation `op` of `registry` on the JSON request `json` with `ctx` (a deadline 30 s
// after ctx.clock's now when it has none). A malformed request or an unregistered operation fails
// the test. Parses a test request (failing the test when it is malformed) and gives ctx its
// deadline.
inline Status PrepareCall(const std::string& json, rapidjson::Document* doc, RequestContext* ctx) {
  doc->Parse(json.c_str(), json.size());
  if (doc->HasParseError()) {
    ADD_FAILURE() << "bad request JSON: " << json.substr(0, 300);
    return Error::Validation("bad test request JSON");
  }
  if (ctx->deadline == std::chrono::steady_clock::time_point{}) {
    ctx->deadline = ctx->clock->Now() + std::chrono::seconds(30);
  }
  return Status::Ok();
}

inline Result<std::string> CallOperation(const OperationRegistry& registry, const std::string& op,
                                         const std::string& json, RequestContext ctx = {}) {
  rapidjson::Document doc;
  FDYNO_RETURN_IF_ERROR(PrepareCall(json, &doc, &ctx));
  const Handler* h = registry.Find(op);
  if (h == nullptr) {
    ADD_FAILURE() << op << " is not registered";
    return Error::Validation("no handler for " + op);
  }
  return (*h)(ctx, doc);
}

// Fulfils a promise when destroyed: held by a respond callback, it tells when the handler has
// let go of every copy of it, after which respond can never be called again.
struct RespondReleased {
  std::promise<void> released;
  ~RespondReleased() { released.set_value(); }
};

// CallOperation through the operation's asynchronous form (OperationRegistry::FindAsync),
// waiting for its answer; fails the test unless respond is called exactly once (checked once
// the handler released respond) and released within 30 s of the answer.
inline Result<std::string> CallOperationAsync(const OperationRegistry& registry,
                                              const std::string& op, const std::string& json,
                                              RequestContext ctx = {}) {
  rapidjson::Document doc;
  FDYNO_RETURN_IF_ERROR(PrepareCall(json, &doc, &ctx));
  const AsyncHandler* h = registry.FindAsync(op);
  if (h == nullptr) {
    ADD_FAILURE() << op << " has no asynchronous form";
    return Error::Validation("no asynchronous handler for " + op);
  }
  auto answer = std::make_shared<std::promise<Result<std::string>>>();
  auto calls = std::make_shared<std::atomic<int>>(0);
  auto signal = std::make_shared<RespondReleased>();
  std::future<void> released = signal->released.get_future();
  std::future<Result<std::string>> result = answer->get_future();
  (*h)(ctx, doc, [answer, calls, signal](Result<std::string> r) {
    if (calls->fetch_add(1) == 0) answer->set_value(std::move(r));
  });
  signal.reset();
  doc.SetNull();  // the handler copied what it needs before returning
  Result<std::string> r = result.get();
  EXPECT_EQ(released.wait_for(std::chrono::seconds(30)), std::future_status::ready)
      << op << " kept its respond callback after answering";
  EXPECT_EQ(calls->load(), 1) << op << " answered more than once";
  return r;
}

// A RequestContext::blocking for tests: each task runs on a thread of its own, and every thread
// is joined when this is destroyed. A retry's thread still releases its transaction after the
// request was answered; declared in the test body, this makes sure it has before the fixture's
// TearDown closes the engine (a detached thread did so after, and crashed in RocksDB).
class BlockingThreads {
 public:
  BlockingThreads() = default;
  BlockingThreads(const BlockingThreads&) = delete;
  BlockingThreads& operator=(const BlockingThreads&) = delete;
  ~BlockingThreads() { JoinAll(); }

  std::function<void(std::function<void()>)> Blocking() {
    return [this](std::function<void()> task) {
      std::lock_guard<std::mutex> lock(mu_);
      ++started_;
      threads_.emplace_back(std::move(task));
    };
  }
  // Tasks started so far.
  int started() {
    std::lock_guard<std::mutex> lock(mu_);
    return started_;
  }
  void JoinAll() {
    for (;;) {  // a task may start another
      std::vector<std::thread> running;
      {
        std::lock_guard<std::mutex> lock(mu_);
        running.swap(threads_);
      }
      if (running.empty()) return;
      for (std::thread& t : running) t.join();
    }
  }

 private:
  std::mutex mu_;
  int started_ = 0;
  std::vector<std::thread> threads_;
};

// CallOperation with the response parsed.
inline Result<rapidjson::Document> CallOperationJson(const OperationRegistry& registry,
                                                     const std::string& op, const std::string& json,
                                                     RequestContext ctx = {}) {
  FDYNO_ASSIGN_OR_RETURN(std::string body, CallOperation(registry, op, json, std::move(ctx)));
  rapidjson::Document doc;
  doc.Parse(body.c_str(), body.size());
  EXPECT_FALSE(doc.HasParseError()) << body;
  return doc;
}

}  // namespace fdyno::api::testing
