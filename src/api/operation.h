// The shape every DynamoDB operation handler has: it receives the request context and the
// parsed JSON body, and returns the rendered JSON response body or a DynamoDB error.
// A handler validates all input before any I/O, plans, runs in one kv::Run, renders.
#pragma once

#include <rapidjson/document.h>

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/result.h"

namespace fdyno::api {

// Identity, deadline and clock of one request. Passed by const reference to every handler.
struct RequestContext {
  std::string account_id = "000000000001";  // caller's AWS account (scopes tokens, ARNs)
  std::string region = "us-east-1";
  std::string request_id;
  std::string access_key_id;  // who signed the request (any key in open mode)
  std::string endpoint_host;  // the Host header the client used (DescribeEndpoints answers it)
  std::chrono::steady_clock::time_point deadline;  // whole-operation budget
  Clock* clock = Clock::Real();
  // Runs a task on a thread that may block (the worker pool). Null: on the calling thread.
  std::function<void(std::function<void()>)> blocking;
  // AsyncHandler only: runs a task later on this request's network thread, so the work after
  // a commit happens there, not on the engine's commit thread. Null: wherever the commit ends.
  std::function<void(std::function<void()>)> resume;
};

// Returns the response body (JSON text) or a DynamoDB error.
using Handler =
    std::function<Result<std::string>(const RequestContext& ctx, const rapidjson::Value& body)>;

// Receives what a Handler would have returned. Called exactly once, possibly on another thread
// (an engine's commit thread) after the handler returned, so it must be short.
using Respond = std::function<void(Result<std::string>)>;
// The same operation answering through `respond` without waiting for its commit: it runs up
// to the commit on the calling thread (a network thread). Everything it needs from ctx and
// body is copied before it returns.
using AsyncHandler =
    std::function<void(const RequestContext& ctx, const rapidjson::Value& body, Respond respond)>;

// A Handler that calls fn(*services, ctx, body): how an operation family registers its functions
// over the services they share (held by the handler, so they live as long as the registry).
template <typename ServicesPtr, typename Fn>
Handler Bind(ServicesPtr services, Fn fn) {
  return [services = std::move(services), fn](const RequestContext& ctx,
                                              const rapidjson::Value& body) {
    return fn(*services, ctx, body);
  };
}

// Which X-Amz-Target prefix an operation answers to.
enum class Service {
  kDynamoDB,  // "DynamoDB_20120810.<Operation>"
  kStreams,   // "DynamoDBStreams_20120810.<Operation>"
};

// Operation name ("PutItem") -> handler. Filled at start-up, then read-only (thread-safe).
class OperationRegistry {
 public:
  // A DynamoDB operation. REQUIRES: name not yet registered.
  void Register(std::string name, Handler handler);
  // An operation of the given service. REQUIRES: not yet registered for that service.
  void Register(Service service, std::string name, Handler handler);
  // The asynchronous form of a DynamoDB operation. REQUIRES: Register(name, ...) before.
  void RegisterAsync(std::string_view name, AsyncHandler handler);
  // Null when the operation is not (yet) implemented.
  const Handler* Find(std::string_view name) const;
  const Handler* Find(Service service, std::string_view name) const;
  // Null when the DynamoDB operation has no asynchronous form.
  const AsyncHandler* FindAsync(std::string_view name) const;
  // Registered operation names of a service, sorted.
  std::vector<std::string> Names(Service service) const;
  // Replaces every DynamoDB handler by wrap(name, handler) and every asynchronous form by
  // wrap_async(name, handler): what runs before every operation (api/policy_guard.h).
  void WrapAll(
      const std::function<Handler(const std::string& name, Handler)>& wrap,
      const std::function<AsyncHandler(const std::string& name, AsyncHandler)>& wrap_async);

 private:
  std::map<std::string, Handler, std::less<>> handlers_;
  std::map<std::string, Handler, std::less<>> streams_handlers_;
  std::map<std::string, AsyncHandler, std::less<>> async_handlers_;
};

}  // namespace fdyno::api
