#include "store/ttl.h"

#include <gtest/gtest.h>

#include "kv/testing/memory_engine.h"
#include "model/number.h"
#include "model/test_values.h"
#include "store/layout.h"

namespace fdyno::store {
namespace {

using test::N;

using model::AttributeValue;
using model::Item;

TableInfo TtlTable(TtlStatus status) {
  TableInfo t;
  t.id = 5;
  t.ttl = {status, "exp", 0};
  return t;
}

TEST(TtlTest, ExpiryIsTheNumberOfSecondsDroppingFractions) {
  TtlSettings ttl{TtlStatus::kEnabled, "exp", 0};
  EXPECT_EQ(ExpirySeconds(ttl, {{"exp", N("1700000000")}}), 1700000000);
  EXPECT_EQ(ExpirySeconds(ttl, {{"exp", N("1700000000.9")}}), 1700000000);
  EXPECT_EQ(ExpirySeconds(ttl, {{"exp", N("1.7e9")}}), 1700000000);
  EXPECT_EQ(ExpirySeconds(ttl, {{"exp", N("0.5")}}), 0);
  EXPECT_EQ(ExpirySeconds(ttl, {{"exp", N("-5")}}), std::nullopt);
  EXPECT_EQ(ExpirySeconds(ttl, {{"exp", N("1e30")}}), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(ExpirySeconds(ttl, {{"exp", AttributeValue::S("1700000000")}}), std::nullopt);
  EXPECT_EQ(ExpirySeconds(ttl, {{"other", N("1")}}), std::nullopt);
  ttl.status = TtlStatus::kDisabled;
  EXPECT_EQ(ExpirySeconds(ttl, {{"exp", N("1700000000")}}), std::nullopt);
}

TEST(TtlTest, ExpiredOnlyOnceItsTimeHasPassedAndNotMoreThanFiveYearsAgo) {
  const int64_t now_ms = 1'700'000'000'500;
  EXPECT_FALSE(ExpiredAt(1'700'000'000, now_ms));  // this very second: not yet
  EXPECT_TRUE(ExpiredAt(1'699'999'999, now_ms));
  EXPECT_TRUE(ExpiredAt(1'700'000'000 - kTtlIgnoreOlderThanSeconds, now_ms));
  EXPECT_FALSE(ExpiredAt(1'700'000'000 - kTtlIgnoreOlderThanSeconds - 1, now_ms));
  EXPECT_FALSE(ExpiredAt(0, now_ms));  // a unit mistake, never deleted
  const TableInfo enabling = TtlTable(TtlStatus::kEnabling);
  EXPECT_FALSE(ItemExpired(enabling, {{"exp", N("1699999999")}}, now_ms));  // not yet ENABLED
  EXPECT_TRUE(ItemExpired(TtlTable(TtlStatus::kEnabled), {{"exp", N("1699999999")}}, now_ms));
}

TEST(TtlTest, ExpiryIndexFollowsTheItem) {
  auto db = kv::OpenMemoryEngine();
  const TableInfo table = TtlTable(TtlStatus::kEnabled);
  const Item a{{"exp", N("100")}};
  const Item b{{"exp", N("200")}};
  const Item none{{"x", N("1")}};
  auto keys = [&]() {
    auto tx = db->CreateTransaction();
    auto [begin, end] = ExpiryIndexRange(table.id);
    std::vector<ExpiryEntry> out;
    Result<kv::RangeResult> range = tx->GetRange(begin, end);
    EXPECT_TRUE(range.ok());
    for (const kv::KeyValue& kv : range->kvs) {
      out.push_back(*DecodeExpiryKey(table.id, kv.key));
    }
    return out;
  };
  auto apply = [&](const Item* before, const Item* after) {
    auto tx = db->CreateTransaction();
    UpdateExpiryIndex(*tx, table, "item", before, after);
    ASSERT_TRUE(tx->Commit().ok());
  };
  apply(nullptr, &a);
  ASSERT_EQ(keys().size(), 1u);
  EXPECT_EQ(keys()[0].expiry_s, 100);
  EXPECT_EQ(keys()[0].item_key, "item");
  apply(&a, &b);
  ASSERT_EQ(keys().size(), 1u);
  EXPECT_EQ(keys()[0].expiry_s, 200);
  apply(&b, &none);
  EXPECT_TRUE(keys().empty());
  apply(&none, &b);
  apply(&b, nullptr);
  EXPECT_TRUE(keys().empty());
  // The range before a time holds the earlier expiries only.
  apply(nullptr, &a);
  auto tx = db->CreateTransaction();
  auto [begin, end] = ExpiryRangeBefore(table.id, 100);
  EXPECT_TRUE(tx->GetRange(begin, end)->kvs.empty());
  auto [begin2, end2] = ExpiryRangeBefore(table.id, 101);
  EXPECT_EQ(tx->GetRange(begin2, end2)->kvs.size(), 1u);
}

}  // namespace
}  // namespace fdyno::store
