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
  // [key, key + '\0') holds no other key, so one lookup finds everything this needs: the
  // boundary at key (if any), and right after it the boundary at key + '\0' (if any).
  auto is_after_key = [key](const std::string& b) {
    return b.size() == key.size() + 1 && b.back() == '\0' && b.compare(0, key.size(), key) == 0;
  };
  auto it = steps_.lower_bound(key);
  if (it != steps_.end() && it->first == key) {
    auto next = std::next(it);
    if (next == steps_.end() || !is_after_key(next->first)) {
      steps_.emplace_hint(next, KeyAfter(key), it->second);
    }
    it->second = version;
    return;
  }
  int64_t before = it == steps_.begin() ? 0 : std::prev(it)->second;
  if (it == steps_.end() || !is_after_key(it->first)) {
    it = steps_.emplace_hint(it, KeyAfter(key), before);
  }
  steps_.emplace_hint(it, std::string(key), version);
}

void Resolver::Prune(int64_t horizon) {
  SetPendingHorizon(horizon);
  do {
    PruneStep(steps_.size() + 1);
  } while (sweeping_ || pending_horizon_ > horizon_);
}

void Resolver::PruneStep(size_t budget) {
  if (!sweeping_) {
    if (pending_horizon_ <= horizon_) return;
    horizon_ = pending_horizon_;
    sweeping_ = true;
    sweep_cursor_.clear();
  }
  auto it = steps_.lower_bound(sweep_cursor_);
  int64_t prev = it == steps_.begin() ? 0 : std::prev(it)->second;
  for (; budget > 0 && it != steps_.end(); --budget) {
    if (it->second <= horizon_) it->second = 0;
    if (it->second == prev) {
      it = steps_.erase(it);  // same version as the step before: not a boundary any more
    } else {
      prev = it->second;
      ++it;
    }
  }
  if (it == steps_.end()) {
    sweeping_ = false;
  } else {
    sweep_cursor_ = it->first;
  }
}

}  // namespace fdyno::kv::embedded
