// The embedded engine's conflict resolver: remembers, for every key, the newest commit version
// that wrote it (through a write conflict range), for the last few seconds of commits, and
// answers whether a transaction's read conflict ranges intersect a write newer than its read
// version.
//
// Representation: range writes are a step function over the key space: each boundary key b
// maps to the newest range-write version of every key in [b, next boundary); keys before the
// first boundary have version 0 ("no write remembered"). Point writes, nearly all writes, are
// kept apart: one entry per key with its newest version (a point written as a step would need
// two boundaries, key and key + '\0', in a map twice as deep). A key's newest write is the
// newer of its step and its point. A point check is two ordered-map lookups; a range check
// visits the boundaries and the points inside the range. Prune() forgets versions at or below
// a horizon so the maps hold only recent history.
//
// Thread-safety: none; the commit pipeline's committer thread is its only user.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace fdyno::kv::embedded {

struct KeyRange {
  std::string begin;
  std::string end;  // exclusive
};

class Resolver {
 public:
  // True when a write with version > read_version intersects [begin, end) (begin < end).
  bool RangeConflicts(std::string_view begin, std::string_view end, int64_t read_version) const;
  // True when a write with version > read_version covers key.
  bool PointConflicts(std::string_view key, int64_t read_version) const;

  // Records that [begin, end) was written at version. REQUIRES: version >= every version
  // recorded before (commit versions only grow).
  void AddRange(std::string_view begin, std::string_view end, int64_t version);
  void AddPoint(std::string_view key, int64_t version);

  // Forgets every write with version <= horizon, at once (O(boundaries)). A caller must then
  // treat any read version below horizon() as too old, since writes after it may have been
  // forgotten.
  void Prune(int64_t horizon);

  // Incremental pruning for the commit pipeline: SetPendingHorizon() records that writes at or
  // below horizon may be forgotten; PruneStep() visits at most `budget` boundaries of a sweep
  // that forgets them. A sweep fixes its target when it starts, and horizon() becomes that
  // target right away (writes above it are never forgotten, so reads at or above it stay
  // checkable). Cost is bounded per call, so no commit pays for a whole sweep.
  void SetPendingHorizon(int64_t horizon) {
    if (horizon > pending_horizon_) pending_horizon_ = horizon;
  }
  void PruneStep(size_t budget);

  int64_t horizon() const { return horizon_; }
  // Entries held: step boundaries and points.
  size_t boundaries() const { return steps_.size() + points_.size(); }

 private:
  // Version of the step that contains key.
  int64_t VersionAt(std::string_view key) const;
  // One bounded part of a sweep over steps_ (forgetting) and then points_ (erasing); returns
  // the budget left.
  size_t SweepSteps(size_t budget);
  size_t SweepPoints(size_t budget);

  std::map<std::string, int64_t, std::less<>> steps_;
  std::map<std::string, int64_t, std::less<>> points_;
  int64_t horizon_ = 0;          // read versions below it are too old
  int64_t pending_horizon_ = 0;  // the next sweep's target
  enum class Sweep { kIdle, kSteps, kPoints };
  Sweep sweep_ = Sweep::kIdle;
  std::string sweep_cursor_;  // the sweep resumes at the first entry >= this key
};

// The smallest key greater than every key with prefix key: key + '\0'.
inline std::string KeyAfter(std::string_view key) {
  std::string s(key);
  s.push_back('\0');
  return s;
}

}  // namespace fdyno::kv::embedded
