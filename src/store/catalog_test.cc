#include "store/catalog.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "kv/engines/embedded/embedded.h"
#include "kv/engines/faulty/faulty.h"
#include "kv/run.h"
#include "kv/testing/memory_engine.h"
#include "store/backups.h"
#include "store/layout.h"
#include "store/pitr.h"
#include "store/regions_migration.h"
#include "store/streams.h"

namespace fdyno::store {
namespace {

constexpr std::string_view kAccountA = "111111111111";
constexpr std::string_view kAccountB = "222222222222";
constexpr std::string_view kRegion = "us-east-1";
constexpr std::string_view kOtherRegion = "eu-west-1";

TableInfo SimpleTable(std::string name, std::string_view account = kSharedAccount,
                      std::string_view region = kRegion) {
  TableInfo t;
  t.account = std::string(account);
  t.region = std::string(region);
  t.name = std::move(name);
  t.attribute_definitions = {{"pk", ScalarType::kS}, {"sk", ScalarType::kN}};
  t.key_schema.hash = {"pk", ScalarType::kS};
  t.key_schema.range = AttributeDefinition{"sk", ScalarType::kN};
  t.throughput.read_capacity_units = 5;
  t.throughput.write_capacity_units = 7;
  return t;
}

// Runs the catalog tests over the in-memory engine and the embedded (RocksDB) engine.
class CatalogTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "memory") {
      db_ = kv::OpenMemoryEngine();
    } else {
      dir_ = std::filesystem::temp_directory_path() /
             ("fdyno_catalog_test_" + std::to_string(::getpid()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name());
      std::filesystem::remove_all(dir_);
      kv::EmbeddedOptions options;
      options.path = dir_.string();
      options.durability = kv::Durability::kNone;
      auto db = kv::OpenEmbedded(options);
      ASSERT_TRUE(db.ok()) << db.error().message;
      db_ = std::move(db).value();
    }
  }
  void TearDown() override {
    db_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  template <typename Body>
  auto Run(Body&& body) {
    return kv::Run(*db_, std::forward<Body>(body));
  }

  Result<std::shared_ptr<const TableInfo>> Create(Catalog& catalog, TableInfo info,
                                                  std::vector<Tag> tags = {}) {
    return Run(
        [&](kv::Transaction& txn, const kv::Attempt&) { return catalog.Create(txn, info, tags); });
  }
  Result<std::shared_ptr<const TableInfo>> Find(Catalog& catalog, const std::string& name,
                                                std::string_view account = kSharedAccount,
                                                std::string_view region = kRegion) {
    return Run([&](kv::Transaction& txn, const kv::Attempt&) {
      return catalog.Find(txn, {account, region}, name);
    });
  }
  Status Drop(Catalog& catalog, const std::string& name, std::string_view account = kSharedAccount,
              std::string_view region = kRegion) {
    return Run([&](kv::Transaction& txn, const kv::Attempt&) -> Status {
      FDYNO_ASSIGN_OR_RETURN(auto info, catalog.Find(txn, {account, region}, name));
      if (!info) return Error::ResourceNotFound(name);
      return catalog.Drop(txn, *info);
    });
  }

  std::filesystem::path dir_;
  std::unique_ptr<kv::Database> db_;
};

TEST_P(CatalogTest, CreateThenFind) {
  ManualClock clock(1'700'000'123'456);
  Catalog catalog(&clock);
  TableInfo t = SimpleTable("orders");
  SecondaryIndex gsi;
  gsi.name = "by_sk";
  gsi.key_schema.hash = {"sk", ScalarType::kN};
  gsi.projection.type = ProjectionType::kInclude;
  gsi.projection.non_key_attributes = {"a", "b"};
  t.global_indexes.push_back(gsi);
  auto created = Create(catalog, t);
  ASSERT_TRUE(created.ok()) << created.error().message;
  EXPECT_EQ((*created)->id, 1);
  EXPECT_EQ((*created)->creation_ms, 1'700'000'123'456);
  EXPECT_EQ((*created)->uuid.size(), 36u);
  EXPECT_EQ((*created)->global_indexes[0].id, 1);
  EXPECT_EQ((*created)->next_index_id, 2);

  // A second catalog over the same database (another process) sees the same record.
  Catalog other(&clock);
  auto found = Find(other, "orders");
  ASSERT_TRUE(found.ok()) << found.error().message;
  ASSERT_NE(*found, nullptr);
  EXPECT_EQ(**found, **created);

  auto second = Create(catalog, SimpleTable("payments"));
  ASSERT_TRUE(second.ok());
  EXPECT_EQ((*second)->id, 2);

  auto missing = Find(catalog, "nope");
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(*missing, nullptr);
}

// Names a caller makes up are looked up, answered absent, and never grow the cache without
// bound; present tables stay cached beside them, and a created name is found at once.
TEST_P(CatalogTest, AbsentNamesCachedOnlyUpToABound) {
  Catalog catalog;
  ASSERT_TRUE(Create(catalog, SimpleTable("real")).ok());
  ASSERT_NE(*Find(catalog, "real"), nullptr);
  for (int i = 0; i < 5000; ++i) {
    auto r = Find(catalog, "made-up-" + std::to_string(i));
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(*r, nullptr);
  }
  EXPECT_LE(catalog.CachedNames(), 1u + 256u);
  EXPECT_GE(catalog.CachedNames(), 2u);  // absent names are still cached, up to the bound
  ASSERT_NE(*Find(catalog, "real"), nullptr);
  ASSERT_TRUE(Create(catalog, SimpleTable("made-up-4999")).ok());
  ASSERT_NE(*Find(catalog, "made-up-4999"), nullptr);
  EXPECT_EQ(*Find(catalog, "made-up-10"), nullptr);
}

TEST_P(CatalogTest, CreateExistingNameIsResourceInUse) {
  Catalog catalog;
  ASSERT_TRUE(Create(catalog, SimpleTable("t1")).ok());
  auto again = Create(catalog, SimpleTable("t1"));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().type, ErrorType::kResourceInUse);
  EXPECT_EQ(again.error().message, "Table already exists: t1");
}

TEST_P(CatalogTest, DropFreesNameAndRecreateGetsFreshIdAndNoOldData) {
  Catalog catalog;
  auto first = Create(catalog, SimpleTable("t1"), {{"env", "dev"}});
  ASSERT_TRUE(first.ok());
  int64_t old_id = (*first)->id;
  // Some data of the first incarnation.
  ASSERT_TRUE(Run([&](kv::Transaction& txn, const kv::Attempt&) -> Status {
                for (int i = 0; i < 25; ++i) {
                  txn.Set(layout::Items(old_id).Pack(kv::Tuple{i}), "v");
                }
                return Status::Ok();
              }).ok());

  ASSERT_TRUE(Drop(catalog, "t1").ok());
  auto gone = Find(catalog, "t1");
  ASSERT_TRUE(gone.ok());
  EXPECT_EQ(*gone, nullptr);

  auto second = Create(catalog, SimpleTable("t1"));
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_NE((*second)->id, old_id);
  auto tags = Run([&](kv::Transaction& txn, const kv::Attempt&) {
    return catalog.GetTags(txn, (*second)->id);
  });
  ASSERT_TRUE(tags.ok());
  EXPECT_TRUE(tags->empty());

  auto count_old = [&]() {
    return Run([&](kv::Transaction& txn, const kv::Attempt&) -> Result<size_t> {
      auto [b, e] = layout::Table(old_id).Range();
      FDYNO_ASSIGN_OR_RETURN(kv::RangeResult r, txn.GetRange(b, e));
      return r.kvs.size();
    });
  };
  EXPECT_EQ(*count_old(), 25u);
  // Purge in batches of 4 keys: several transactions, then the marker goes away.
  Catalog small_batches(Clock::Real(), CatalogOptions{4});
  auto purged = small_batches.PurgeDropped(*db_);
  ASSERT_TRUE(purged.ok()) << purged.error().message;
  EXPECT_EQ(*purged, 1);
  EXPECT_EQ(*count_old(), 0u);
  auto marker = Run([&](kv::Transaction& txn, const kv::Attempt&) {
    return txn.Get(Catalog::PendingPurgeKey(old_id));
  });
  ASSERT_TRUE(marker.ok());
  EXPECT_FALSE(marker->has_value());
  // Nothing left to purge.
  EXPECT_EQ(*small_batches.PurgeDropped(*db_), 0);
}

// A drop that holds its data (a backup of the deleted table is still to read it) is left by the
// purge until released.
TEST_P(CatalogTest, HeldDropIsPurgedOnlyOnceReleased) {
  Catalog catalog;
  auto t = Create(catalog, SimpleTable("held"));
  ASSERT_TRUE(t.ok());
  const int64_t id = (*t)->id;
  ASSERT_TRUE(Run([&](kv::Transaction& txn, const kv::Attempt&) -> Status {
                txn.Set(layout::Items(id).Pack(kv::Tuple{1}), "v");
                return catalog.Drop(txn, **t, /*hold=*/true);
              }).ok());
  auto item = [&]() {
    return *Run([&](kv::Transaction& txn, const kv::Attempt&) {
      return txn.Get(layout::Items(id).Pack(kv::Tuple{1}));
    });
  };
  EXPECT_EQ(*catalog.PurgeDropped(*db_), 0);
  EXPECT_TRUE(item().has_value());
  ASSERT_TRUE(Run([&](kv::Transaction& txn, const kv::Attempt&) -> Status {
                Catalog::ReleaseDropped(txn, id);
                return Status::Ok();
              }).ok());
  EXPECT_EQ(*catalog.PurgeDropped(*db_), 1);
  EXPECT_FALSE(item().has_value());
}

TEST_P(CatalogTest, CacheIsInvalidatedByAnotherCatalogsChange) {
  Catalog a;
  Catalog b;
  ASSERT_TRUE(Create(a, SimpleTable("t1")).ok());
  auto cached = Find(a, "t1");
  ASSERT_TRUE(cached.ok());
  EXPECT_EQ((*cached)->throughput.read_capacity_units, 5);
  // Served from the cache: the same object.
  EXPECT_EQ(Find(a, "t1")->get(), cached->get());

  ASSERT_TRUE(Run([&](kv::Transaction& txn, const kv::Attempt&) -> Status {
                FDYNO_ASSIGN_OR_RETURN(auto info, b.Find(txn, {kSharedAccount, kRegion}, "t1"));
                TableInfo changed = *info;
                changed.throughput.read_capacity_units = 42;
                return b.Update(txn, changed);
              }).ok());
  auto fresh = Find(a, "t1");
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ((*fresh)->throughput.read_capacity_units, 42);

  // A drop through b is seen by a, whose cache had the table.
  ASSERT_TRUE(Drop(b, "t1").ok());
  auto dropped = Find(a, "t1");
  ASSERT_TRUE(dropped.ok());
  EXPECT_EQ(*dropped, nullptr);
  // And a negative entry is invalidated by a create through b.
  ASSERT_TRUE(Create(b, SimpleTable("t1")).ok());
  auto recreated = Find(a, "t1");
  ASSERT_TRUE(recreated.ok());
  ASSERT_NE(*recreated, nullptr);
}

TEST_P(CatalogTest, WriterConflictsWithConcurrentDrop) {
  Catalog a;
  Catalog b;
  ASSERT_TRUE(Create(a, SimpleTable("t1")).ok());
  ASSERT_TRUE(Find(a, "t1").ok());  // warm a's cache

  // An item write that read the metadata (from the cache) before the table was dropped must
  // not commit.
  auto writer = db_->CreateTransaction();
  auto info = a.Find(*writer, {kSharedAccount, kRegion}, "t1");
  ASSERT_TRUE(info.ok());
  ASSERT_NE(*info, nullptr);
  writer->Set(layout::Items((*info)->id).Pack(kv::Tuple{"k"}), "v");

  ASSERT_TRUE(Drop(b, "t1").ok());
  Status commit = writer->Commit();
  ASSERT_FALSE(commit.ok());
  EXPECT_EQ(commit.error().kv_code, kv::kNotCommitted);
}

TEST_P(CatalogTest, ListPagesInNameOrder) {
  Catalog catalog;
  for (std::string name : {"b.t", "a-1", "c_x", "a", "A9", "ab"}) {
    ASSERT_TRUE(Create(catalog, SimpleTable(name)).ok());
  }
  auto list = [&](std::string start, int limit) {
    return Run([&](kv::Transaction& txn, const kv::Attempt&) {
      return catalog.List(txn, {kSharedAccount, kRegion}, start, limit);
    });
  };
  auto all = list("", 100);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->names, (std::vector<std::string>{"A9", "a", "a-1", "ab", "b.t", "c_x"}));
  EXPECT_FALSE(all->more);
  auto page = list("", 2);
  EXPECT_EQ(page->names, (std::vector<std::string>{"A9", "a"}));
  EXPECT_TRUE(page->more);
  page = list("a", 3);
  EXPECT_EQ(page->names, (std::vector<std::string>{"a-1", "ab", "b.t"}));
  EXPECT_TRUE(page->more);
  page = list("b.t", 3);
  EXPECT_EQ(page->names, (std::vector<std::string>{"c_x"}));
  EXPECT_FALSE(page->more);
  // A start name that is not a table works too.
  page = list("aa", 10);
  EXPECT_EQ(page->names, (std::vector<std::string>{"ab", "b.t", "c_x"}));
  page = list("zzz", 10);
  EXPECT_TRUE(page->names.empty());
  EXPECT_FALSE(page->more);
}

TEST_P(CatalogTest, TagsAreStoredPerTableId) {
  Catalog catalog;
  auto t = Create(catalog, SimpleTable("t1"), {{"k1", "v1"}, {"k2", ""}});
  ASSERT_TRUE(t.ok());
  auto tags =
      Run([&](kv::Transaction& txn, const kv::Attempt&) { return catalog.GetTags(txn, (*t)->id); });
  ASSERT_TRUE(tags.ok());
  EXPECT_EQ(*tags, (std::vector<Tag>{{"k1", "v1"}, {"k2", ""}}));
  ASSERT_TRUE(Run([&](kv::Transaction& txn, const kv::Attempt&) {
                return catalog.SetTags(txn, (*t)->id, {});
              }).ok());
  tags =
      Run([&](kv::Transaction& txn, const kv::Attempt&) { return catalog.GetTags(txn, (*t)->id); });
  EXPECT_TRUE(tags->empty());
}

TEST_P(CatalogTest, ConcurrentCreatesGetDistinctIdsAndOneWinsAName) {
  Catalog a;
  Catalog b;
  constexpr int kThreads = 4;
  constexpr int kPerThread = 10;
  std::vector<std::thread> threads;
  std::mutex mu;
  std::set<int64_t> ids;
  int same_name_wins = 0;
  int same_name_in_use = 0;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Catalog& catalog = t % 2 == 0 ? a : b;
      for (int i = 0; i < kPerThread; ++i) {
        auto r = Create(catalog, SimpleTable("t" + std::to_string(t) + "_" + std::to_string(i)));
        ASSERT_TRUE(r.ok()) << r.error().message;
        std::lock_guard<std::mutex> lock(mu);
        ids.insert((*r)->id);
      }
      auto same = Create(catalog, SimpleTable("contended"));
      std::lock_guard<std::mutex> lock(mu);
      if (same.ok()) {
        ++same_name_wins;
        ids.insert((*same)->id);
      } else {
        EXPECT_EQ(same.error().type, ErrorType::kResourceInUse);
        ++same_name_in_use;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ids.size(), static_cast<size_t>(kThreads * kPerThread + 1));
  EXPECT_EQ(same_name_wins, 1);
  EXPECT_EQ(same_name_in_use, kThreads - 1);
  auto all = Run([&](kv::Transaction& txn, const kv::Attempt&) {
    return a.List(txn, {kSharedAccount, kRegion}, "", 100);
  });
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->names.size(), static_cast<size_t>(kThreads * kPerThread + 1));
}

// Tables belong to accounts: the same name in two accounts is two tables, each found, listed,
// dropped and recreated in its own account only.
TEST_P(CatalogTest, TheSameNameInTwoAccountsIsTwoTables) {
  Catalog catalog;
  auto in_a = Create(catalog, SimpleTable("orders", kAccountA), {{"owner", "a"}});
  ASSERT_TRUE(in_a.ok()) << in_a.error().message;
  auto in_b = Create(catalog, SimpleTable("orders", kAccountB), {{"owner", "b"}});
  ASSERT_TRUE(in_b.ok()) << in_b.error().message;
  EXPECT_NE((*in_a)->id, (*in_b)->id);
  EXPECT_EQ((*in_a)->account, kAccountA);
  EXPECT_EQ((*in_b)->account, kAccountB);
  ASSERT_TRUE(Create(catalog, SimpleTable("only-a", kAccountA)).ok());
  auto again = Create(catalog, SimpleTable("orders", kAccountB));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().type, ErrorType::kResourceInUse);

  // Every by-name lookup is the account's own; another catalog (process) agrees.
  Catalog other;
  for (Catalog* c : {&catalog, &other}) {
    EXPECT_EQ((*Find(*c, "orders", kAccountA))->id, (*in_a)->id);
    EXPECT_EQ((*Find(*c, "orders", kAccountB))->id, (*in_b)->id);
    EXPECT_EQ(*Find(*c, "only-a", kAccountB), nullptr);
    EXPECT_EQ(*Find(*c, "orders"), nullptr);  // nor the shared account's
  }
  auto list = [&](std::string_view account) {
    return Run([&](kv::Transaction& txn, const kv::Attempt&) {
      return catalog.List(txn, {account, kRegion}, "", 100);
    });
  };
  EXPECT_EQ(list(kAccountA)->names, (std::vector<std::string>{"only-a", "orders"}));
  EXPECT_EQ(list(kAccountB)->names, (std::vector<std::string>{"orders"}));
  EXPECT_TRUE(list(kSharedAccount)->names.empty());
  auto tags = Run(
      [&](kv::Transaction& txn, const kv::Attempt&) { return catalog.GetTags(txn, (*in_b)->id); });
  EXPECT_EQ(*tags, (std::vector<Tag>{{"owner", "b"}}));

  // Dropping A's leaves B's, and A may create the name again.
  ASSERT_TRUE(Drop(catalog, "orders", kAccountA).ok());
  EXPECT_EQ(*Find(other, "orders", kAccountA), nullptr);
  EXPECT_EQ((*Find(other, "orders", kAccountB))->id, (*in_b)->id);
  EXPECT_TRUE(Create(catalog, SimpleTable("orders", kAccountA)).ok());
}

// Tables belong to regions too: one account's same name in two regions is two tables, each
// found, listed and dropped in its own region only.
TEST_P(CatalogTest, TheSameNameInTwoRegionsIsTwoTables) {
  Catalog catalog;
  auto here = Create(catalog, SimpleTable("orders", kAccountA, kRegion));
  ASSERT_TRUE(here.ok()) << here.error().message;
  auto there = Create(catalog, SimpleTable("orders", kAccountA, kOtherRegion));
  ASSERT_TRUE(there.ok()) << there.error().message;
  EXPECT_NE((*here)->id, (*there)->id);
  EXPECT_EQ((*there)->region, kOtherRegion);
  ASSERT_TRUE(Create(catalog, SimpleTable("only-there", kAccountA, kOtherRegion)).ok());
  auto again = Create(catalog, SimpleTable("orders", kAccountA, kOtherRegion));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().type, ErrorType::kResourceInUse);

  Catalog other;
  for (Catalog* c : {&catalog, &other}) {
    EXPECT_EQ((*Find(*c, "orders", kAccountA, kRegion))->id, (*here)->id);
    EXPECT_EQ((*Find(*c, "orders", kAccountA, kOtherRegion))->id, (*there)->id);
    EXPECT_EQ(*Find(*c, "only-there", kAccountA, kRegion), nullptr);
  }
  auto list = [&](std::string_view region) {
    return Run([&](kv::Transaction& txn, const kv::Attempt&) {
      return catalog.List(txn, {kAccountA, region}, "", 100);
    });
  };
  EXPECT_EQ(list(kRegion)->names, (std::vector<std::string>{"orders"}));
  EXPECT_EQ(list(kOtherRegion)->names, (std::vector<std::string>{"only-there", "orders"}));
  EXPECT_TRUE(list("us-west-2")->names.empty());

  ASSERT_TRUE(Drop(catalog, "orders", kAccountA, kOtherRegion).ok());
  EXPECT_EQ(*Find(other, "orders", kAccountA, kOtherRegion), nullptr);
  EXPECT_EQ((*Find(other, "orders", kAccountA, kRegion))->id, (*here)->id);

  // A table names its region: one without is refused.
  auto nowhere = Create(catalog, SimpleTable("nowhere", kAccountA, ""));
  ASSERT_FALSE(nowhere.ok());
  EXPECT_EQ(nowhere.error().type, ErrorType::kInternalServerError);
}

// ListAll serves the background workers: every account's tables, in (account, name) order,
// in pages.
TEST_P(CatalogTest, ListAllPagesThroughEveryAccount) {
  Catalog catalog;
  for (auto [account, region, name] :
       std::vector<std::tuple<std::string_view, std::string_view, std::string>>{
           {kAccountB, kRegion, "b1"},
           {kAccountA, kRegion, "x"},
           {kSharedAccount, kRegion, "s"},
           {kAccountA, kOtherRegion, "z"},
           {kAccountA, kRegion, "a"}}) {
    ASSERT_TRUE(Create(catalog, SimpleTable(name, account, region)).ok());
  }
  std::vector<QualifiedName> seen;
  std::optional<QualifiedName> after;
  for (int pages = 0; pages < 10; ++pages) {
    auto page = Run([&](kv::Transaction& txn, const kv::Attempt&) {
      return catalog.ListAll(txn, after ? &*after : nullptr, 3);
    });
    ASSERT_TRUE(page.ok()) << page.error().message;
    seen.insert(seen.end(), page->names.begin(), page->names.end());
    if (!page->more) break;
    after = page->names.back();
  }
  const std::string shared(kSharedAccount), a(kAccountA), b(kAccountB);
  const std::string us(kRegion), eu(kOtherRegion);
  EXPECT_EQ(seen, (std::vector<QualifiedName>{
                      {shared, us, "s"}, {a, eu, "z"}, {a, us, "a"}, {a, us, "x"}, {b, us, "b1"}}));
}

// ---- catalogs written before accounts (format 1) --------------------------------------------

// `info`'s record without its leading member `name` (version byte, '{', then the member).
std::string WithoutMember(std::string record, const std::string& name, const std::string& value) {
  const std::string member = "\"" + name + "\":\"" + value + "\",";
  const size_t at = record.find(member);
  EXPECT_EQ(at, 2u) << record;
  if (at == 2u) record.erase(at, member.size());
  return record;
}

// What a binary from before regions wrote for `info`: its record, without the "region" member,
// under (1, 5, account, name).
void WriteTableBeforeRegions(kv::Transaction& txn, const TableInfo& info) {
  std::string record = EncodeTableInfo(info);
  const std::string region = "\"region\":\"" + info.region + "\",";
  const size_t at = record.find(region);
  ASSERT_NE(at, std::string::npos) << record;
  record.erase(at, region.size());
  txn.Set(Catalog::AccountTableKey(info.account, info.name), record);
}

// What a binary from before accounts wrote for `info`: its record, without the "account" and
// "region" members (which every later record starts with), under (1, 1, name).
void WriteLegacyTable(kv::Transaction& txn, const TableInfo& info) {
  std::string record = EncodeTableInfo(info);
  record = WithoutMember(record, "account", info.account);
  record = WithoutMember(record, "region", info.region);
  txn.Set(Catalog::LegacyTableKey(info.name), record);
}

// A format 1 catalog as a binary from before accounts left it: tables created through the id
// counter, one with tags, one with a version 1 record, one dropped and pending purge.
void WriteLegacyCatalog(kv::Database& db, int tables) {
  auto st = kv::Run(db, [&](kv::Transaction& txn, const kv::Attempt&) -> Status {
    for (int i = 1; i <= tables; ++i) {
      TableInfo t = SimpleTable("legacy-" + std::to_string(i));
      t.id = i;
      t.uuid = "uuid-" + std::to_string(i);
      WriteLegacyTable(txn, t);
    }
    txn.Set(Catalog::LegacyTableKey("v1"),
            "\x01{\"name\":\"v1\",\"id\":" + std::to_string(tables + 1) +
                ",\"uuid\":\"u\",\"creation_ms\":1,\"status\":\"ACTIVE\","
                "\"attribute_definitions\":[{\"name\":\"pk\",\"type\":\"S\"}],"
                "\"key_schema\":{\"hash\":{\"name\":\"pk\",\"type\":\"S\"}},"
                "\"billing_mode\":\"PAY_PER_REQUEST\",\"throughput\":{\"read\":0,\"write\":0},"
                "\"local_indexes\":[],\"global_indexes\":[],"
                "\"stream\":{\"enabled\":false,\"view_type\":\"KEYS_ONLY\",\"label\":\"\"},"
                "\"sse\":{\"enabled\":false,\"kms_master_key_id\":\"\"},"
                "\"table_class\":\"STANDARD\",\"next_index_id\":1}");
    txn.Set(Catalog::TagsKey(1), EncodeTags({{"k", "v"}}));
    txn.Set(Catalog::PendingPurgeKey(tables + 2), std::string(1, '\x01'));
    txn.Set(Catalog::NextTableIdKey(), kv::EncodeCounter(tables + 2));
    return Status::Ok();
  });
  ASSERT_TRUE(st.ok()) << st.error().message;
}

// No table record is left where formats 1 (before accounts) and 2 (before regions) kept them.
Status ExpectNoRecordsOfEarlierFormats(kv::Transaction& txn) {
  for (const auto& [range, what] :
       {std::pair(layout::Catalog().Range(kv::Tuple{int64_t{1}}), "format 1"),
        std::pair(Catalog::AccountTables().Range(), "format 2")}) {
    FDYNO_ASSIGN_OR_RETURN(kv::RangeResult left, txn.GetRange(range.first, range.second));
    EXPECT_TRUE(left.kvs.empty()) << what << " records left behind";
  }
  return Status::Ok();
}

TEST_P(CatalogTest, MigrateMovesEveryTableFromBeforeAccountsToTheSharedAccount) {
  constexpr int kTables = 7;
  WriteLegacyCatalog(*db_, kTables);
  Catalog catalog;
  // Looked up (and cached absent) before the migration: the migration's version bump refreshes.
  EXPECT_EQ(*Find(catalog, "legacy-1"), nullptr);

  // Three transactions and the last, for each step.
  auto moved = MigrateFormat(*db_, kRegion, /*batch=*/3);
  ASSERT_TRUE(moved.ok()) << moved.error().message;
  EXPECT_EQ(moved->accounts, kTables + 1);
  EXPECT_EQ(moved->regions, kTables + 1);
  EXPECT_EQ(moved->legacy_region, kRegion);
  for (int i = 1; i <= kTables; ++i) {
    auto t = Find(catalog, "legacy-" + std::to_string(i));
    ASSERT_TRUE(t.ok()) << t.error().message;
    ASSERT_NE(*t, nullptr) << i;
    EXPECT_EQ((*t)->id, i);
    EXPECT_EQ((*t)->uuid, "uuid-" + std::to_string(i));
    EXPECT_EQ((*t)->account, kSharedAccount);
    EXPECT_EQ((*t)->region, kRegion);
    EXPECT_EQ(*Find(catalog, "legacy-" + std::to_string(i), kAccountA), nullptr);
  }
  EXPECT_EQ((*Find(catalog, "v1"))->id, kTables + 1);
  auto state = Run([&](kv::Transaction& txn, const kv::Attempt&) -> Result<bool> {
    FDYNO_ASSIGN_OR_RETURN(std::vector<Tag> tags, catalog.GetTags(txn, 1));
    EXPECT_EQ(tags, (std::vector<Tag>{{"k", "v"}}));
    FDYNO_RETURN_IF_ERROR(ExpectNoRecordsOfEarlierFormats(txn));
    FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> format, txn.Get(Catalog::FormatKey()));
    EXPECT_EQ(format, std::string(1, '\x03'));
    return true;
  });
  ASSERT_TRUE(state.ok()) << state.error().message;

  // Once migrated, nothing moves again; new ids follow the old counter; the dropped table's
  // purge completes.
  auto again = MigrateFormat(*db_, kOtherRegion);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->accounts + again->regions, 0);
  auto next = Create(catalog, SimpleTable("after", kAccountA));
  ASSERT_TRUE(next.ok());
  EXPECT_EQ((*next)->id, kTables + 3);
  EXPECT_EQ(*catalog.PurgeDropped(*db_), 1);
}

TEST_P(CatalogTest, MigrateNeverOverwritesATableOfTheSharedAccount) {
  Catalog catalog;
  ASSERT_TRUE(Create(catalog, SimpleTable("t")).ok());
  auto st = Run([&](kv::Transaction& txn, const kv::Attempt&) -> Status {
    TableInfo old = SimpleTable("t");
    old.id = 99;
    WriteLegacyTable(txn, old);
    return Status::Ok();
  });
  ASSERT_TRUE(st.ok());
  auto moved = MigrateFormat(*db_, kRegion);
  ASSERT_FALSE(moved.ok());
  EXPECT_EQ(moved.error().type, ErrorType::kInternalServerError);
  EXPECT_NE(moved.error().message.find("table t exists both before and after"), std::string::npos)
      << moved.error().message;
  EXPECT_EQ((*Find(catalog, "t"))->id, 1);
  // The older table was moved to the shared account, and stopped before its region.
  auto legacy = Run([&](kv::Transaction& txn, const kv::Attempt&) {
    return txn.Get(Catalog::AccountTableKey(kSharedAccount, "t"));
  });
  EXPECT_TRUE(legacy->has_value());
}

TEST_P(CatalogTest, MigrateRefusesACatalogFormatNewerThanItKnows) {
  auto st = Run([&](kv::Transaction& txn, const kv::Attempt&) -> Status {
    txn.Set(Catalog::FormatKey(), std::string(1, '\x04'));
    return Status::Ok();
  });
  ASSERT_TRUE(st.ok());
  auto moved = MigrateFormat(*db_, kRegion);
  ASSERT_FALSE(moved.ok());
  EXPECT_NE(moved.error().message.find("catalog format 4 is newer"), std::string::npos)
      << moved.error().message;
}

// A JSON record as a binary before regions wrote it: without the (empty) "region" member.
std::string WithoutEmptyRegion(std::string record) {
  const std::string member = "\"region\":\"\",";
  const size_t at = record.find(member);
  EXPECT_NE(at, std::string::npos) << record;
  if (at != std::string::npos) record.erase(at, member.size());
  return record;
}

// A binary record of version 3 whose last member is an empty region, as version 2 wrote it.
std::string VersionTwo(std::string record) {
  EXPECT_EQ(record[0], '\x03');
  EXPECT_EQ(record.substr(record.size() - 4), std::string(4, '\0'));
  record.resize(record.size() - 4);
  record[0] = '\x02';
  return record;
}

// A format 2 catalog (before regions): tables of two accounts, a backup, a restore job, a
// point-in-time restore job and a stream, none with a region. The migration gives every one the
// legacy region, and the region recorded by an earlier, interrupted migration wins over the one
// this start offers, so that every process agrees.
TEST_P(CatalogTest, MigrateGivesEverythingFromBeforeRegionsTheLegacyRegion) {
  auto st = Run([&](kv::Transaction& txn, const kv::Attempt&) -> Status {
    for (int i = 1; i <= 5; ++i) {
      TableInfo t = SimpleTable("t" + std::to_string(i), i % 2 ? kAccountA : kAccountB);
      t.id = i;
      WriteTableBeforeRegions(txn, t);
    }
    BackupInfo backup;
    backup.account = std::string(kAccountA);
    backup.id = "01700000000123-0a1b2c3d";
    backup.table_name = "t1";
    txn.Set(BackupKey(backup.id), WithoutEmptyRegion(EncodeBackupInfo(backup)));
    RestoreJob restore;
    restore.table_id = 6;
    restore.account = std::string(kAccountA);
    txn.Set(RestoreJobKey(6), WithoutEmptyRegion(EncodeRestoreJob(restore)));
    PitrRestoreJob pitr;
    pitr.table_id = 7;
    pitr.account = std::string(kAccountB);
    txn.Set(PitrRestoreJobKey(7), VersionTwo(EncodePitrRestoreJob(pitr)));
    StreamInfo stream;
    stream.id = 3;
    stream.account = std::string(kAccountB);
    stream.table_name = "t2";
    stream.key_schema.hash = {"pk", ScalarType::kS};
    txn.Set(StreamInfoKey(3), VersionTwo(EncodeStreamInfo(stream)));
    txn.Set(Catalog::FormatKey(), std::string(1, '\x02'));
    txn.Set(Catalog::LegacyRegionKey(), std::string(kOtherRegion));  // an earlier start's
    return Status::Ok();
  });
  ASSERT_TRUE(st.ok()) << st.error().message;

  auto moved = MigrateFormat(*db_, kRegion, /*batch=*/2);
  ASSERT_TRUE(moved.ok()) << moved.error().message;
  EXPECT_EQ(moved->accounts, 0);
  EXPECT_EQ(moved->regions, 5);
  EXPECT_EQ(moved->legacy_region, kOtherRegion);
  Catalog catalog;
  for (int i = 1; i <= 5; ++i) {
    auto t = Find(catalog, "t" + std::to_string(i), i % 2 ? kAccountA : kAccountB, kOtherRegion);
    ASSERT_TRUE(t.ok()) << t.error().message;
    ASSERT_NE(*t, nullptr) << i;
    EXPECT_EQ((*t)->id, i);
    EXPECT_EQ((*t)->region, kOtherRegion);
    EXPECT_EQ(*Find(catalog, "t" + std::to_string(i), i % 2 ? kAccountA : kAccountB), nullptr);
  }
  auto regions = Run([&](kv::Transaction& txn, const kv::Attempt&) -> Result<std::string> {
    std::string out;
    FDYNO_ASSIGN_OR_RETURN(std::optional<BackupInfo> backup,
                           ReadBackup(txn, "01700000000123-0a1b2c3d"));
    out += backup->region + " ";
    FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> restore, txn.Get(RestoreJobKey(6)));
    out += DecodeRestoreJob(*restore)->region + " ";
    FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> pitr, txn.Get(PitrRestoreJobKey(7)));
    out += DecodePitrRestoreJob(*pitr)->region + " ";
    FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> stream, txn.Get(StreamInfoKey(3)));
    out += DecodeStreamInfo(*stream)->region;
    FDYNO_ASSIGN_OR_RETURN(int format, Catalog::ReadFormat(txn));
    out += " " + std::to_string(format);
    return out;
  });
  ASSERT_TRUE(regions.ok()) << regions.error().message;
  EXPECT_EQ(*regions, "eu-west-1 eu-west-1 eu-west-1 eu-west-1 3");
}

// The migration meets every retried commit fault a FoundationDB client sees (refused, applied or
// not and answered unknown, applied late): it ends in one start with every table moved exactly
// once, each record in its one place, every stream record given its region, and the format
// written. (A retried body that kept state from a failed attempt, such as a cursor moved before
// the commit, skips records here.)
TEST_P(CatalogTest, MigrateEndsTheSameUnderRetriedCommitFaults) {
  constexpr int kTables = 23, kStreams = 40;
  WriteLegacyCatalog(*db_, kTables);
  auto written = Run([&](kv::Transaction& txn, const kv::Attempt&) -> Status {
    for (int i = 1; i <= kStreams; ++i) {
      StreamInfo stream;
      stream.id = i;
      stream.table_name = "legacy-" + std::to_string(i);
      stream.key_schema.hash = {"pk", ScalarType::kS};
      txn.Set(StreamInfoKey(i), VersionTwo(EncodeStreamInfo(stream)));
    }
    return Status::Ok();
  });
  ASSERT_TRUE(written.ok());
  kv::FaultOptions faults;
  faults.seed = 20261207;
  faults.commit_conflict = 0.15;
  faults.unknown_applied = 0.15;
  faults.unknown_not_applied = 0.1;
  faults.unknown_late = 0.1;
  std::unique_ptr<kv::FaultyDatabase> faulty = kv::WrapFaulty(db_.get(), faults);
  auto moved = MigrateFormat(*faulty, kRegion, /*batch=*/2);
  ASSERT_TRUE(moved.ok()) << moved.error().message;
  const kv::FaultCounts counts = faulty->counts();
  EXPECT_GT(counts.unknown_applied + counts.unknown_late_applied, 0);
  EXPECT_GT(counts.conflicts, 0);

  Catalog catalog;
  for (int i = 1; i <= kTables; ++i) {
    auto t = Find(catalog, "legacy-" + std::to_string(i));
    ASSERT_TRUE(t.ok()) << t.error().message;
    ASSERT_NE(*t, nullptr) << i;
    EXPECT_EQ((*t)->id, i);
    EXPECT_EQ((*t)->region, kRegion);
  }
  auto state = Run([&](kv::Transaction& txn, const kv::Attempt&) -> Result<bool> {
    FDYNO_RETURN_IF_ERROR(ExpectNoRecordsOfEarlierFormats(txn));
    FDYNO_ASSIGN_OR_RETURN(QualifiedNamePage all, catalog.ListAll(txn, nullptr, 1000));
    EXPECT_EQ(all.names.size(), static_cast<size_t>(kTables + 1));  // and "v1"
    auto [streams_begin, streams_end] = StreamInfosRange();
    FDYNO_ASSIGN_OR_RETURN(kv::RangeResult streams, txn.GetRange(streams_begin, streams_end));
    EXPECT_EQ(streams.kvs.size(), static_cast<size_t>(kStreams));
    for (const kv::KeyValue& kv : streams.kvs) {
      FDYNO_ASSIGN_OR_RETURN(StreamInfo stream, DecodeStreamInfo(kv.value));
      EXPECT_EQ(stream.region, kRegion) << stream.id;
    }
    FDYNO_ASSIGN_OR_RETURN(int format, Catalog::ReadFormat(txn));
    EXPECT_EQ(format, 3);
    return true;
  });
  ASSERT_TRUE(state.ok()) << state.error().message;
}

INSTANTIATE_TEST_SUITE_P(Engines, CatalogTest, ::testing::Values("memory", "embedded"),
                         [](const auto& info) { return info.param; });

// Records written before streams were recorded (format 1) read with no stream id and TTL off.
TEST(CatalogFormatTest, VersionOneRecordsStillRead) {
  const std::string v1 =
      "\x01{\"name\":\"t\",\"id\":3,\"uuid\":\"u\",\"creation_ms\":1,\"status\":\"ACTIVE\","
      "\"attribute_definitions\":[{\"name\":\"pk\",\"type\":\"S\"}],"
      "\"key_schema\":{\"hash\":{\"name\":\"pk\",\"type\":\"S\"}},"
      "\"billing_mode\":\"PAY_PER_REQUEST\",\"throughput\":{\"read\":0,"
      "\"write\":0,\"last_increase_ms\":0,\"last_decrease_ms\":0,"
      "\"decreases_today\":0},\"local_indexes\":[],\"global_indexes\":[],"
      "\"stream\":{\"enabled\":true,\"view_type\":\"KEYS_ONLY\",\"label\":\"L\"},"
      "\"sse\":{\"enabled\":false,\"kms_master_key_id\":\"\"},\"table_class\":\"STANDARD\","
      "\"next_index_id\":1}";
  Result<TableInfo> t = DecodeTableInfo(v1);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_TRUE(t->stream.enabled);
  EXPECT_EQ(t->stream.stream_id, 0);
  EXPECT_EQ(t->stream.slots, 1);
  EXPECT_EQ(t->ttl.status, TtlStatus::kDisabled);
  EXPECT_EQ(t->account, kSharedAccount);  // written before accounts
  EXPECT_EQ(EncodeTableInfo(*t)[0], '\x02');
}

TEST(CatalogFormatTest, RoundTripAndFailClosed) {
  TableInfo t = SimpleTable("x.y-z", kAccountB);
  t.id = 77;
  t.uuid = "0b3e4a4e-1111-4222-8333-444455556666";
  t.creation_ms = 123;
  t.billing_mode = BillingMode::kPayPerRequest;
  t.last_update_to_pay_per_request_ms = 456;
  SecondaryIndex lsi;
  lsi.name = "lsi";
  lsi.id = 3;
  lsi.key_schema.hash = {"pk", ScalarType::kS};
  lsi.key_schema.range = AttributeDefinition{"other", ScalarType::kB};
  lsi.projection.type = ProjectionType::kKeysOnly;
  t.local_indexes.push_back(lsi);
  t.stream = {true, StreamViewType::kKeysOnly, "2024-01-01T00:00:00.000", 5, 2};
  t.ttl = {TtlStatus::kEnabled, "expires", 789};
  t.sse = {true, "alias/x"};
  t.table_class = TableClass::kStandardInfrequentAccess;
  t.table_class_set = true;
  t.table_class_changes_ms = {1000, 2000};
  t.deletion_protection = true;
  t.deletion_protection_ms = 3000;
  t.next_index_id = 4;
  std::string bytes = EncodeTableInfo(t);
  EXPECT_EQ(bytes[0], '\x02');
  auto decoded = DecodeTableInfo(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(*decoded, t);

  std::string future = bytes;
  future[0] = '\x03';
  auto bad = DecodeTableInfo(future);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().type, ErrorType::kInternalServerError);
  EXPECT_FALSE(DecodeTableInfo("").ok());
  EXPECT_FALSE(DecodeTableInfo(std::string("\x02{\"name\":1}")).ok());
  // A version 2 record without its stream id or TTL settings is malformed.
  std::string no_ttl = bytes;
  no_ttl.replace(no_ttl.find("\"ttl\""), 5, "\"xyz\"");
  EXPECT_FALSE(DecodeTableInfo(no_ttl).ok());
  EXPECT_FALSE(DecodeTableInfo(bytes.substr(0, bytes.size() - 1)).ok());
  std::string bad_times = bytes;
  bad_times.replace(bad_times.find("[1000,"), 6, "[\"x\",");
  EXPECT_FALSE(DecodeTableInfo(bad_times).ok());

  std::vector<Tag> tags = {{"a", "1"}, {"b\"", "\xc3\xa9"}};
  auto tags_back = DecodeTags(EncodeTags(tags));
  ASSERT_TRUE(tags_back.ok());
  EXPECT_EQ(*tags_back, tags);
  EXPECT_FALSE(DecodeTags("\x05[]").ok());
}

TEST(CatalogRecordTest, ContributorInsightsRoundTripAndAbsenceMeansNeverConfigured) {
  TableInfo t;
  t.name = "t";
  t.id = 1;
  t.uuid = "u";
  t.key_schema.hash = {"pk", ScalarType::kS};
  t.attribute_definitions = {t.key_schema.hash};
  SecondaryIndex gsi;
  gsi.name = "g";
  gsi.id = 1;
  gsi.key_schema.hash = {"pk", ScalarType::kS};
  t.global_indexes.push_back(gsi);
  const std::string plain = EncodeTableInfo(t);
  EXPECT_EQ(plain.find("insights"), std::string::npos);  // never configured: not written
  EXPECT_FALSE(t.CountsKeyAccesses());

  t.insights = {InsightsStatus::kFailed, InsightsMode::kThrottledKeys, 5, 0};
  t.global_indexes[0].insights = {InsightsStatus::kEnabled, InsightsMode::kAccessedAndThrottledKeys,
                                  7, 6};
  EXPECT_TRUE(t.CountsKeyAccesses());
  auto decoded = DecodeTableInfo(EncodeTableInfo(t));
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(*decoded, t);

  std::string unknown = EncodeTableInfo(t);
  unknown.replace(unknown.find("\"FAILED\""), 8, "\"PAUSED\"");
  EXPECT_EQ(DecodeTableInfo(unknown).error().type, ErrorType::kInternalServerError);
}

// Every member a table record can hold, each set to a value other than its default.
TableInfo FullyPopulatedTable() {
  TableInfo t = SimpleTable("full", kAccountA, kOtherRegion);
  t.id = 9;
  t.uuid = "u-9";
  t.creation_ms = 11;
  t.status = TableStatus::kUpdating;
  t.attribute_definitions.push_back({"g1", ScalarType::kB});
  t.attribute_definitions.push_back({"g2", ScalarType::kS});
  t.billing_mode = BillingMode::kPayPerRequest;
  t.last_update_to_pay_per_request_ms = 12;
  t.throughput = {1, 2, 3, 4, 5};
  t.on_demand = {6, 7};
  t.warm = {8, 9};
  SecondaryIndex lsi;
  lsi.name = "l";
  lsi.id = 1;
  lsi.key_schema.hash = {"pk", ScalarType::kS};
  lsi.key_schema.range = AttributeDefinition{"g1", ScalarType::kB};
  lsi.projection = {ProjectionType::kInclude, {"x", "y"}};
  t.local_indexes.push_back(lsi);
  SecondaryIndex gsi;
  gsi.name = "g";
  gsi.id = 2;
  gsi.key_schema.hash = {"g1", ScalarType::kB};
  gsi.key_schema.more_hash = {{"g2", ScalarType::kS}};
  gsi.key_schema.range = AttributeDefinition{"sk", ScalarType::kN};
  gsi.projection.type = ProjectionType::kKeysOnly;
  gsi.throughput = {10, 11, 12, 13, 14};
  gsi.on_demand = {15, 16};
  gsi.warm = {17, 18};
  gsi.status = IndexStatus::kCreating;
  gsi.backfilling = true;
  gsi.insights = {InsightsStatus::kEnabled, InsightsMode::kThrottledKeys, 19, 20};
  t.global_indexes.push_back(gsi);
  SecondaryIndex gsi_one_range = gsi;
  gsi_one_range.name = "g-range";
  gsi_one_range.id = 3;
  gsi_one_range.key_schema.more_hash.clear();
  gsi_one_range.key_schema.range.reset();
  gsi_one_range.insights = {};
  gsi_one_range.on_demand = {};
  gsi_one_range.warm = {};
  t.global_indexes.push_back(gsi_one_range);
  VectorIndex v;
  v.name = "v";
  v.id = 4;
  v.attribute = "vec";
  v.dimensions = 3;
  v.distance = DistanceFunction::kEuclidean;
  v.search_schema = {{{"g2", ScalarType::kS}, SearchRole::kHash},
                     {{"sk", ScalarType::kN}, SearchRole::kInlineFilter}};
  v.projection = {ProjectionType::kInclude, {"z"}};
  v.status = IndexStatus::kDeleting;
  v.backfilling = true;
  t.vector_indexes.push_back(v);
  t.stream = {true, StreamViewType::kOldImage, "L", 21, 4};
  t.ttl = {TtlStatus::kDisabling, "exp", 22};
  t.sse = {true, "key"};
  t.table_class = TableClass::kStandardInfrequentAccess;
  t.table_class_set = true;
  t.table_class_changes_ms = {23, 24};
  t.deletion_protection = true;
  t.deletion_protection_ms = 25;
  t.next_index_id = 5;
  t.restore = RestoreSummary{"b", "src", 26, true};
  t.pitr = {true, 2, 7, 27};
  t.insights = {InsightsStatus::kFailed, InsightsMode::kAccessedAndThrottledKeys, 28, 29};
  t.kinesis = {{"arn:k", "ACTIVE", "d", "MICROSECOND"}, {"arn:j", "DISABLED", "", ""}};
  t.has_policies = true;
  return t;
}

// The stored bytes of a record with every member set, pinned: a change of the encoder that
// changes them is a format change (docs/format/catalog.md), never an accident.
TEST(CatalogFormatTest, EveryMemberEncodesToThePinnedBytes) {
  const TableInfo t = FullyPopulatedTable();
  const std::string bytes = EncodeTableInfo(t);
  EXPECT_EQ(
      bytes,
      std::string("\x03") +
          R"({"account":"111111111111","region":"eu-west-1","name":"full","id":9,"uuid":"u-9",)"
          R"("creation_ms":11,)"
          R"("status":"UPDATING","attribute_definitions":[{"name":"pk","type":"S"},{"name":"sk",)"
          R"("type":"N"},{"name":"g1","type":"B"},{"name":"g2","type":"S"}],)"
          R"("key_schema":{"hash":{"name":"pk","type":"S"},"range":{"name":"sk","type":"N"}},)"
          R"("billing_mode":"PAY_PER_REQUEST","last_update_to_pay_per_request_ms":12,)"
          R"("throughput":{"read":1,"write":2,"last_increase_ms":3,"last_decrease_ms":4,)"
          R"("decreases_today":5},"local_indexes":[{"name":"l","id":1,)"
          R"("key_schema":{"hash":{"name":"pk","type":"S"},"range":{"name":"g1","type":"B"}},)"
          R"("projection":"INCLUDE","non_key_attributes":["x","y"],"throughput":{"read":0,)"
          R"("write":0,"last_increase_ms":0,"last_decrease_ms":0,"decreases_today":0},)"
          R"("status":"ACTIVE","backfilling":false}],"global_indexes":[{"name":"g","id":2,)"
          R"("key_schema":{"hash":[{"name":"g1","type":"B"},{"name":"g2","type":"S"}],)"
          R"("range":[{"name":"sk","type":"N"}]},"projection":"KEYS_ONLY","non_key_attributes":[],)"
          R"("throughput":{"read":10,"write":11,"last_increase_ms":12,"last_decrease_ms":13,)"
          R"("decreases_today":14},"on_demand":{"read":15,"write":16},"warm":{"read":17,)"
          R"("write":18},"status":"CREATING","backfilling":true,"insights":{"status":"ENABLED",)"
          R"("mode":"THROTTLED_KEYS","updated_ms":19,"rules_ms":20}},{"name":"g-range","id":3,)"
          R"("key_schema":{"hash":{"name":"g1","type":"B"}},"projection":"KEYS_ONLY",)"
          R"("non_key_attributes":[],"throughput":{"read":10,"write":11,"last_increase_ms":12,)"
          R"("last_decrease_ms":13,"decreases_today":14},"status":"CREATING","backfilling":true}],)"
          R"("vector_indexes":[{"name":"v","id":4,"attribute":"vec","dimensions":3,)"
          R"("distance":"EUCLIDEAN","search_schema":[{"name":"g2","type":"S","role":"HASH"},)"
          R"({"name":"sk","type":"N","role":"INLINE_FILTER"}],"projection":"INCLUDE",)"
          R"("non_key_attributes":["z"],"status":"DELETING","backfilling":true}],)"
          R"("stream":{"enabled":true,"view_type":"OLD_IMAGE","label":"L","id":21,"slots":4},)"
          R"("ttl":{"status":"DISABLING","attribute":"exp","updated_ms":22},"sse":{"enabled":true,)"
          R"("kms_master_key_id":"key"},"table_class":"STANDARD_INFREQUENT_ACCESS",)"
          R"("table_class_set":true,"table_class_changes_ms":[23,24],"deletion_protection":true,)"
          R"("deletion_protection_ms":25,"on_demand":{"read":6,"write":7},"warm":{"read":8,)"
          R"("write":9},"next_index_id":5,"restore":{"backup":"b","table":"src","time_ms":26,)"
          R"("in_progress":true},"pitr":{"enabled":true,"epoch":2,"days":7,"since_ms":27},)"
          R"("insights":{"status":"FAILED","mode":"ACCESSED_AND_THROTTLED_KEYS","updated_ms":28,)"
          R"("rules_ms":29},"has_policies":true,"kinesis":[{"stream_arn":"arn:k","status":"ACTIVE",)"
          R"("description":"d","precision":"MICROSECOND"},{"stream_arn":"arn:j",)"
          R"("status":"DISABLED","description":"","precision":""}]})");
  Result<TableInfo> back = DecodeTableInfo(bytes);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, t);
}

// What a binary of this format does not know, or a record that breaks one of its rules, makes
// the record unreadable instead of half read: a newer member (a newer binary's: never ignored,
// since ignoring it could drop a setting such as a resource policy), a key role of more than
// four attributes, a vector index list in a version 2 record, stream slots out of range.
TEST(CatalogFormatTest, WhatTheFormatDoesNotKnowFailsClosed) {
  const std::string bytes = EncodeTableInfo(FullyPopulatedTable());
  auto corrupt = [](std::string record, std::string_view from, std::string_view to) {
    const size_t at = record.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    record.replace(at, from.size(), to);
    Result<TableInfo> t = DecodeTableInfo(record);
    EXPECT_FALSE(t.ok()) << to;
    if (!t.ok()) {
      EXPECT_EQ(t.error().type, ErrorType::kInternalServerError);
    }
  };
  corrupt(bytes, R"("has_policies":true)", R"("has_policies":true,"newer":1)");
  corrupt(bytes, R"("backfilling":false})", R"("backfilling":false,"newer":[]})");
  corrupt(bytes, R"("updated_ms":22})", R"("updated_ms":22,"newer":0})");
  corrupt(bytes, R"("hash":[{"name":"g1","type":"B"},)",
          R"("hash":[{"name":"a","type":"S"},{"name":"b","type":"S"},{"name":"c","type":"S"},)"
          R"({"name":"d","type":"S"},{"name":"g1","type":"B"},)");
  corrupt(bytes, R"("hash":[{"name":"g1","type":"B"},)", R"("hash":[{"name":"g1","type":"X"},)");
  corrupt(bytes, R"("slots":4)", R"("slots":0)");
  corrupt(bytes, R"("days":7)", R"("days":36)");
  corrupt(bytes, R"("dimensions":3)", R"("dimensions":0)");
  corrupt(bytes, R"("rules_ms":29})", R"(})");
  std::string version2 = bytes;
  version2[0] = '\x02';
  EXPECT_FALSE(DecodeTableInfo(version2).ok());
}

}  // namespace
}  // namespace fdyno::store
