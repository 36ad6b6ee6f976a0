// The retry runner's options (kv::RunOptions) for the transactions of one request: the one place
// that turns a request's deadline into them.
#pragma once

#include <chrono>

#include "api/operation.h"
#include "kv/run.h"

namespace fdyno::api {

// The request's deadline and the services' clock; whether the transactions only read; and what
// an operation's services set for tests: a sleep between attempts that advances a manual clock
// (`sleep`, or `options.sleep`) and an attempt limit (`max_attempts`).
template <typename Services>
kv::RunOptions RunOptionsFor(const RequestContext& ctx, const Services& s, bool read_only = false) {
  kv::RunOptions options;
  if (ctx.deadline != std::chrono::steady_clock::time_point{}) options.deadline = ctx.deadline;
  options.clock = s.clock;
  options.read_only = read_only;
  if constexpr (requires { s.sleep; }) options.sleep = s.sleep;
  if constexpr (requires { s.options.sleep; }) options.sleep = s.options.sleep;
  if constexpr (requires { s.max_attempts; }) options.max_attempts = s.max_attempts;
  return options;
}

}  // namespace fdyno::api
