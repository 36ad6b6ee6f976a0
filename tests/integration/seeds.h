// The seeds and the form of the seeded integration tests: FDYNO_SEED=n replays one seed, and
// FDYNO_FULL=1 selects the long form (docs/testing.md).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace fdyno::integration {

inline bool FullRun() {
  const char* v = std::getenv("FDYNO_FULL");
  return v != nullptr && std::string(v) == "1";
}

// FDYNO_SEED alone when set, else seeds 1 to `ci`, or 1 to `full` in the long form.
inline std::vector<uint64_t> Seeds(uint64_t ci, uint64_t full) {
  if (const char* s = std::getenv("FDYNO_SEED")) return {std::strtoull(s, nullptr, 10)};
  std::vector<uint64_t> out;
  for (uint64_t s = 1; s <= (FullRun() ? full : ci); ++s) out.push_back(s);
  return out;
}

}  // namespace fdyno::integration
