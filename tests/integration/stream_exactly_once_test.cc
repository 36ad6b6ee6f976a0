// Stream records under injected commit_unknown_result: exactly one record for each committed
// change, none for a change that did not commit.
//
// The real handlers run on the embedded engine wrapped by the fault-injecting engine, which
// makes commits fail with 1021 after applying or without applying, and with 1020. Four threads
// write their own keys through PutItem, UpdateItem, DeleteItem, TransactWriteItems and
// BatchWriteItem, each write setting the attribute `w` to an id never used before. The kv retry
// runner and the operation receipts must turn every 1021 into exactly one effect. Then the whole
// stream is read through the Streams API:
//  * no write id appears twice (no change recorded twice, and no change applied twice);
//  * every acknowledged put or update id appears once, as the NewImage of its key;
//  * a failed write's id (its outcome unknown to the client) appears at most once;
//  * every REMOVE's OldImage is the image the key had, and the stream replayed from
//    TRIM_HORIZON, in order, equals the table read by Scan.
//
// Seeds 1..2; FDYNO_FULL=1 runs 1..6 with more writes; FDYNO_SEED=n replays one.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "api/api.h"
#include "api/testing/call.h"
#include "faulty_registry.h"
#include "kv/engines/embedded/embedded.h"
#include "kv/engines/faulty/faulty.h"
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

std::string Item(const std::string& pk, int64_t w) {
  return R"({"pk":{"S":")" + pk + R"("},"w":{"N":")" + std::to_string(w) + R"("}})";
}
std::string Key(const std::string& pk) { return R"({"pk":{"S":")" + pk + R"("}})"; }

// What a thread knows of its writes.
struct Journal {
  std::set<int64_t> acknowledged;  // put/update ids whose request succeeded
  std::set<int64_t> failed;        // ids whose request failed: they may or may not have applied
  int64_t deletes_acknowledged = 0;
};

class StreamExactlyOnce {
 public:
  StreamExactlyOnce(uint64_t seed, bool async)
      : seed_(seed), async_(async), api_("fdyno_seo", seed, async) {}

  Result<std::string> Call(const std::string& op, const std::string& json) {
    return api_.Call(op, json);
  }
  Result<std::string> CallStreams(const std::string& op, const std::string& json) {
    rapidjson::Document doc;
    RequestContext ctx;
    doc.Parse(json.c_str(), json.size());
    ctx.deadline = ctx.clock->Now() + std::chrono::seconds(30);
    const Handler* h = api_.registry().Find(Service::kStreams, op);
    EXPECT_NE(h, nullptr);
    return (*h)(ctx, doc);
  }

  void Run() {
    ASSERT_TRUE(Call("CreateTable",
                     R"({"TableName":"seo","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],
      "AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],"BillingMode":"PAY_PER_REQUEST",
      "StreamSpecification":{"StreamEnabled":true,"StreamViewType":"NEW_AND_OLD_IMAGES"}})")
                    .ok());
    kv::FaultOptions faults;
    faults.seed = seed_;
    faults.commit_conflict = 0.05;
    faults.unknown_applied = 0.12;
    faults.unknown_not_applied = 0.12;
    if (async_) {
      ASSERT_TRUE(api_.faulty().CommitsAsynchronously());
      faults.commit_timed_out = 0.05;
    }
    api_.faulty().SetOptions(faults);
    const int writes = FullRun() ? 600 : 150;
    std::vector<std::thread> threads;
    journals_.resize(4);
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([this, t, writes] { Writer(t, writes); });
    }
    for (auto& th : threads) th.join();
    api_.retries().JoinAll();
    faults = kv::FaultOptions();
    faults.seed = seed_;
    api_.faulty().SetOptions(faults);
    const kv::FaultCounts counts = api_.faulty().counts();
    std::cout << "seed " << seed_ << ": 1021 after applying " << counts.unknown_applied
              << ", 1021 without " << counts.unknown_not_applied << ", 1020 " << counts.conflicts
              << ", 1031 after applying " << counts.commit_timeouts_applied
              << (async_ ? " (asynchronous commits)" : "") << std::endl;
    EXPECT_GT(counts.unknown_applied, 10);
    EXPECT_GT(counts.unknown_not_applied, 10);
    if (async_) {
      EXPECT_GT(api_.retries().started(), 10) << "retries never left the committing thread";
    }
    Check();
  }

 private:
  // Writes `n` times over keys t0..t4 of thread t, recording each id's fate.
  void Writer(int t, int n) {
    std::mt19937_64 rng(seed_ * 131 + static_cast<uint64_t>(t));
    Journal& j = journals_[static_cast<size_t>(t)];
    for (int i = 0; i < n; ++i) {
      const int64_t id = static_cast<int64_t>(t) * 1'000'000 + i + 1;
      const std::string pk = "t" + std::to_string(t) + "k" + std::to_string(rng() % 5);
      std::vector<int64_t> ids = {id};
      Result<std::string> r = std::string();
      switch (rng() % 5) {
        case 0:
          r = Call("PutItem", R"({"TableName":"seo","Item":)" + Item(pk, id) + "}");
          break;
        case 1:
          // ADD is not idempotent: applied twice, it would record a second MODIFY.
          r = Call(
              "UpdateItem",
              R"({"TableName":"seo","Key":)" + Key(pk) +
                  R"(,"UpdateExpression":"SET w = :w ADD n :one","ExpressionAttributeValues":{":w":{"N":")" +
                  std::to_string(id) + R"("},":one":{"N":"1"}}})");
          break;
        case 2:
          ids.clear();
          r = Call("DeleteItem", R"({"TableName":"seo","Key":)" + Key(pk) + "}");
          if (r.ok()) ++j.deletes_acknowledged;
          break;
        case 3: {
          const std::string other = "t" + std::to_string(t) + "x" + std::to_string(rng() % 3);
          ids.push_back(id + 500'000);
          r = Call("TransactWriteItems", R"({"TransactItems":[{"Put":{"TableName":"seo","Item":)" +
                                             Item(pk, id) +
                                             R"(}},{"Put":{"TableName":"seo","Item":)" +
                                             Item(other, id + 500'000) + "}}]}");
          break;
        }
        default:
          r = Call("BatchWriteItem",
                   R"({"RequestItems":{"seo":[{"PutRequest":{"Item":)" + Item(pk, id) + "}}]}}");
          if (r.ok() && Parse(*r)["UnprocessedItems"].MemberCount() > 0) {
            r = Error::Internal("unprocessed");
          }
          break;
      }
      for (int64_t w : ids) (r.ok() ? j.acknowledged : j.failed).insert(w);
    }
  }

  // Every record of the stream, in order (one shard), as (event, key, old w, new w).
  struct Rec {
    std::string event;
    std::string pk;
    std::optional<int64_t> old_w, new_w;
  };

  static std::optional<int64_t> W(const rapidjson::Value& record, const char* image) {
    const rapidjson::Value& d = record["dynamodb"];
    if (!d.HasMember(image)) return std::nullopt;
    return std::stoll(d[image]["w"]["N"].GetString());
  }

  std::vector<Rec> ReadStream() {
    rapidjson::Document listed = Parse(*CallStreams("ListStreams", R"({"TableName":"seo"})"));
    const std::string arn = listed["Streams"][0]["StreamArn"].GetString();
    rapidjson::Document desc =
        Parse(*CallStreams("DescribeStream", R"({"StreamArn":")" + arn + R"("})"));
    EXPECT_EQ(desc["StreamDescription"]["Shards"].Size(), 1u);
    const std::string shard = desc["StreamDescription"]["Shards"][0]["ShardId"].GetString();
    rapidjson::Document it = Parse(
        *CallStreams("GetShardIterator", R"({"StreamArn":")" + arn + R"(","ShardId":")" + shard +
                                             R"(","ShardIteratorType":"TRIM_HORIZON"})"));
    std::string iterator = it["ShardIterator"].GetString();
    std::vector<Rec> out;
    for (int page = 0; page < 10000; ++page) {
      Result<std::string> r =
          CallStreams("GetRecords", R"({"ShardIterator":")" + iterator + R"(","Limit":97})");
      EXPECT_TRUE(r.ok());
      rapidjson::Document d = Parse(*r);
      for (const auto& rec : d["Records"].GetArray()) {
        out.push_back({rec["eventName"].GetString(), rec["dynamodb"]["Keys"]["pk"]["S"].GetString(),
                       W(rec, "OldImage"), W(rec, "NewImage")});
      }
      if (d["Records"].Empty()) break;
      iterator = d["NextShardIterator"].GetString();
    }
    return out;
  }

  std::map<std::string, int64_t> ScanTable() {
    std::map<std::string, int64_t> out;
    rapidjson::Document d = Parse(*Call("Scan", R"({"TableName":"seo","ConsistentRead":true})"));
    for (const auto& item : d["Items"].GetArray()) {
      out[item["pk"]["S"].GetString()] = std::stoll(item["w"]["N"].GetString());
    }
    return out;
  }

  void Check() {
    const std::vector<Rec> records = ReadStream();
    std::map<std::string, int64_t> replayed;
    std::multiset<int64_t> seen;
    for (const Rec& r : records) {
      auto before = replayed.find(r.pk);
      const std::optional<int64_t> prev =
          before == replayed.end() ? std::nullopt : std::optional<int64_t>(before->second);
      ASSERT_EQ(r.old_w, prev) << r.event << " " << r.pk << ": OldImage is not the last image";
      if (r.event == "REMOVE") {
        replayed.erase(r.pk);
      } else {
        ASSERT_TRUE(r.new_w);
        replayed[r.pk] = *r.new_w;
        seen.insert(*r.new_w);
      }
    }
    EXPECT_EQ(replayed, ScanTable()) << "the stream replayed is not the table";
    std::set<int64_t> in_table;
    for (const auto& [pk, w] : ScanTable()) in_table.insert(w);
    for (const Journal& j : journals_) {
      for (int64_t id : j.acknowledged) {
        EXPECT_EQ(seen.count(id), 1u) << "acknowledged write " << id;
      }
      for (int64_t id : j.failed) EXPECT_LE(seen.count(id), 1u) << "failed write " << id;
    }
    for (int64_t id : seen) EXPECT_EQ(seen.count(id), 1u) << "write " << id << " recorded twice";
    std::cout << "  " << records.size() << " records checked" << std::endl;
  }

  uint64_t seed_;
  bool async_;
  integration::FaultyRegistry api_;
  std::vector<Journal> journals_;
};

TEST(StreamExactlyOnceTest, OneRecordPerCommittedChangeUnderUnknownResults) {
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    StreamExactlyOnce t(seed, /*async=*/false);
    ASSERT_NO_FATAL_FAILURE(t.Run());
  }
}

TEST(StreamExactlyOnceTest, OneRecordPerCommittedChangeUnderUnknownResultsOfAsynchronousCommits) {
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    StreamExactlyOnce t(seed, /*async=*/true);
    ASSERT_NO_FATAL_FAILURE(t.Run());
  }
}

}  // namespace
}  // namespace fdyno::api
