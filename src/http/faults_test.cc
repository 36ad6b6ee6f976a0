#include "http/faults.h"

#include <gtest/gtest.h>

#include <string>

namespace fdyno::http {
namespace {

struct Body {
  explicit Body(std::string_view json) { doc.Parse(json.data(), json.size()); }
  rapidjson::Document doc;
};

std::optional<FaultDecision> Send(FaultInjector& faults, std::string_view operation,
                                  std::string_view json,
                                  std::string_view account = "000000000000") {
  Body body(json);
  return faults.Decide({operation, account, "req", &body.doc});
}

TEST(FaultRulesTest, ParsesTheIssueExample) {
  auto rules = ParseFaultRules(R"({"rules": [
      {"name": "lose-half", "operations": ["PutItem"], "tables": ["Orders"], "every": 2,
       "action": "lose-response-after-commit", "mode": "reset"},
      {"name": "flaky-reads", "operations": ["GetItem", "Query"], "probability": 0.1, "seed": 7,
       "action": "throttle", "error": "ProvisionedThroughputExceededException"},
      {"name": "ambiguous", "operations": ["UpdateItem"], "times": 3, "action": "unknown-outcome",
       "committed": true}]})");
  ASSERT_TRUE(rules.ok()) << rules.error().message;
  ASSERT_EQ(rules->size(), 3u);
  EXPECT_EQ((*rules)[0].every, 2u);
  EXPECT_EQ((*rules)[0].mode, LoseMode::kReset);
  EXPECT_EQ((*rules)[1].seed, 7u);
  EXPECT_EQ((*rules)[1].error, ErrorType::kProvisionedThroughputExceeded);
  EXPECT_EQ((*rules)[2].times, 3u);
  EXPECT_EQ((*rules)[2].committed, Committed::kYes);
}

TEST(FaultRulesTest, RefusesWhatItCannotHonour) {
  for (const char* bad : {
           R"({"rules": [{"action": "explode"}]})",
           R"({"rules": [{"operations": ["PutItem"]}]})",
           R"({"rules": [{"action": "error", "colour": "red"}]})",
           R"({"rules": [{"action": "throttle", "error": "InternalServerError"}]})",
           R"({"rules": [{"action": "latency"}]})",
           R"({"rules": [{"action": "lose-response-after-commit", "mode": "delay"}]})",
           R"({"rules": [{"action": "error", "probability": 0}]})",
           R"({"rules": [{"action": "error", "every": 0}]})",
           R"({"rules": [{"action": "transaction-conflict", "operations": ["GetItem"]}]})",
           R"({"rules": [{"action": "error", "name": "a"}, {"action": "error", "name": "a"}]})",
           R"({"rules": [{"action": "error", "key": {"id": "x"}}]})",
           R"({"rules": {}})",
           R"(not json)",
       }) {
    EXPECT_FALSE(ParseFaultRules(bad).ok()) << bad;
  }
}

TEST(FaultInjectorTest, EveryThirdMatchOnTheNamedTableOnly) {
  FaultInjector faults;
  ASSERT_TRUE(faults
                  .Replace(R"({"rules": [{"name": "third", "operations": ["PutItem"],
                               "tables": ["T"], "every": 3, "action": "error"}]})")
                  .ok());
  int fired = 0;
  for (int i = 0; i < 30; ++i) {
    if (Send(faults, "PutItem", R"({"TableName": "T", "Item": {}})")) ++fired;
    EXPECT_FALSE(Send(faults, "PutItem", R"({"TableName": "U", "Item": {}})"));
    EXPECT_FALSE(Send(faults, "GetItem", R"({"TableName": "T", "Key": {}})"));
  }
  EXPECT_EQ(fired, 10);
}

TEST(FaultInjectorTest, TimesBoundsFiringsAndProbabilityIsSeeded) {
  FaultInjector a;
  ASSERT_TRUE(
      a.Replace(R"({"rules": [{"probability": 0.5, "seed": 9, "times": 1000, "action": "error"}]})")
          .ok());
  FaultInjector b;
  ASSERT_TRUE(
      b.Replace(R"({"rules": [{"probability": 0.5, "seed": 9, "times": 1000, "action": "error"}]})")
          .ok());
  std::string pattern_a, pattern_b;
  for (int i = 0; i < 200; ++i) {
    pattern_a += Send(a, "GetItem", "{}") ? '1' : '0';
    pattern_b += Send(b, "GetItem", "{}") ? '1' : '0';
  }
  EXPECT_EQ(pattern_a, pattern_b);
  const auto ones = std::count(pattern_a.begin(), pattern_a.end(), '1');
  EXPECT_GT(ones, 60);
  EXPECT_LT(ones, 140);

  FaultInjector limited;
  ASSERT_TRUE(limited.Replace(R"({"rules": [{"times": 2, "action": "error"}]})").ok());
  int fired = 0;
  for (int i = 0; i < 10; ++i) fired += Send(limited, "GetItem", "{}") ? 1 : 0;
  EXPECT_EQ(fired, 2);
}

TEST(FaultInjectorTest, KeyAndAccountFilters) {
  FaultInjector faults;
  ASSERT_TRUE(faults
                  .Replace(R"({"rules": [{"key": {"id": {"S": "hot"}}, "accounts": ["111111111111"],
                               "action": "throttle", "error": "ThrottlingException"}]})")
                  .ok());
  EXPECT_FALSE(Send(faults, "GetItem", R"({"Key": {"id": {"S": "cold"}}})", "111111111111"));
  EXPECT_FALSE(Send(faults, "GetItem", R"({"Key": {"id": {"S": "hot"}}})", "222222222222"));
  auto d = Send(faults, "GetItem", R"({"Key": {"id": {"S": "hot"}}})", "111111111111");
  ASSERT_TRUE(d && d->instead);
  EXPECT_EQ(d->instead->type, ErrorType::kThrottling);
  // In a batch's requests too.
  EXPECT_TRUE(Send(faults, "BatchWriteItem",
                   R"({"RequestItems": {"T": [{"PutRequest": {"Item": {"id": {"S": "hot"}}}}]}})",
                   "111111111111"));
}

TEST(FaultInjectorTest, TransactionConflictNamesTheMatchingAction) {
  FaultInjector faults;
  ASSERT_TRUE(faults
                  .Replace(R"({"rules": [{"key": {"id": {"S": "b"}},
                               "action": "transaction-conflict"}]})")
                  .ok());
  auto d = Send(faults, "TransactWriteItems", R"({"TransactItems": [
      {"Put": {"TableName": "T", "Item": {"id": {"S": "a"}}}},
      {"Delete": {"TableName": "T", "Key": {"id": {"S": "b"}}}}]})");
  ASSERT_TRUE(d && d->instead);
  EXPECT_EQ(d->instead->type, ErrorType::kTransactionCanceled);
  EXPECT_EQ(d->instead->message,
            "Transaction cancelled, please refer cancellation reasons for specific reasons [None, "
            "TransactionConflict]");
  auto single = Send(faults, "PutItem", R"({"Item": {"id": {"S": "b"}}})");
  ASSERT_TRUE(single && single->instead);
  EXPECT_EQ(single->instead->type, ErrorType::kTransactionConflict);
  // Reads outside a transaction never conflict.
  EXPECT_FALSE(Send(faults, "GetItem", R"({"Key": {"id": {"S": "b"}}})"));
}

TEST(FaultInjectorTest, AHeldTokenIsInProgressUntilReleased) {
  FaultInjector faults;
  ASSERT_TRUE(faults
                  .Replace(R"({"rules": [{"times": 1, "delay_ms": 50,
                               "action": "transaction-in-progress"}]})")
                  .ok());
  constexpr std::string_view kRequest = R"({"ClientRequestToken": "t1", "TransactItems": []})";
  // A tokenless transaction is not held.
  EXPECT_FALSE(Send(faults, "TransactWriteItems", R"({"TransactItems": []})"));
  {
    auto first = Send(faults, "TransactWriteItems", kRequest);
    ASSERT_TRUE(first);
    EXPECT_EQ(first->delay_before.count(), 50);
    auto resent = Send(faults, "TransactWriteItems", kRequest);
    ASSERT_TRUE(resent && resent->instead);
    EXPECT_EQ(resent->instead->type, ErrorType::kTransactionInProgress);
    // Another token is not held.
    EXPECT_FALSE(
        Send(faults, "TransactWriteItems", R"({"ClientRequestToken": "t2", "TransactItems": []})"));
  }
  EXPECT_FALSE(Send(faults, "TransactWriteItems", kRequest));
}

TEST(FaultInjectorTest, UnknownOutcomeCommittedOrNot) {
  FaultInjector faults;
  ASSERT_TRUE(faults
                  .Replace(R"({"rules": [
                      {"operations": ["PutItem"], "action": "unknown-outcome", "committed": true},
                      {"operations": ["DeleteItem"], "action": "unknown-outcome",
                       "committed": false}]})")
                  .ok());
  auto after = Send(faults, "PutItem", "{}");
  ASSERT_TRUE(after);
  EXPECT_TRUE(after->unknown_after);
  EXPECT_FALSE(after->instead);
  auto before = Send(faults, "DeleteItem", "{}");
  ASSERT_TRUE(before && before->instead);
  EXPECT_EQ(before->instead->type, ErrorType::kInternalServerError);
  EXPECT_FALSE(before->unknown_after);
}

TEST(FaultInjectorTest, ClearStopsEveryRule) {
  FaultInjector faults;
  EXPECT_FALSE(faults.active());
  ASSERT_TRUE(faults.Replace(R"({"rules": [{"action": "error"}]})").ok());
  EXPECT_TRUE(faults.active());
  faults.Clear();
  EXPECT_FALSE(faults.active());
  EXPECT_FALSE(Send(faults, "GetItem", "{}"));
}

}  // namespace
}  // namespace fdyno::http
