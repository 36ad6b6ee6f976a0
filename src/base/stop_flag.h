#pragma once

#include <atomic>

namespace fdyno {

// Whether long work was asked to return early, leaving the rest for later: it polls a flag
// between its steps (workers/periodic.h stop_flag()). Null: never.
inline bool StopRequested(const std::atomic<bool>* stop) {
  return stop != nullptr && stop->load(std::memory_order_relaxed);
}

}  // namespace fdyno
