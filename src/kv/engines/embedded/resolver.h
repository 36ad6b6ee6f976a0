// The embedded engine's conflict resolver: remembers, for every key, the newest commit version
// that wrote it (through a write conflict range), for as long as a live transaction may conflict
// with it (the commit pipeline sets the horizon: at most 5 s), and
// answers whether a transaction's read conflict ranges intersect a write newer than its read
// version.
//
// Representation: range writes are a step function over the key space: each boundary key b
// maps to the newest range-write version of every key in [b, next boundary); keys before the
// first boundary have version 0 ("no write remembered"). Point writes, nearly all writes, are
// kept apart, in a hash map from key to its newest version, plus a log of (version, key) in
// commit order. A key's newest write is the newer of its step and its point. A point check is
// one ordered-map lookup (steps, few) and one hash lookup; a range check visits the boundaries
// inside the range and the log's writes newer than the read version (its tail: a transaction
// reads recent versions, so the tail is short; a 5 s old one visits the whole log). Prune()
// forgets versions at or below a horizon: steps by a sweep, points by popping the log's head,
// so forgetting a point costs O(1) and never visits the points still remembered.
//
// Thread-safety: none; the commit pipeline's committer thread is its only user.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
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
  // Point writes remembered (the log's length): at most one per key and version.
  size_t point_writes() const { return point_log_.size(); }

 private:
  // Version of the step that contains key.
  int64_t VersionAt(std::string_view key) const;
  // One bounded part of a sweep over steps_, forgetting; returns the budget left.
  size_t SweepSteps(size_t budget);
  // Pops at most `budget` log entries at or below horizon_ (erasing their points when the
  // entry is the key's newest write); returns the budget left.
  size_t ForgetPoints(size_t budget);

  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  struct PointWrite {
    int64_t version;
    std::string_view key;  // the key of its entry in points_ (nodes never move)
  };

  std::map<std::string, int64_t, std::less<>> steps_;
  std::unordered_map<std::string, int64_t, StringHash, std::equal_to<>> points_;
  std::deque<PointWrite> point_log_;  // every remembered point write, in version order
  int64_t horizon_ = 0;          // read versions below it are too old
  int64_t pending_horizon_ = 0;  // the next sweep's target
  bool sweeping_ = false;        // a sweep of steps_ is under way
  std::string sweep_cursor_;     // the sweep resumes at the first boundary >= this key
};

// The smallest key greater than every key with prefix key: key + '\0'.
inline std::string KeyAfter(std::string_view key) {
  std::string s(key);
  s.push_back('\0');
  return s;
}

}  // namespace fdyno::kv::embedded
