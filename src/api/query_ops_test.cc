// Query and Scan through the registry over the in-memory engine: the ExclusiveStartKey rules
// of a Query with a sort key condition (every operator, both directions, tables and indexes),
// exhaustive pagination at every page size, reads of an index that is still being built, and
// the read units of a page.
// The black-box suite (tests/pytest/test_query_scan.py) covers the same rules through boto3.
#include "api/query_ops.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api/api.h"
#include "api/query_pages.h"
#include "api/testing/call.h"
#include "kv/run.h"
#include "kv/testing/memory_engine.h"
#include "store/catalog.h"

namespace fdyno::api {
namespace {

constexpr char kRangeError[] = "The provided starting key does not match the range key predicate";
constexpr char kPartitionError[] =
    "The provided starting key is outside query boundaries based on provided condition";

class QueryOpsTest : public ::testing::Test {
 protected:
  QueryOpsTest() : db_(kv::OpenMemoryEngine()), clock_(1'700'000'000'000) {
    catalog_ = std::make_unique<store::Catalog>(&clock_);
    ApiDeps deps;
    deps.db = db_.get();
    deps.clock = &clock_;
    deps.catalog = catalog_.get();
    registry_ = BuildOperationRegistry(deps);
    ctx_.account_id = "123456789012";
    ctx_.region = "us-east-1";
    ctx_.clock = &clock_;
  }

  Result<rapidjson::Document> Call(const std::string& op, const std::string& body) {
    return testing::CallOperationJson(registry_, op, body, ctx_);
  }

  void MustCall(const std::string& op, const std::string& body) {
    auto r = Call(op, body);
    ASSERT_TRUE(r.ok()) << op << ": " << r.error().message;
  }

  // pk (S) + sk (N); a GSI by_g on (g S, gs N) holding every item with gs = sk / 2 (pairs of
  // ties); an LSI by_l on (pk, l N) with l = 9 - sk. Partitions "a" and "b", sk 0..9.
  void CreateNumericTable() {
    MustCall("CreateTable", R"({"TableName":"qtable","BillingMode":"PAY_PER_REQUEST",
      "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},
        {"AttributeName":"sk","AttributeType":"N"},{"AttributeName":"g","AttributeType":"S"},
        {"AttributeName":"gs","AttributeType":"N"},{"AttributeName":"l","AttributeType":"N"}],
      "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}],
      "GlobalSecondaryIndexes":[{"IndexName":"by_g","KeySchema":[
        {"AttributeName":"g","KeyType":"HASH"},{"AttributeName":"gs","KeyType":"RANGE"}],
        "Projection":{"ProjectionType":"ALL"}}],
      "LocalSecondaryIndexes":[{"IndexName":"by_l","KeySchema":[
        {"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"l","KeyType":"RANGE"}],
        "Projection":{"ProjectionType":"KEYS_ONLY"}}]})");
    for (const char* p : {"a", "b"}) {
      for (int i = 0; i < 10; ++i) {
        MustCall("PutItem", std::string(R"({"TableName":"qtable","Item":{"pk":{"S":")") + p +
                                R"("},"sk":{"N":")" + std::to_string(i) + R"("},"g":{"S":")" + p +
                                R"("},"gs":{"N":")" + std::to_string(i / 2) + R"("},"l":{"N":")" +
                                std::to_string(9 - i) + R"("}}})");
      }
    }
  }

  // Query of table t, partition "a" (or of an index), returning the sk values read, or the
  // error message.
  struct Outcome {
    std::vector<int> sks;
    std::optional<std::string> error;
    std::optional<std::string> last_key;  // LastEvaluatedKey as JSON
  };
  Outcome Query(const std::string& kce, const std::string& values, bool forward,
                const std::string& esk = "", int limit = 0, const std::string& index = "") {
    std::string body = R"({"TableName":"qtable","KeyConditionExpression":")" + kce +
                       R"(","ExpressionAttributeValues":)" + values +
                       ",\"ScanIndexForward\":" + (forward ? "true" : "false");
    if (!index.empty()) body += R"(,"IndexName":")" + index + "\"";
    if (!esk.empty()) body += ",\"ExclusiveStartKey\":" + esk;
    if (limit > 0) body += ",\"Limit\":" + std::to_string(limit);
    body += "}";
    return Run(body);
  }
  Outcome Run(const std::string& body) {
    Outcome out;
    auto r = Call("Query", body);
    if (!r.ok()) {
      EXPECT_EQ(r.error().type, ErrorType::kValidation);
      out.error = r.error().message;
      return out;
    }
    for (const auto& item : (*r)["Items"].GetArray()) {
      out.sks.push_back(std::stoi(item["sk"]["N"].GetString()));
    }
    if (r->HasMember("LastEvaluatedKey")) out.last_key = ToJson((*r)["LastEvaluatedKey"]);
    return out;
  }

  static std::string ToJson(const rapidjson::Value& v) {
    rapidjson::StringBuffer b;
    rapidjson::Writer<rapidjson::StringBuffer> w(b);
    v.Accept(w);
    return b.GetString();
  }

  static std::string Key(int sk) {
    return R"({"pk":{"S":"a"},"sk":{"N":")" + std::to_string(sk) + R"("}})";
  }
  static std::string Values(const std::string& rest = "") {
    return R"({":p":{"S":"a"})" + rest + "}";
  }
  static std::string V(const char* name, int n) {
    return std::string(R"(,")") + name + R"(":{"N":")" + std::to_string(n) + R"("})";
  }

  std::unique_ptr<kv::Database> db_;
  ManualClock clock_;
  std::unique_ptr<store::Catalog> catalog_;
  OperationRegistry registry_;
  RequestContext ctx_;
};

std::vector<int> Seq(int from, int to) {  // inclusive, either direction
  std::vector<int> v;
  for (int i = from; from <= to ? i <= to : i >= to; i += from <= to ? 1 : -1) v.push_back(i);
  return v;
}

// One ExclusiveStartKey case: the sort key value of the start key, and what must happen.
struct Case {
  const char* kce;
  std::string values;
  bool forward;
  int start;
  std::optional<std::vector<int>> items;  // nullopt: rejected with kRangeError
};

// A page's entries are summed and rounded up to 4 KB once and charged to what was read; base
// items a local index read fetched go to the table, each rounded up on its own.
TEST(PageReadUnitsTest, EntriesToTheTargetBaseItemsToTheTable) {
  auto units = [](const PageOutput& page, bool consistent) {
    ConsumedCapacity c;
    AddPageReadUnits(page, consistent, c);
    return c;
  };
  PageOutput table;
  table.bytes = 3 * 1500;
  EXPECT_EQ(units(table, true).table_units, 2.0);
  EXPECT_EQ(units(table, false).table_units, 1.0);
  table.bytes = 0;  // nothing read: one unit still
  EXPECT_EQ(units(table, true).table_units, 1.0);
  EXPECT_EQ(units(table, false).table_units, 0.5);

  PageOutput global;
  global.index_name = "g";
  global.index_is_global = true;
  global.bytes = 4097;
  ConsumedCapacity c = units(global, false);
  EXPECT_EQ(c.table_units, 0.0);
  ASSERT_EQ(c.global_indexes.size(), 1u);
  EXPECT_EQ(c.global_indexes[0], std::make_pair(std::string("g"), 1.0));
  EXPECT_TRUE(c.local_indexes.empty());

  PageOutput local;  // three 10-byte entries and their three 1,500-byte base items
  local.index_name = "l";
  local.bytes = 3 * 10 + 3 * 1500;
  local.base_bytes = 3 * 1500;
  local.base_read_units = 3;
  c = units(local, true);
  EXPECT_EQ(c.table_units, 3.0);
  ASSERT_EQ(c.local_indexes.size(), 1u);
  EXPECT_EQ(c.local_indexes[0], std::make_pair(std::string("l"), 1.0));
  EXPECT_EQ(c.total(), 4.0);
  c = units(local, false);
  EXPECT_EQ(c.table_units, 1.5);
  EXPECT_EQ(c.local_indexes[0].second, 0.5);
}

TEST_F(QueryOpsTest, StartKeyMustLieInTheSortKeyConditionInTheQueryDirection) {
  CreateNumericTable();
  const std::string ge5 = Values(V(":v", 5)), le5 = ge5, between = Values(V(":l", 3) + V(":h", 6));
  const std::vector<Case> cases = {
      // >= 5: forward from the bound is fine, from below it is not; backward the bound is the
      // end of the range: accepted (the LastEvaluatedKey of a page that ended on it), and
      // nothing follows it.
      {"pk = :p AND sk >= :v", ge5, true, 4, std::nullopt},
      {"pk = :p AND sk >= :v", ge5, true, 5, Seq(6, 9)},
      {"pk = :p AND sk >= :v", ge5, true, 9, std::vector<int>{}},
      {"pk = :p AND sk >= :v", ge5, false, 5, std::vector<int>{}},
      {"pk = :p AND sk >= :v", ge5, false, 4, std::nullopt},
      {"pk = :p AND sk >= :v", ge5, false, 6, std::vector<int>{5}},
      {"pk = :p AND sk >= :v", ge5, false, 100, Seq(9, 5)},
      // > 5
      {"pk = :p AND sk > :v", ge5, true, 5, std::nullopt},
      {"pk = :p AND sk > :v", ge5, true, 6, Seq(7, 9)},
      {"pk = :p AND sk > :v", ge5, false, 5, std::nullopt},
      {"pk = :p AND sk > :v", ge5, false, 6, std::vector<int>{}},
      // <= 5: the mirror image of >= 5.
      {"pk = :p AND sk <= :v", le5, true, 5, std::nullopt},
      {"pk = :p AND sk <= :v", le5, true, 4, std::vector<int>{5}},
      {"pk = :p AND sk <= :v", le5, true, -100, Seq(0, 5)},
      {"pk = :p AND sk <= :v", le5, false, 5, Seq(4, 0)},
      {"pk = :p AND sk <= :v", le5, false, 6, std::nullopt},
      // < 5
      {"pk = :p AND sk < :v", le5, true, 5, std::nullopt},
      {"pk = :p AND sk < :v", le5, true, 4, std::vector<int>{}},
      {"pk = :p AND sk < :v", le5, false, 5, std::nullopt},
      {"pk = :p AND sk < :v", le5, false, 4, Seq(3, 0)},
      // BETWEEN 3 AND 6
      {"pk = :p AND sk BETWEEN :l AND :h", between, true, 2, std::nullopt},
      {"pk = :p AND sk BETWEEN :l AND :h", between, true, 3, Seq(4, 6)},
      {"pk = :p AND sk BETWEEN :l AND :h", between, true, 5, std::vector<int>{6}},
      {"pk = :p AND sk BETWEEN :l AND :h", between, true, 6, std::nullopt},
      {"pk = :p AND sk BETWEEN :l AND :h", between, true, 7, std::nullopt},
      {"pk = :p AND sk BETWEEN :l AND :h", between, false, 7, std::nullopt},
      {"pk = :p AND sk BETWEEN :l AND :h", between, false, 6, Seq(5, 3)},
      {"pk = :p AND sk BETWEEN :l AND :h", between, false, 4, std::vector<int>{3}},
      {"pk = :p AND sk BETWEEN :l AND :h", between, false, 3, std::vector<int>{}},
      {"pk = :p AND sk BETWEEN :l AND :h", between, false, 2, std::nullopt},
      // = 5 on a table selects at most one item: no start key can continue it.
      {"pk = :p AND sk = :v", ge5, true, 5, std::nullopt},
      {"pk = :p AND sk = :v", ge5, false, 5, std::nullopt},
      {"pk = :p AND sk = :v", ge5, true, 4, std::nullopt},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.kce) + (c.forward ? " forward" : " backward") +
                 " from sk=" + std::to_string(c.start));
    Outcome o = Query(c.kce, c.values, c.forward, Key(c.start));
    if (c.items) {
      ASSERT_FALSE(o.error) << *o.error;
      EXPECT_EQ(o.sks, *c.items);
    } else {
      EXPECT_EQ(o.error.value_or("<no error>"), kRangeError);
    }
  }
}

TEST_F(QueryOpsTest, StartKeyOfAnotherPartition) {
  CreateNumericTable();
  const std::string other = R"({"pk":{"S":"b"},"sk":{"N":"5"}})";
  // Without a sort key condition: the partition check and its message.
  EXPECT_EQ(Query("pk = :p", Values(), true, other).error.value_or(""), kPartitionError);
  EXPECT_EQ(Query("pk = :p", Values(), false, other).error.value_or(""), kPartitionError);
  // With one, DynamoDB reports the range predicate even when the sort key would match.
  EXPECT_EQ(Query("pk = :p AND sk >= :v", Values(V(":v", 1)), true, other).error.value_or(""),
            kRangeError);
  EXPECT_EQ(Query("pk = :p AND sk <= :v", Values(V(":v", 9)), false, other).error.value_or(""),
            kRangeError);
  // Legacy KeyConditions follow the same rules.
  Outcome legacy = Run(R"({"TableName":"qtable","KeyConditions":{
      "pk":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"a"}]},
      "sk":{"ComparisonOperator":"GT","AttributeValueList":[{"N":"5"}]}},
      "ExclusiveStartKey":{"pk":{"S":"a"},"sk":{"N":"2"}}})");
  EXPECT_EQ(legacy.error.value_or(""), kRangeError);
  legacy = Run(R"({"TableName":"qtable","KeyConditions":{
      "pk":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"a"}]},
      "sk":{"ComparisonOperator":"GT","AttributeValueList":[{"N":"5"}]}},
      "ExclusiveStartKey":{"pk":{"S":"a"},"sk":{"N":"7"}}})");
  ASSERT_FALSE(legacy.error) << *legacy.error;
  EXPECT_EQ(legacy.sks, Seq(8, 9));
  // In the partition without a sort key condition: accepted, both directions.
  EXPECT_EQ(Query("pk = :p", Values(), true, Key(7)).sks, Seq(8, 9));
  EXPECT_EQ(Query("pk = :p", Values(), false, Key(2)).sks, Seq(1, 0));
}

TEST_F(QueryOpsTest, BeginsWithStartKeys) {
  MustCall("CreateTable", R"({"TableName":"qtable","BillingMode":"PAY_PER_REQUEST",
      "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"},
        {"AttributeName":"sk","AttributeType":"S"}],
      "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}]})");
  for (const char* sk : {"a0", "a1", "a2", "b0", "b1"}) {
    MustCall("PutItem", std::string(R"({"TableName":"qtable","Item":{"pk":{"S":"p"},"sk":{"S":")") +
                            sk + R"("}}})");
  }
  auto q = [&](bool forward, const char* start) -> std::pair<std::string, std::string> {
    auto r = Call("Query", std::string(R"({"TableName":"qtable","KeyConditionExpression":)") +
                               R"x("pk = :p AND begins_with(sk, :b)","ExpressionAttributeValues":)x"
                               R"({":p":{"S":"p"},":b":{"S":"a"}},"ScanIndexForward":)" +
                               (forward ? "true" : "false") +
                               R"(,"ExclusiveStartKey":{"pk":{"S":"p"},"sk":{"S":")" + start +
                               R"("}}})");
    if (!r.ok()) return {"", r.error().message};
    std::string sks;
    for (const auto& item : (*r)["Items"].GetArray()) sks += item["sk"]["S"].GetString();
    return {sks, ""};
  };
  EXPECT_EQ(q(true, "a"), std::make_pair(std::string("a0a1a2"), std::string()));
  EXPECT_EQ(q(true, "a1"), std::make_pair(std::string("a2"), std::string()));
  EXPECT_EQ(q(true, "0"), std::make_pair(std::string(), std::string(kRangeError)));
  EXPECT_EQ(q(true, "b"), std::make_pair(std::string(), std::string(kRangeError)));
  EXPECT_EQ(q(false, "a2"), std::make_pair(std::string("a1a0"), std::string()));
  // Read backward, the prefix itself is the inclusive lower bound: a page that ended on an item
  // "a" hands it back as LastEvaluatedKey, so it is accepted and reads nothing.
  EXPECT_EQ(q(false, "a"), std::make_pair(std::string(), std::string()));
  EXPECT_EQ(q(false, "b"), std::make_pair(std::string(), std::string(kRangeError)));
  EXPECT_EQ(q(false, "a\xc3\xbf"), std::make_pair(std::string("a2a1a0"), std::string()));
}

TEST_F(QueryOpsTest, IndexStartKeysAtTheBoundsKeepPaginatingOverTies) {
  CreateNumericTable();
  auto gkey = [](int sk) {
    return R"({"pk":{"S":"a"},"sk":{"N":")" + std::to_string(sk) +
           R"("},"g":{"S":"a"},"gs":{"N":")" + std::to_string(sk / 2) + R"("}})";
  };
  const std::string g2 = R"({":p":{"S":"a"},":v":{"N":"2"}})";
  // gs = 2 holds sk 4 and 5: the start key of the first continues to the second.
  Outcome o = Query("g = :p AND gs = :v", g2, true, gkey(4), 0, "by_g");
  ASSERT_FALSE(o.error) << *o.error;
  EXPECT_EQ(o.sks, std::vector<int>{5});
  o = Query("g = :p AND gs = :v", g2, false, gkey(5), 0, "by_g");
  ASSERT_FALSE(o.error) << *o.error;
  EXPECT_EQ(o.sks, std::vector<int>{4});
  // gs >= 2 backward from the first item at the bound: accepted, nothing left.
  o = Query("g = :p AND gs >= :v", g2, false, gkey(4), 0, "by_g");
  ASSERT_FALSE(o.error) << *o.error;
  EXPECT_TRUE(o.sks.empty());
  // Outside the sort key condition, either direction.
  EXPECT_EQ(Query("g = :p AND gs >= :v", g2, true, gkey(3), 0, "by_g").error.value_or(""),
            kRangeError);
  EXPECT_EQ(Query("g = :p AND gs < :v", g2, false, gkey(4), 0, "by_g").error.value_or(""),
            kRangeError);
  // Another index partition.
  const std::string other = R"({"pk":{"S":"b"},"sk":{"N":"4"},"g":{"S":"b"},"gs":{"N":"2"}})";
  EXPECT_EQ(Query("g = :p AND gs >= :v", g2, true, other, 0, "by_g").error.value_or(""),
            kRangeError);
  EXPECT_EQ(Query("g = :p", Values(), true, other, 0, "by_g").error.value_or(""), kPartitionError);
  // The LSI: l = 9 - sk, so l >= 4 backward from l = 4 (sk 5) is at the bound.
  const std::string lkey = R"({"pk":{"S":"a"},"sk":{"N":"5"},"l":{"N":"4"}})";
  o = Query("pk = :p AND l >= :v", R"({":p":{"S":"a"},":v":{"N":"4"}})", false, lkey, 0, "by_l");
  ASSERT_FALSE(o.error) << *o.error;
  EXPECT_TRUE(o.sks.empty());
  EXPECT_EQ(Query("pk = :p AND l > :v", R"({":p":{"S":"a"},":v":{"N":"4"}})", true, lkey, 0, "by_l")
                .error.value_or(""),
            kRangeError);
}

// Every page size, every condition, both directions, tables and indexes: pages chained by
// their LastEvaluatedKey return every item once, in order. The only start key a chain may have
// rejected is the last page's, on a table, when that page ended on the inclusive upper bound
// of the range read forward (nothing can follow it; DynamoDB rejects it too) - never one with
// items after it, and never one read backward to an inclusive lower bound.
TEST_F(QueryOpsTest, PaginationAtEveryPageSize) {
  CreateNumericTable();
  struct Shape {
    const char* kce;
    std::string values;
    std::vector<int> forward_items;  // the sk values in forward order
    const char* index;
  };
  const std::vector<Shape> shapes = {
      {"pk = :p", Values(), Seq(0, 9), ""},
      {"pk = :p AND sk >= :v", Values(V(":v", 5)), Seq(5, 9), ""},
      {"pk = :p AND sk > :v", Values(V(":v", 5)), Seq(6, 9), ""},
      {"pk = :p AND sk <= :v", Values(V(":v", 5)), Seq(0, 5), ""},
      {"pk = :p AND sk < :v", Values(V(":v", 5)), Seq(0, 4), ""},
      {"pk = :p AND sk BETWEEN :l AND :h", Values(V(":l", 3) + V(":h", 6)), Seq(3, 6), ""},
      {"pk = :p AND sk = :v", Values(V(":v", 5)), {5}, ""},
      {"g = :p AND gs BETWEEN :l AND :h", Values(V(":l", 1) + V(":h", 3)), Seq(2, 7), "by_g"},
      {"g = :p AND gs = :v", Values(V(":v", 2)), {4, 5}, "by_g"},
      {"pk = :p AND l <= :v", Values(V(":v", 4)), Seq(9, 5), "by_l"},
  };
  for (const Shape& s : shapes) {
    for (bool forward : {true, false}) {
      std::vector<int> want = s.forward_items;
      if (!forward) want.assign(s.forward_items.rbegin(), s.forward_items.rend());
      for (int limit = 1; limit <= 11; ++limit) {
        SCOPED_TRACE(std::string(s.kce) + " " + s.index + (forward ? " forward" : " backward") +
                     " Limit " + std::to_string(limit));
        std::vector<int> got;
        std::string esk;
        for (int page = 0; page < 20; ++page) {
          Outcome o = Query(s.kce, s.values, forward, esk, limit, s.index);
          if (o.error) {
            EXPECT_EQ(*o.error, kRangeError);
            EXPECT_STREQ(s.index, "") << "an index chain was rejected";
            const bool eq = std::string(s.kce).find("sk = ") != std::string::npos;
            EXPECT_TRUE(forward || eq) << "a backward chain was rejected";
            EXPECT_EQ(got, want) << "rejected before every item was returned";
            break;
          }
          got.insert(got.end(), o.sks.begin(), o.sks.end());
          if (!o.last_key) break;
          esk = *o.last_key;
        }
        EXPECT_EQ(got, want);
      }
    }
  }
}

// Items larger than one engine value are stored split into chunks; Query (both directions)
// and Scan return each whole and exactly once, across pages ended by the 1 MB bound.
TEST_F(QueryOpsTest, SplitItemsAcrossPagesInBothDirections) {
  CreateNumericTable();
  auto big = [](int sk) { return std::string(300 * 1024, static_cast<char>('a' + sk)); };
  for (int i = 0; i < 10; ++i) {
    std::string item = R"({"pk":{"S":"c"},"sk":{"N":")" + std::to_string(i) + "\"}";
    if (i % 2 == 0) item += R"(,"big":{"S":")" + big(i) + "\"}";
    MustCall("PutItem", R"({"TableName":"qtable","Item":)" + item + "}}");
  }
  auto check_item = [&](const rapidjson::Value& item) {
    const int sk = std::stoi(item["sk"]["N"].GetString());
    EXPECT_EQ(item.HasMember("big"), sk % 2 == 0) << sk;
    if (item.HasMember("big")) {
      EXPECT_EQ(item["big"]["S"].GetString(), big(sk)) << sk;
    }
    return sk;
  };
  // Every page of `op` with `body` (without its closing brace): the sk of each item of
  // partition "c", and the number of pages.
  auto read_all = [&](const std::string& op, const std::string& body) {
    std::vector<int> sks;
    std::string esk;
    int pages = 0;
    while (pages < 20) {
      ++pages;
      auto r = Call(op, body + (esk.empty() ? "" : ",\"ExclusiveStartKey\":" + esk) + "}");
      EXPECT_TRUE(r.ok()) << r.error().message;
      if (!r.ok()) break;
      for (const auto& item : (*r)["Items"].GetArray()) {
        if (std::string(item["pk"]["S"].GetString()) == "c") sks.push_back(check_item(item));
      }
      if (!r->HasMember("LastEvaluatedKey")) break;
      esk = ToJson((*r)["LastEvaluatedKey"]);
    }
    return std::make_pair(sks, pages);
  };
  for (bool forward : {true, false}) {
    SCOPED_TRACE(forward ? "forward" : "backward");
    auto [got, pages] =
        read_all("Query", R"({"TableName":"qtable","KeyConditionExpression":"pk = :p",)"
                          R"("ExpressionAttributeValues":{":p":{"S":"c"}},"ScanIndexForward":)" +
                              std::string(forward ? "true" : "false"));
    EXPECT_EQ(got, forward ? Seq(0, 9) : Seq(9, 0));
    EXPECT_GE(pages, 2) << "1.5 MB of items must take more than one page";
  }
  std::vector<int> scanned = read_all("Scan", R"({"TableName":"qtable")").first;
  std::sort(scanned.begin(), scanned.end());
  EXPECT_EQ(scanned, Seq(0, 9));
}

// A GSI added by UpdateTable is CREATING with Backfilling until the index worker (not running
// here) has filled it: Query and Scan of it answer DynamoDB's message; the table stays
// readable.
TEST_F(QueryOpsTest, ReadingAnIndexThatIsStillBackfilling) {
  MustCall("CreateTable", R"({"TableName":"qtable","BillingMode":"PAY_PER_REQUEST",
      "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],
      "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}]})");
  MustCall("PutItem", R"({"TableName":"qtable","Item":{"pk":{"S":"1"},"g":{"S":"x"}}})");
  MustCall("UpdateTable", R"({"TableName":"qtable",
      "AttributeDefinitions":[{"AttributeName":"g","AttributeType":"S"}],
      "GlobalSecondaryIndexUpdates":[{"Create":{"IndexName":"late_gsi",
        "KeySchema":[{"AttributeName":"g","KeyType":"HASH"}],
        "Projection":{"ProjectionType":"ALL"}}}]})");
  const std::string message = "Cannot read from backfilling global secondary index: late_gsi";
  Outcome q = Run(R"({"TableName":"qtable","IndexName":"late_gsi","KeyConditionExpression":)"
                  R"("g = :g","ExpressionAttributeValues":{":g":{"S":"x"}}})");
  EXPECT_EQ(q.error.value_or("<no error>"), message);
  auto scan = Call("Scan", R"({"TableName":"qtable","IndexName":"late_gsi"})");
  ASSERT_FALSE(scan.ok());
  EXPECT_EQ(scan.error().type, ErrorType::kValidation);
  EXPECT_EQ(scan.error().message, message);
  EXPECT_TRUE(Call("Scan", R"({"TableName":"qtable"})").ok());
}

}  // namespace
}  // namespace fdyno::api

namespace fdyno::api {
namespace {

// The asynchronous form (network threads): a page of at most 64 KB is answered right away; a
// larger one is read again, whole, on ctx.blocking. Both answer exactly as the synchronous
// form does.
TEST_F(QueryOpsTest, AsyncFormAnswersSmallPagesAtOnceAndLargeOnesOnAWorker) {
  CreateNumericTable();
  // Partition "big": 40 items of 4 KB = 160 KB, past the 64 KB inline bound.
  const std::string pad(4000, 'x');
  for (int i = 0; i < 40; ++i) {
    MustCall("PutItem", R"({"TableName":"qtable","Item":{"pk":{"S":"big"},"sk":{"N":")" +
                            std::to_string(i) + R"("},"p":{"S":")" + pad + R"("}}})");
  }
  testing::BlockingThreads threads;
  RequestContext ctx = ctx_;
  ctx.blocking = threads.Blocking();
  const std::vector<std::pair<std::string, std::string>> requests = {
      {"Query", R"({"TableName":"qtable","KeyConditionExpression":"pk = :p",)"
                R"("ExpressionAttributeValues":{":p":{"S":"a"}}})"},
      {"Query", R"({"TableName":"qtable","IndexName":"by_g","KeyConditionExpression":"g = :p",)"
                R"("ExpressionAttributeValues":{":p":{"S":"b"}},"Limit":3})"},
      {"Query", R"({"TableName":"qtable","KeyConditionExpression":"pk = :p",)"
                R"("ExpressionAttributeValues":{":p":{"S":"nope"}},"Select":"COUNT"})"},
      {"Query", R"({"TableName":"missing","KeyConditionExpression":"pk = :p",)"
                R"("ExpressionAttributeValues":{":p":{"S":"a"}}})"},
  };
  for (const auto& [op, json] : requests) {
    auto sync = testing::CallOperation(registry_, op, json, ctx_);
    auto async = testing::CallOperationAsync(registry_, op, json, ctx);
    ASSERT_EQ(sync.ok(), async.ok()) << json;
    EXPECT_EQ(sync.ok() ? *sync : sync.error().message,
              async.ok() ? *async : async.error().message);
  }
  EXPECT_EQ(threads.started(), 0);  // every page above was small

  for (const char* op : {"Query", "Scan"}) {
    const std::string json = std::string(op) == "Query"
                                 ? R"({"TableName":"qtable","KeyConditionExpression":"pk = :p",)"
                                   R"("ExpressionAttributeValues":{":p":{"S":"big"}}})"
                                 : R"({"TableName":"qtable"})";
    auto sync = testing::CallOperation(registry_, op, json, ctx_);
    auto async = testing::CallOperationAsync(registry_, op, json, ctx);
    ASSERT_TRUE(sync.ok()) << sync.error().message;
    ASSERT_TRUE(async.ok()) << async.error().message;
    EXPECT_EQ(*sync, *async);
    EXPECT_GT(sync->size(), 160'000u);
  }
  EXPECT_EQ(threads.started(), 2);  // the 160 KB Query and the Scan went to the worker
}

}  // namespace
}  // namespace fdyno::api
