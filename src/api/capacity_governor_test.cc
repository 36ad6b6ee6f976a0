#include "api/capacity_governor.h"

#include <gtest/gtest.h>

namespace fdyno::api {
namespace {

using std::chrono::milliseconds;

constexpr std::string_view kRegion = "us-east-1";

store::TableInfo Provisioned(int64_t rcu, int64_t wcu) {
  store::TableInfo t;
  t.name = "t";
  t.id = 7;
  t.billing_mode = store::BillingMode::kProvisioned;
  t.throughput.read_capacity_units = rcu;
  t.throughput.write_capacity_units = wcu;
  return t;
}

ConsumedCapacity Units(double units, bool write) {
  ConsumedCapacity c;
  c.table_name = "t";
  c.table_units = units;
  c.is_write = write;
  return c;
}

class GovernorTest : public testing::Test {
 protected:
  // Writes of one unit admitted (and charged) over `seconds`, one attempt every 10 ms.
  int WritesOver(const store::TableInfo& t, int seconds, std::string_view partition = {}) {
    int admitted = 0;
    for (int i = 0; i < seconds * 100; ++i) {
      if (governor.Admit(kRegion, t, Draw::Write(partition)).ok()) {
        governor.Charge(t, Units(1, true), partition);
        ++admitted;
      }
      clock.Advance(milliseconds(10));
    }
    return admitted;
  }

  ManualClock clock;
  CapacityGovernor governor{&clock};
};

TEST_F(GovernorTest, ProvisionedWritesSustainTheirRate) {
  store::TableInfo t = Provisioned(5, 10);
  // One second banked at the start, then 10 a second.
  EXPECT_NEAR(WritesOver(t, 20), 10 + 20 * 10, 2);
}

TEST_F(GovernorTest, UnusedCapacityIsBankedUpToFiveMinutes) {
  store::TableInfo t = Provisioned(5, 10);
  WritesOver(t, 1);
  clock.Advance(milliseconds(60'000));  // a minute idle: 600 units banked
  int burst = 0;
  while (governor.Admit(kRegion, t, Draw::Write()).ok()) {
    governor.Charge(t, Units(1, true));
    ++burst;
  }
  EXPECT_NEAR(burst, 600, 2);
  clock.Advance(milliseconds(3'600'000));  // an hour: no more than 300 seconds
  burst = 0;
  while (governor.Admit(kRegion, t, Draw::Write()).ok()) {
    governor.Charge(t, Units(1, true));
    ++burst;
  }
  EXPECT_NEAR(burst, 3000, 2);
}

TEST_F(GovernorTest, ThrottledAnswerNamesTheReason) {
  store::TableInfo t = Provisioned(1, 1);
  governor.Charge(t, Units(5, true));
  Status s = governor.Admit(kRegion, t, Draw::Write());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().type, ErrorType::kProvisionedThroughputExceeded);
  EXPECT_NE(s.error().throttling_reasons_json.find("TableWriteProvisionedThroughputExceeded"),
            std::string::npos);
  // Reads draw on their own bucket.
  EXPECT_TRUE(governor.Admit(kRegion, t, Draw::Read()).ok());
}

TEST_F(GovernorTest, AHotPartitionThrottlesAtItsOwnLimitOthersProceed) {
  store::TableInfo t = Provisioned(100'000, 100'000);
  governor.Charge(t, Units(1500, true), "hot");
  EXPECT_FALSE(governor.Admit(kRegion, t, Draw::Write("hot")).ok());
  EXPECT_TRUE(governor.Admit(kRegion, t, Draw::Write("cold")).ok());
  clock.Advance(milliseconds(1000));
  EXPECT_TRUE(governor.Admit(kRegion, t, Draw::Write("hot")).ok());
}

TEST_F(GovernorTest, AGlobalIndexOutOfWritesThrottlesTheTablesWrites) {
  store::TableInfo t = Provisioned(100, 100);
  store::SecondaryIndex gsi;
  gsi.name = "g";
  gsi.id = 1;
  gsi.throughput.read_capacity_units = 1;
  gsi.throughput.write_capacity_units = 1;
  t.global_indexes.push_back(gsi);
  ConsumedCapacity c = Units(1, true);
  c.global_indexes.emplace_back("g", 3);
  governor.Charge(t, c);
  Status s = governor.Admit(kRegion, t, Draw::Write());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().throttling_reasons_json.find("IndexWriteProvisionedThroughputExceeded"),
            std::string::npos);
  EXPECT_TRUE(governor.Admit(kRegion, t, Draw::Read()).ok());
}

TEST_F(GovernorTest, PendingUnitsOfTheSameRequestCount) {
  store::TableInfo t = Provisioned(5, 10);  // 10 units at the start
  EXPECT_TRUE(governor.Admit(kRegion, t, Draw::Write({}, 9)).ok());
  EXPECT_FALSE(governor.Admit(kRegion, t, Draw::Write({}, 10)).ok());
}

TEST_F(GovernorTest, OnDemandWithoutMaximumNeverThrottlesOnItsOwn) {
  store::TableInfo t;
  t.id = 8;
  t.billing_mode = store::BillingMode::kPayPerRequest;
  governor.Charge(t, Units(1e9, true));
  EXPECT_TRUE(governor.Admit(kRegion, t, Draw::Write()).ok());
  t.on_demand.max_write_request_units = 5;  // UpdateTable: at once
  governor.Charge(t, Units(10, true));
  EXPECT_FALSE(governor.Admit(kRegion, t, Draw::Write()).ok());
}

}  // namespace
}  // namespace fdyno::api
