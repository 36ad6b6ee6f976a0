// The seed of a seeded random test: FDYNO_SEED when set (to replay a run), else a fresh one. A
// test prints the seed it used (SCOPED_TRACE or its output) so that a failure can be replayed.
// Test-only.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <random>

namespace fdyno::test {

inline uint64_t Seed() {
  if (const char* s = std::getenv("FDYNO_SEED")) return std::strtoull(s, nullptr, 10);
  return std::random_device{}();
}

}  // namespace fdyno::test
