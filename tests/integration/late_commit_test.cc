// A commit_unknown_result whose commit lands late, after the retry has taken its read version
// (FoundationDB documents it; kv/engines/faulty's unknown_late): every write operation still
// applies exactly once. The retry read a state without the first attempt, so only its read of
// the receipt or token record the late commit wrote (a conflict, then a replay) keeps it from
// applying twice.
//
// Each request adds 1 to a counter item of its operation and leaves a marker of its own (an
// attribute, or an item in the same transaction). Its fate is then known exactly: answered (it
// must have applied), or failed with its outcome unknown and settled by its marker; every
// counter equals the markers of its operation, and DescribeTable's ItemCount equals the items.
// Synchronous handlers and the asynchronous ones (the embedded engine's real CommitAsync, as
// `fdyno serve` runs writes). Seeds: FDYNO_SEED, else 1-2 (FDYNO_FULL=1: 1-6).
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "api/api.h"
#include "api/testing/call.h"
#include "faulty_registry.h"
#include "kv/engines/embedded/embedded.h"
#include "kv/engines/faulty/faulty.h"
#include "kv/run.h"
#include "seeds.h"
#include "store/catalog.h"

namespace fdyno::api {
namespace {

using integration::FullRun;

std::vector<uint64_t> Seeds() { return integration::Seeds(2, 6); }

rapidjson::Document Parse(const std::string& text) {
  rapidjson::Document d;
  d.Parse(text.c_str(), text.size());
  return d;
}

std::string S(const std::string& s) { return R"({"S":")" + s + R"("})"; }
std::string Key(const std::string& pk) { return R"({"pk":)" + S(pk) + "}"; }

// One operation family: the request for its i-th write (its counter, its marker), and how a
// marker is found.
struct Family {
  std::string name;  // also the counter item's key
  std::string (*request)(const std::string& counter, int i);
  std::string op;
  bool marker_is_item = false;  // the marker is item <name>-<i>, else attribute m<i> of the counter
};

std::string MarkerItem(const std::string& counter, int i) {
  return counter + "-" + std::to_string(i);
}
std::string AddToCounter(const std::string& counter) {
  return R"({"Update":{"TableName":"late","Key":)" + Key(counter) +
         R"(,"UpdateExpression":"ADD n :one","ExpressionAttributeValues":{":one":{"N":"1"}}}})";
}
std::string PutMarker(const std::string& counter, int i) {
  return R"({"Put":{"TableName":"late","Item":)" + Key(MarkerItem(counter, i)) + "}}";
}

const std::vector<Family>& Families() {
  static const std::vector<Family> families = {
      {"update",
       [](const std::string& c, int i) {
         return R"({"TableName":"late","Key":)" + Key(c) +
                R"(,"UpdateExpression":"ADD n :one SET #m = :one",)"
                R"("ExpressionAttributeNames":{"#m":"m)" +
                std::to_string(i) + R"("},"ExpressionAttributeValues":{":one":{"N":"1"}}})";
       },
       "UpdateItem"},
      {"put",  // a new item each time: a second apply would answer it as its own old image
       [](const std::string& c, int i) {
         return R"({"TableName":"late","ReturnValues":"ALL_OLD","Item":)" + Key(MarkerItem(c, i)) +
                "}";
       },
       "PutItem", true},
      // BatchWriteItem's puts are idempotent: a second apply leaves the same item and answers
      // the same, so only a lost write would show here.
      {"batch",
       [](const std::string& c, int i) {
         return R"({"RequestItems":{"late":[{"PutRequest":{"Item":)" + Key(MarkerItem(c, i)) +
                R"(}},{"PutRequest":{"Item":)" + Key(MarkerItem(c + "x", i)) + "}}]}}";
       },
       "BatchWriteItem", true},
      {"txn",
       [](const std::string& c, int i) {
         return R"({"TransactItems":[)" + AddToCounter(c) + "," + PutMarker(c, i) + "]}";
       },
       "TransactWriteItems", true},
      {"txntok",
       [](const std::string& c, int i) {
         return R"({"ClientRequestToken":"tok-)" + std::to_string(i) + R"(","TransactItems":[)" +
                AddToCounter(c) + "," + PutMarker(c, i) + "]}";
       },
       "TransactWriteItems", true},
      {"stmt",
       [](const std::string& c, int i) {
         return R"({"Statement":"UPDATE \"late\" SET n = n + 1 SET m)" + std::to_string(i) +
                R"( = 1 WHERE pk = ')" + c + R"('"})";
       },
       "ExecuteStatement"},
      {"ptxn",
       [](const std::string& c, int i) {
         return R"({"ClientRequestToken":"ptok-)" + std::to_string(i) +
                R"(","TransactStatements":[{"Statement":"UPDATE \"late\" SET n = n + 1 WHERE pk = ')" +
                c + R"('"},{"Statement":"INSERT INTO \"late\" VALUE {'pk': ')" + MarkerItem(c, i) +
                R"('}"}]})";
       },
       "ExecuteTransaction", true},
  };
  return families;
}

class LateCommit {
 public:
  LateCommit(uint64_t seed, bool async)
      : seed_(seed), async_(async), api_("fdyno_late", seed, async) {}

  Result<std::string> Call(const std::string& op, const std::string& json) {
    return api_.Call(op, json);
  }

  void Run() {
    ASSERT_TRUE(Call("CreateTable", R"({"TableName":"late","BillingMode":"PAY_PER_REQUEST",
        "KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],
        "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}]})")
                    .ok());
    for (const Family& f : Families()) {
      ASSERT_TRUE(Call("PutItem",
                       R"({"TableName":"late","Item":{"pk":)" + S(f.name) + R"(,"n":{"N":"0"}}})")
                      .ok());
    }
    kv::FaultOptions faults;
    faults.seed = seed_;
    faults.unknown_late = 0.3;
    api_.faulty().SetOptions(faults);
    const int writes = FullRun() ? 200 : 40;
    std::map<std::string, std::vector<bool>> answered;
    for (int i = 0; i < writes; ++i) {
      for (const Family& f : Families()) {
        Result<std::string> r = Call(f.op, f.request(f.name, i));
        if (!r.ok()) {
          ASSERT_TRUE(kv::IsOutcomeUnknown(r.error())) << f.op << ": " << r.error().message;
        }
        answered[f.name].push_back(r.ok());
        if (r.ok() && f.op == "PutItem") {
          EXPECT_FALSE(Parse(*r).HasMember("Attributes"))
              << "PutItem " << i << " answered an old image of itself: applied twice";
        }
      }
    }
    const kv::FaultCounts counts = api_.faulty().counts();
    api_.faulty().SetOptions(kv::FaultOptions{});
    api_.retries().JoinAll();
    EXPECT_GT(counts.unknown_late_applied, writes) << "too few late commits landed";
    int unknown = 0;
    for (const Family& f : Families()) {
      const std::vector<bool>& ok = answered[f.name];
      const int applied = CheckFamily(f, ok);
      unknown += static_cast<int>(std::count(ok.begin(), ok.end(), false));
      std::cout << "  " << f.op << " (" << f.name << "): " << applied << " of " << ok.size()
                << " applied, " << std::count(ok.begin(), ok.end(), false) << " unanswered"
                << std::endl;
    }
    CheckItemCount();
    std::cout << "  seed " << seed_ << (async_ ? " async" : " sync") << ": " << counts.unknown_late
              << " late 1021s, " << counts.unknown_late_applied
              << " landed before the retry's commit, " << unknown << " requests unanswered"
              << std::endl;
  }

 private:
  // The requests of `f` that applied, each exactly once: returns how many.
  int CheckFamily(const Family& f, const std::vector<bool>& answered) {
    auto counter =
        Call("GetItem", R"({"TableName":"late","ConsistentRead":true,"Key":)" + Key(f.name) + "}");
    EXPECT_TRUE(counter.ok());
    rapidjson::Document c = Parse(*counter);
    int applied = 0;
    for (int i = 0; i < static_cast<int>(answered.size()); ++i) {
      bool marked = false;
      if (f.marker_is_item) {
        auto m = Call("GetItem", R"({"TableName":"late","ConsistentRead":true,"Key":)" +
                                     Key(MarkerItem(f.name, i)) + "}");
        EXPECT_TRUE(m.ok());
        marked = Parse(*m).HasMember("Item");
      } else {
        marked = c["Item"].HasMember(("m" + std::to_string(i)).c_str());
      }
      EXPECT_TRUE(marked || !answered[i]) << f.op << " " << i << " answered, not applied";
      applied += marked;
    }
    if (f.name != "put" && f.name != "batch") {
      EXPECT_EQ(std::stoi(c["Item"]["n"]["N"].GetString()), applied)
          << f.op << " (" << f.name << "): the counter is not the number of requests applied";
    }
    return applied;
  }

  // Every item counted once: a put applied twice as new would count its item twice.
  void CheckItemCount() {
    int items = 0;
    std::string start;
    for (int page = 0; page < 1000; ++page) {
      auto r = Call("Scan", R"({"TableName":"late","ConsistentRead":true)" +
                                (start.empty() ? "" : R"(,"ExclusiveStartKey":)" + start) + "}");
      ASSERT_TRUE(r.ok());
      rapidjson::Document d = Parse(*r);
      items += d["Count"].GetInt();
      if (!d.HasMember("LastEvaluatedKey")) break;
      start = Key(d["LastEvaluatedKey"]["pk"]["S"].GetString());
    }
    auto describe = Call("DescribeTable", R"({"TableName":"late"})");
    ASSERT_TRUE(describe.ok());
    EXPECT_EQ(Parse(*describe)["Table"]["ItemCount"].GetInt(), items);
  }

  uint64_t seed_;
  bool async_;
  integration::FaultyRegistry api_;
};

TEST(LateCommitTest, EveryWriteAppliesOnceWhenItsUnknownCommitLandsAfterTheRetryRead) {
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE("seed " + std::to_string(seed) + " (replay: FDYNO_SEED=" + std::to_string(seed) +
                 ")");
    LateCommit(seed, /*async=*/false).Run();
  }
}

TEST(LateCommitTest, EveryAsynchronousWriteAppliesOnceWhenItsUnknownCommitLandsLate) {
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE("seed " + std::to_string(seed) + " (replay: FDYNO_SEED=" + std::to_string(seed) +
                 ")");
    LateCommit(seed, /*async=*/true).Run();
  }
}

}  // namespace
}  // namespace fdyno::api
