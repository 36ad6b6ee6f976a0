#include "api/key_insights.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "base/metrics.h"

namespace fdyno::api {
namespace {

using model::AttributeValue;
using model::Item;

store::TableInfo Table(bool sort,
                       store::InsightsMode mode = store::InsightsMode::kAccessedAndThrottledKeys) {
  store::TableInfo t;
  t.account = "000000000007";
  t.name = "orders";
  t.uuid = "uuid-1";
  t.key_schema.hash = {"pk", model::ScalarType::kS};
  if (sort) t.key_schema.range = model::KeyAttribute{"sk", model::ScalarType::kN};
  t.insights = {store::InsightsStatus::kEnabled, mode, 1000, 1000};
  return t;
}

Item Key(std::string pk, std::string sk = "") {
  Item key{{"pk", AttributeValue::S(std::move(pk))}};
  if (!sk.empty()) key["sk"] = AttributeValue::N(*model::Number::Parse(sk));
  return key;
}

TEST(KeyInsightsTest, RuleNamesFollowDynamoDbsOrderAndMode) {
  store::TableInfo t = Table(true);
  EXPECT_EQ(RuleNames(t, "", t.insights),
            (std::vector<std::string>{"DynamoDBContributorInsights-PKC-orders-1000",
                                      "DynamoDBContributorInsights-SKC-orders-1000",
                                      "DynamoDBContributorInsights-PKT-orders-1000",
                                      "DynamoDBContributorInsights-SKT-orders-1000"}));
  t.insights.mode = store::InsightsMode::kThrottledKeys;
  EXPECT_EQ(RuleNames(t, "", t.insights).size(), 2u);
  EXPECT_EQ(RuleCount(t.key_schema, store::InsightsMode::kAccessedAndThrottledKeys), 4);
  store::KeySchema hash_only;
  hash_only.hash = {"pk", model::ScalarType::kS};
  EXPECT_EQ(RuleCount(hash_only, store::InsightsMode::kThrottledKeys), 1);
}

TEST(KeyInsightsTest, CountsAccessesAndThrottlesByRule) {
  ManualClock clock;
  KeyInsights insights(&clock);
  store::TableInfo t = Table(true);
  for (int i = 0; i < 3; ++i) insights.Accessed(t, "", Key("a", "1"));
  insights.Accessed(t, "", Key("a", "2"));
  insights.Accessed(t, "", Key("b", "1"));
  insights.Throttled(t, "", Key("b", "1"));
  insights.Accessed(t, "", Key("no-sort"));  // a key without its sort key: PKC only
  auto report = insights.Report();
  ASSERT_EQ(report.size(), 1u);
  ASSERT_EQ(report[0].rules.size(), 4u);
  const auto& pkc = report[0].rules[0].top;
  ASSERT_EQ(pkc.size(), 3u);
  EXPECT_EQ(pkc[0].keys, std::vector<std::string>{"a"});
  EXPECT_EQ(pkc[0].count, 4);
  const auto& skc = report[0].rules[1].top;
  EXPECT_EQ(skc[0].keys, (std::vector<std::string>{"a", "1"}));
  EXPECT_EQ(skc[0].count, 3);
  EXPECT_EQ(report[0].rules[2].top[0].count, 1);  // PKT: b
  EXPECT_EQ(report[0].rules[3].top[0].keys, (std::vector<std::string>{"b", "1"}));
}

TEST(KeyInsightsTest, DisabledResourcesAndThrottledModeCountNoAccesses) {
  ManualClock clock;
  KeyInsights insights(&clock);
  store::TableInfo off = Table(false);
  off.insights.status = store::InsightsStatus::kFailed;
  insights.Accessed(off, "", Key("a"));
  store::TableInfo throttled_only = Table(false, store::InsightsMode::kThrottledKeys);
  throttled_only.uuid = "uuid-2";
  insights.Accessed(throttled_only, "", Key("a"));
  EXPECT_TRUE(insights.Report().empty());
  insights.Throttled(throttled_only, "", Key("a"));
  ASSERT_EQ(insights.Report().size(), 1u);
  EXPECT_EQ(insights.Report()[0].rules[0].rule, "DynamoDBContributorInsights-PKT-orders-1000");
}

TEST(KeyInsightsTest, ReportsTheLastTwoMinutesOnly) {
  ManualClock clock(60'000 * 100);
  KeyInsights insights(&clock);
  store::TableInfo t = Table(false);
  insights.Accessed(t, "", Key("old"));
  clock.Advance(std::chrono::minutes(1));
  insights.Accessed(t, "", Key("new"));
  EXPECT_EQ(insights.Report()[0].rules[0].top.size(), 2u);  // this minute and the one before
  clock.Advance(std::chrono::minutes(1));
  insights.Accessed(t, "", Key("newer"));
  auto top = insights.Report()[0].rules[0].top;
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].keys[0] == "old" || top[1].keys[0] == "old", false);
  clock.Advance(std::chrono::minutes(5));
  EXPECT_TRUE(insights.Report().empty());
}

TEST(KeyInsightsTest, MemoryIsBoundedAndHeavyKeysSurvive) {
  ManualClock clock;
  KeyInsights insights(&clock);
  store::TableInfo t = Table(false);
  for (int i = 0; i < 10'000; ++i) {
    insights.Accessed(t, "", Key("hot"));
    insights.Accessed(t, "", Key("k" + std::to_string(i)));
  }
  auto top = insights.Report(100)[0].rules[0].top;
  EXPECT_LE(top.size(), KeyInsights::kCountersPerRule);
  ASSERT_FALSE(top.empty());
  EXPECT_EQ(top[0].keys[0], "hot");
  // Space-Saving over-counts by at most the least counter, never under-counts.
  EXPECT_GE(top[0].count, 10'000);
}

TEST(KeyInsightsTest, ForgetAndPublish) {
  ManualClock clock;
  KeyInsights insights(&clock);
  store::TableInfo t = Table(false);
  insights.Accessed(t, "", Key("a|b"));
  Metrics metrics;
  insights.Publish(metrics);
  auto gauges = metrics.Gauges();
  ASSERT_EQ(gauges.size(), 1u);
  EXPECT_EQ(gauges[0].name, "fdyno_contributor_insights_key_events");
  EXPECT_EQ(gauges[0].metric->value(), 1);
  insights.Forget(t, "");
  EXPECT_TRUE(insights.Report().empty());
  insights.Publish(metrics);
  EXPECT_TRUE(metrics.Gauges().empty());  // the family is replaced, not added to
  EXPECT_EQ(insights.ReportJson(), R"({"resources":[]})");
}

}  // namespace
}  // namespace fdyno::api
