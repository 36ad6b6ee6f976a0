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
  if (VersionAt(key) > read_version) return true;
  auto it = points_.find(key);
  return it != points_.end() && it->second > read_version;
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
  for (auto p = points_.lower_bound(begin); p != points_.end() && std::string_view(p->first) < end;
       ++p) {
    if (p->second > read_version) return true;
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
  auto it = points_.lower_bound(key);
  if (it != points_.end() && it->first == key) {
    it->second = version;
  } else {
    points_.emplace_hint(it, std::string(key), version);
  }
}

void Resolver::Prune(int64_t horizon) {
  SetPendingHorizon(horizon);
  do {
    PruneStep(boundaries() + 1);
  } while (sweep_ != Sweep::kIdle || pending_horizon_ > horizon_);
}

void Resolver::PruneStep(size_t budget) {
  if (sweep_ == Sweep::kIdle) {
    if (pending_horizon_ <= horizon_) return;
    horizon_ = pending_horizon_;
    sweep_ = Sweep::kSteps;
    sweep_cursor_.clear();
  }
  if (sweep_ == Sweep::kSteps) {
    budget = SweepSteps(budget);
    if (sweep_ == Sweep::kSteps) return;
  }
  SweepPoints(budget);
}

size_t Resolver::SweepSteps(size_t budget) {
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
    sweep_ = Sweep::kPoints;
    sweep_cursor_.clear();
  } else {
    sweep_cursor_ = it->first;
  }
  return budget;
}

size_t Resolver::SweepPoints(size_t budget) {
  auto it = points_.lower_bound(sweep_cursor_);
  for (; budget > 0 && it != points_.end(); --budget) {
    if (it->second <= horizon_) {
      it = points_.erase(it);
    } else {
      ++it;
    }
  }
  if (it == points_.end()) {
    sweep_ = Sweep::kIdle;
  } else {
    sweep_cursor_ = it->first;
  }
  return budget;
}

}  // namespace fdyno::kv::embedded
