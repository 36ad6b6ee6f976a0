#include "store/leases.h"

#include <gtest/gtest.h>

#include "kv/run.h"
#include "kv/testing/memory_engine.h"

namespace fdyno::store {
namespace {

using std::chrono::milliseconds;

class LeasesTest : public ::testing::Test {
 protected:
  LeaseOptions Owner(std::string owner, ManualClock* clock) {
    LeaseOptions o;
    o.owner = std::move(owner);
    o.clock = clock;
    o.duration = milliseconds(10'000);
    return o;
  }

  bool Take(const LeaseOptions& o) {
    auto r = kv::Run(
        *db_, [&](kv::Transaction& tx, const kv::Attempt&) { return TakeLease(tx, key_, o); });
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() && *r;
  }

  std::optional<Lease> Read() {
    auto r =
        kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) { return ReadLease(tx, key_); });
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : std::nullopt;
  }

  std::unique_ptr<kv::Database> db_ = kv::OpenMemoryEngine();
  const std::string key_ = LeaseKey(kv::Tuple{"unit", 7});
  ManualClock clock_a_{1'700'000'000'000};
  ManualClock clock_b_{1'700'000'000'000};
};

TEST_F(LeasesTest, FreeLeaseIsTakenAndHeldUntilItExpires) {
  LeaseOptions a = Owner("a", &clock_a_), b = Owner("b", &clock_b_);
  EXPECT_TRUE(Take(a));
  ASSERT_TRUE(Read());
  EXPECT_EQ(Read()->owner, "a");
  EXPECT_EQ(Read()->expiry_ms, clock_a_.WallMillis() + 10'000);
  EXPECT_FALSE(Take(b));
  clock_b_.Advance(milliseconds(9'999));
  EXPECT_FALSE(Take(b));
  clock_b_.Advance(milliseconds(1));  // the lease's expiry by b's clock: a's work is b's now
  EXPECT_TRUE(Take(b));
  EXPECT_EQ(Read()->owner, "b");
  EXPECT_FALSE(Take(a));  // a paused past its expiry: it lost the lease
}

TEST_F(LeasesTest, RenewalMovesTheExpiry) {
  LeaseOptions a = Owner("a", &clock_a_), b = Owner("b", &clock_b_);
  ASSERT_TRUE(Take(a));
  clock_a_.Advance(milliseconds(8'000));
  clock_b_.Advance(milliseconds(8'000));
  ASSERT_TRUE(Take(a));  // renewed at +8 s: held until +18 s
  clock_b_.Advance(milliseconds(9'000));
  EXPECT_FALSE(Take(b));
  clock_b_.Advance(milliseconds(1'000));
  EXPECT_TRUE(Take(b));
}

TEST_F(LeasesTest, RenewIntervalWritesOnlyWhenDue) {
  LeaseOptions a = Owner("a", &clock_a_);
  a.renew = milliseconds(3'000);
  ASSERT_TRUE(Take(a));
  const int64_t first = Read()->expiry_ms;
  clock_a_.Advance(milliseconds(2'999));
  ASSERT_TRUE(Take(a));
  EXPECT_EQ(Read()->expiry_ms, first);
  clock_a_.Advance(milliseconds(1));
  ASSERT_TRUE(Take(a));
  EXPECT_EQ(Read()->expiry_ms, first + 3'000);
}

TEST_F(LeasesTest, ReleaseFreesOnlyTheOwnersLease) {
  LeaseOptions a = Owner("a", &clock_a_), b = Owner("b", &clock_b_);
  ASSERT_TRUE(Take(a));
  ASSERT_TRUE(kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
                return ReleaseLease(tx, key_, b);
              }).ok());
  EXPECT_TRUE(Read());
  ASSERT_TRUE(kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
                return ReleaseLease(tx, key_, a);
              }).ok());
  EXPECT_FALSE(Read());
  EXPECT_TRUE(Take(b));
}

TEST_F(LeasesTest, SoleProcessTakesAnUnexpiredLeaseOfAnEarlierRun) {
  ASSERT_TRUE(Take(Owner("earlier run", &clock_a_)));
  LeaseOptions now = Owner("this run", &clock_b_);
  EXPECT_FALSE(Take(now));
  now.sole = true;
  EXPECT_TRUE(Take(now));
  EXPECT_EQ(Read()->owner, "this run");
}

// The fence: a's transaction read the lease while a held it, then b took the expired lease and
// committed; a's transaction, with its work written, must not commit.
TEST_F(LeasesTest, StaleOwnersTransactionDoesNotCommitAfterATakeover) {
  LeaseOptions a = Owner("a", &clock_a_), b = Owner("b", &clock_b_);
  ASSERT_TRUE(Take(a));
  auto stale = db_->CreateTransaction();
  auto held = TakeLease(*stale, key_, a);
  ASSERT_TRUE(held.ok());
  ASSERT_TRUE(*held);
  stale->Set("work", "by a");
  clock_b_.Advance(milliseconds(10'000));
  ASSERT_TRUE(Take(b));
  EXPECT_FALSE(stale->Commit().ok());
}

TEST_F(LeasesTest, UnknownRecordVersionFailsClosed) {
  ASSERT_TRUE(kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
                tx.Set(key_, std::string("\x02", 1));
                return Status::Ok();
              }).ok());
  auto r = kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
    return TakeLease(tx, key_, Owner("a", &clock_a_));
  });
  EXPECT_FALSE(r.ok());
}

TEST_F(LeasesTest, ProcessOwnerIsStable) {
  EXPECT_FALSE(ProcessLeaseOwner().empty());
  EXPECT_EQ(&ProcessLeaseOwner(), &ProcessLeaseOwner());
}

}  // namespace
}  // namespace fdyno::store
