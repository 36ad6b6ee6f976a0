#include "kv/engines/embedded/resolver.h"

#include <algorithm>
#include <cassert>

namespace fdyno::kv::embedded {

int64_t Resolver::VersionAt(std::string_view key) const {
  auto it = steps_.upper_bound(key);
  if (it == steps_.begin()) return 0;
  return std::prev(it)->second;
}

bool Resolver::PointConflicts(std::string_view key, int64_t read_version) const {
  return VersionAt(key) > read_version;
}

bool Resolver::RangeConflicts(std::string_view begin, std::string_view end,
                              int64_t read_version) const {
  if (!(begin < end)) return false;
  auto it = steps_.upper_bound(begin);
  if (it != steps_.begin() && std::prev(it)->second > read_version) return true;
  // Every boundary strictly inside (begin, end) starts a step that intersects the range.
  for (; it != steps_.end() && std::string_view(it->first) < end; ++it) {
    if (it->second > read_version) return true;
  }
  return false;
}

void Resolver::AddRange(std::string_view begin, std::string_view end, int64_t version) {
  if (!(begin < end)) return;
  // Keep the step that resumes at end, then replace every boundary in [begin, end).
  int64_t after = VersionAt(end);
  auto end_it = steps_.lower_bound(end);
  if (end_it == steps_.end() || end_it->first != end) {
    end_it = steps_.emplace_hint(end_it, std::string(end), after);
  }
  auto begin_it = steps_.lower_bound(begin);
  steps_.erase(begin_it, end_it);
  steps_.emplace_hint(end_it, std::string(begin), version);
}

void Resolver::AddPoint(std::string_view key, int64_t version) {
  std::string after_key = KeyAfter(key);
  AddRange(key, after_key, version);
}

void Resolver::Prune(int64_t horizon) {
  if (horizon <= horizon_) return;
  horizon_ = horizon;
  int64_t prev = 0;
  for (auto it = steps_.begin(); it != steps_.end();) {
    if (it->second <= horizon) it->second = 0;
    if (it->second == prev) {
      it = steps_.erase(it);
    } else {
      prev = it->second;
      ++it;
    }
  }
}

}  // namespace fdyno::kv::embedded
