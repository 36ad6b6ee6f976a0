#include "kv/engines/embedded/resolver.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace fdyno::kv::embedded {
namespace {

TEST(ResolverTest, EmptyHasNoConflicts) {
  Resolver r;
  EXPECT_FALSE(r.PointConflicts("a", 0));
  EXPECT_FALSE(r.RangeConflicts("", "\xff", 0));
}

TEST(ResolverTest, PointWritesConflictOnlyWithOlderReads) {
  Resolver r;
  r.AddPoint("b", 5);
  EXPECT_TRUE(r.PointConflicts("b", 4));
  EXPECT_FALSE(r.PointConflicts("b", 5));
  EXPECT_FALSE(r.PointConflicts("a", 0));
  EXPECT_FALSE(r.PointConflicts(std::string("b\0", 2), 0));
  EXPECT_TRUE(r.RangeConflicts("a", "c", 4));
  EXPECT_FALSE(r.RangeConflicts("a", "b", 0));  // end is exclusive
  EXPECT_TRUE(r.RangeConflicts("b", KeyAfter("b"), 0));
  EXPECT_FALSE(r.RangeConflicts(KeyAfter("b"), "z", 0));
}

TEST(ResolverTest, RangeWritesSplitAndOverwrite) {
  Resolver r;
  r.AddRange("c", "m", 3);
  r.AddPoint("f", 7);
  r.AddRange("a", "d", 9);
  EXPECT_TRUE(r.PointConflicts("a", 8));
  EXPECT_TRUE(r.PointConflicts("c", 8));
  EXPECT_FALSE(r.PointConflicts("e", 3));
  EXPECT_TRUE(r.PointConflicts("e", 2));
  EXPECT_TRUE(r.PointConflicts("f", 6));
  EXPECT_FALSE(r.PointConflicts("m", 0));
  EXPECT_TRUE(r.RangeConflicts("e", "g", 6));
  EXPECT_FALSE(r.RangeConflicts("g", "z", 3));
}

TEST(ResolverTest, PruneForgetsOldWritesAndRaisesHorizon) {
  Resolver r;
  r.AddPoint("a", 1);
  r.AddPoint("b", 2);
  r.AddRange("c", "e", 3);
  r.Prune(2);
  EXPECT_EQ(r.horizon(), 2);
  EXPECT_FALSE(r.PointConflicts("a", 2));
  EXPECT_FALSE(r.PointConflicts("b", 2));
  EXPECT_TRUE(r.PointConflicts("d", 2));
  r.Prune(3);
  EXPECT_EQ(r.boundaries(), 0u);
}

// Commits of one batch share a version, so a key can be written twice at one version; the
// second write adds nothing to forget: a second log entry would outlive the key it names.
TEST(ResolverTest, SameKeyTwiceAtOneVersionIsForgottenOnce) {
  Resolver r;
  r.AddPoint("k", 4);
  r.AddPoint("k", 4);
  r.AddPoint("j", 5);
  EXPECT_EQ(r.point_writes(), 2u);
  r.Prune(4);
  EXPECT_EQ(r.boundaries(), 1u);
  EXPECT_FALSE(r.PointConflicts("k", 4));
  EXPECT_TRUE(r.PointConflicts("j", 4));
  EXPECT_TRUE(r.RangeConflicts("a", "z", 4));
  r.Prune(5);
  EXPECT_EQ(r.boundaries(), 0u);
  EXPECT_EQ(r.point_writes(), 0u);
  EXPECT_FALSE(r.RangeConflicts("a", "z", 5));
  r.AddPoint("k", 7);
  EXPECT_TRUE(r.PointConflicts("k", 6));
}

// Random operations against a brute-force model: a list of (range, version).
TEST(ResolverTest, MatchesBruteForceModel) {
  std::mt19937 rng(12345);
  Resolver r;
  struct W {
    std::string b, e;
    int64_t v;
  };
  std::vector<W> writes;
  int64_t horizon = 0;
  auto key = [&] { return std::string(1, static_cast<char>('a' + rng() % 20)); };
  for (int64_t v = 1; v <= 3000; ++v) {
    std::string b = key(), e = key();
    if (b > e) std::swap(b, e);
    if (rng() % 3 == 0) {
      r.AddPoint(b, v);
      if (rng() % 4 == 0) r.AddPoint(b, v);  // two commits of one batch
      writes.push_back({b, KeyAfter(b), v});
    } else {
      r.AddRange(b, e, v);
      if (b < e) writes.push_back({b, e, v});
    }
    // Incremental pruning, as the engine does it; a full sweep now and then.
    if (v % 200 == 0) r.SetPendingHorizon(v - 50);
    if (v % 1000 == 0) {
      r.Prune(v - 10);
    } else {
      r.PruneStep(3);
    }
    horizon = r.horizon();
    std::string qb = key(), qe = key();
    if (qb > qe) std::swap(qb, qe);
    int64_t rv = horizon + static_cast<int64_t>(rng() % (v - horizon + 1));
    bool model = false;
    for (const W& w : writes) {
      if (qb < qe && w.v > rv && w.b < qe && qb < w.e) model = true;
    }
    ASSERT_EQ(r.RangeConflicts(qb, qe, rv), model) << "v=" << v;
    bool pmodel = false;
    for (const W& w : writes) {
      if (w.v > rv && w.b <= qb && qb < w.e) pmodel = true;
    }
    ASSERT_EQ(r.PointConflicts(qb, rv), pmodel) << "v=" << v;
  }
}

}  // namespace
}  // namespace fdyno::kv::embedded
