// WarmThroughput: the values DynamoDB shows, its creation and raise rules, and the high-water
// mark kept across throughput and billing mode changes (api/warm_throughput.h).
#include "api/warm_throughput.h"

#include <gtest/gtest.h>

#include <string>

namespace fdyno::api::tables {
namespace {

using store::BillingMode;
using store::WarmThroughput;

constexpr char kInvalid[] = "One or more parameter values were invalid: ";

template <typename T>
std::string Message(const Result<T>& r) {
  return r.ok() ? "ok" : r.error().message;
}

store::TableInfo Provisioned(int64_t read, int64_t write) {
  store::TableInfo t;
  t.billing_mode = BillingMode::kProvisioned;
  t.throughput.read_capacity_units = read;
  t.throughput.write_capacity_units = write;
  return t;
}

store::TableInfo OnDemand() {
  store::TableInfo t;
  t.billing_mode = BillingMode::kPayPerRequest;
  return t;
}

TEST(WarmThroughputTest, ShowsTheOnDemandInitialValuesOrTheCapacityUnits) {
  EXPECT_EQ(EffectiveWarm(OnDemand()), (WarmThroughput{12000, 4000}));
  EXPECT_EQ(EffectiveWarm(Provisioned(5, 7)), (WarmThroughput{5, 7}));
  store::TableInfo raised = Provisioned(1, 1);
  raised.warm = {3, 3};  // once provisioned at 3/3
  EXPECT_EQ(EffectiveWarm(raised), (WarmThroughput{3, 3}));
  store::SecondaryIndex index;
  index.throughput.read_capacity_units = 13000;
  index.throughput.write_capacity_units = 4500;
  EXPECT_EQ(EffectiveWarm(Provisioned(1, 1), index), (WarmThroughput{13000, 4500}));
  index.throughput = {};
  EXPECT_EQ(EffectiveWarm(OnDemand(), index), (WarmThroughput{12000, 4000}));
}

TEST(WarmThroughputTest, CreationTakesTheGivenMembersAndRefusesLowerOnes) {
  store::Throughput none, ten;
  ten.read_capacity_units = 10;
  ten.write_capacity_units = 10;
  auto initial = InitialWarm(WarmIn{12001, std::nullopt}, true, none, "table");
  ASSERT_TRUE(initial.ok());
  EXPECT_EQ(*initial, (WarmThroughput{12001, 4000}));
  EXPECT_EQ(*InitialWarm(std::nullopt, false, ten, "table"), (WarmThroughput{10, 10}));
  EXPECT_EQ(*InitialWarm(WarmIn{100, 100}, false, ten, "table"), (WarmThroughput{100, 100}));
  EXPECT_EQ(Message(InitialWarm(WarmIn{1, 1}, true, none, "table")),
            std::string(kInvalid) +
                "Requested ReadUnitsPerSecond for WarmThroughput for table is lower than initial "
                "throughput for OnDemand. See: https://docs.aws.amazon.com/amazondynamodb/latest/"
                "developerguide/on-demand-capacity-mode.html#on-demand-capacity-mode-initial");
  EXPECT_EQ(Message(InitialWarm(WarmIn{5, 5}, false, ten, "table")),
            std::string(kInvalid) +
                "Requested ReadUnitsPerSecond for WarmThroughput for table is lower than "
                "ReadCapacityUnits of ProvisionedThroughput");
  EXPECT_EQ(Message(InitialWarm(WarmIn{std::nullopt, 5}, false, ten, "index g-a")),
            std::string(kInvalid) +
                "Requested WriteUnitsPerSecond for WarmThroughput for index g-a is lower than "
                "WriteCapacityUnits of ProvisionedThroughput");
}

TEST(WarmThroughputTest, ARaiseKeepsTheMemberNotGivenAndNeverDecreases) {
  const WarmThroughput current{12000, 4000};
  EXPECT_EQ(*RaisedWarm(WarmIn{std::nullopt, 4002}, current, "table"),
            (WarmThroughput{12000, 4002}));
  EXPECT_EQ(*RaisedWarm(WarmIn{12000, 4000}, current, "table"), current);  // equal is fine
  EXPECT_EQ(Message(RaisedWarm(WarmIn{100, 100}, current, "index gsi1")),
            std::string(kInvalid) +
                "Requested ReadUnitsPerSecond for WarmThroughput for index gsi1 is lower than "
                "current WarmThroughput, decreasing WarmThroughput is not supported");
  EXPECT_EQ(Message(RaisedWarm(WarmIn{13000, 3999}, current, "table")),
            std::string(kInvalid) +
                "Requested WriteUnitsPerSecond for WarmThroughput for table is lower than "
                "current WarmThroughput, decreasing WarmThroughput is not supported");
}

TEST(WarmThroughputTest, SettlingKeepsTheHighestThroughputEverShown) {
  // Provisioned 3/3 decreased to 1/1: warm stays 3/3.
  store::TableInfo before = Provisioned(3, 3);
  store::TableInfo after = Provisioned(1, 1);
  SettleWarm(before, after);
  EXPECT_EQ(EffectiveWarm(after), (WarmThroughput{3, 3}));
  // To on-demand: the initial values; back to provisioned 1/1: they stay.
  store::TableInfo on_demand = OnDemand();
  on_demand.warm = after.warm;
  SettleWarm(after, on_demand);
  EXPECT_EQ(EffectiveWarm(on_demand), (WarmThroughput{12000, 4000}));
  store::TableInfo back = Provisioned(1, 1);
  back.warm = on_demand.warm;
  SettleWarm(on_demand, back);
  EXPECT_EQ(EffectiveWarm(back), (WarmThroughput{12000, 4000}));
  // An index keeps its own high-water mark.
  store::SecondaryIndex big;
  big.id = 1;
  big.throughput.read_capacity_units = 13000;
  big.throughput.write_capacity_units = 4500;
  before.global_indexes = {big};
  after.global_indexes = {big};
  after.global_indexes[0].throughput.read_capacity_units = 1;
  after.global_indexes[0].throughput.write_capacity_units = 1;
  SettleWarm(before, after);
  EXPECT_EQ(EffectiveWarm(after, after.global_indexes[0]), (WarmThroughput{13000, 4500}));
}

}  // namespace
}  // namespace fdyno::api::tables
