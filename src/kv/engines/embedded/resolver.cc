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
  if (!steps_.empty() && VersionAt(key) > read_version) return true;
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
  for (auto p = point_log_.rbegin(); p != point_log_.rend() && p->version > read_version; ++p) {
    if (begin <= p->key && p->key < end) return true;
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
  auto it = points_.find(key);
  if (it != points_.end()) {
    // Commits of one batch share its version: the log has this write already.
    if (it->second == version) return;
    it->second = version;
  } else {
    it = points_.emplace(std::string(key), version).first;
  }
  point_log_.push_back({version, it->first});
}

void Resolver::Prune(int64_t horizon) {
  SetPendingHorizon(horizon);
  do {
    PruneStep(boundaries() + point_log_.size() + 1);
  } while (sweeping_ || pending_horizon_ > horizon_ ||
           (!point_log_.empty() && point_log_.front().version <= horizon_));
}

void Resolver::PruneStep(size_t budget) {
  if (!sweeping_ && pending_horizon_ > horizon_) {
    horizon_ = pending_horizon_;
    sweeping_ = true;
    sweep_cursor_.clear();
  }
  budget = ForgetPoints(budget);
  if (sweeping_) SweepSteps(budget);
}

size_t Resolver::ForgetPoints(size_t budget) {
  for (; budget > 0 && !point_log_.empty() && point_log_.front().version <= horizon_; --budget) {
    const PointWrite& w = point_log_.front();
    auto it = points_.find(w.key);
    // Older log entries of a key precede its newest one, so the entry goes with its newest.
    if (it != points_.end() && it->second == w.version) points_.erase(it);
    point_log_.pop_front();
  }
  return budget;
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
    sweeping_ = false;
  } else {
    sweep_cursor_ = it->first;
  }
  return budget;
}

}  // namespace fdyno::kv::embedded
