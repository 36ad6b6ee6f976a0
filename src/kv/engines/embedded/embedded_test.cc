// Tests specific to the embedded engine. The behaviour every engine shares is tested by the
// kv contract suite (src/kv/contract/).
#include "kv/engines/embedded/embedded.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <future>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "base/metrics.h"
#include "kv/engines/embedded/engine.h"

namespace fdyno::kv {
namespace {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "fdyno_emb_XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Concurrent durable commits get distinct versionstamps, increasing in each thread's order.
TEST(EmbeddedTest, ConcurrentDurableCommitsGetDistinctOrderedVersionstamps) {
  TempDir dir;
  auto db = OpenEmbedded({.path = dir.path()});
  ASSERT_TRUE(db.ok());
  constexpr int kThreads = 16, kPerThread = 30;
  std::vector<std::vector<std::string>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        auto txn = (*db)->CreateTransaction();
        txn->Set("k" + std::to_string(t) + "/" + std::to_string(i), "v");
        ASSERT_TRUE(txn->Commit().ok());
        got[t].push_back(*txn->GetVersionstamp());
      }
    });
  }
  for (auto& th : threads) th.join();
  std::set<std::string> stamps;
  for (const auto& g : got) {
    for (size_t i = 0; i < g.size(); ++i) {
      stamps.insert(g[i]);
      if (i > 0) {
        EXPECT_GT(g[i], g[i - 1]);
      }
    }
  }
  EXPECT_EQ(stamps.size(), static_cast<size_t>(kThreads * kPerThread));  // all distinct
}

// Group commit, made deterministic by holding the committer (EmbeddedOptions::before_batch):
// commits queued while it waits are committed as one batch, at one version and one fsync,
// each with its own versionstamp in queue order.
TEST(EmbeddedTest, CommitsQueuedTogetherShareOneBatch) {
  TempDir dir;
  std::promise<void> gate;
  std::shared_future<void> open = gate.get_future().share();
  std::atomic<int> batches{0};
  auto db = OpenEmbedded({.path = dir.path(), .before_batch = [&batches, open] {
                            if (batches.fetch_add(1) == 0) open.wait();
                          }});
  ASSERT_TRUE(db.ok());
  constexpr int kCommits = 50;
  std::vector<std::unique_ptr<Transaction>> txns;
  std::vector<std::promise<Status>> answers(kCommits);
  for (int i = 0; i < kCommits; ++i) {
    txns.push_back((*db)->CreateTransaction());
    txns.back()->Set("k" + std::to_string(i), "v");
    txns.back()->CommitAsync([&answers, i](Status s) { answers[i].set_value(std::move(s)); });
  }
  gate.set_value();  // all 50 are queued: the held committer now takes them at once
  std::set<int64_t> versions;
  std::string previous_stamp;
  for (int i = 0; i < kCommits; ++i) {
    ASSERT_TRUE(answers[i].get_future().get().ok());
    versions.insert(*txns[i]->GetCommittedVersion());
    std::string stamp = *txns[i]->GetVersionstamp();
    EXPECT_GT(stamp, previous_stamp);
    previous_stamp = stamp;
  }
  EXPECT_EQ(versions.size(), 1u);
  EXPECT_EQ(batches.load(), 1);
}

// Each transaction clears the whole prefix and writes one key, blind (no conflicts). Group
// commit puts many of them in one batch, where a ClearRange turned into point deletes must also
// delete keys written earlier in the same batch: in the end exactly the last committed key is
// left. Also with more keys than the point-delete cutoff, which keeps a range tombstone.
TEST(EmbeddedTest, ClearRangeWithinABatchSeesEarlierWritesOfTheBatch) {
  for (int preload : {0, 200}) {
    TempDir dir;
    auto db = OpenEmbedded({.path = dir.path()});
    ASSERT_TRUE(db.ok());
    {
      auto t = (*db)->CreateTransaction();
      for (int i = 0; i < preload; ++i) t->Set("p/pre" + std::to_string(i), "x");
      ASSERT_TRUE(t->Commit().ok());
    }
    std::mutex mu;
    std::string last_key, last_stamp;
    std::set<int64_t> versions;
    std::atomic<bool> first_done{false}, writers_done{false};
    std::atomic<int> bad_reads{0}, reads{0};
    // Every committed state holds exactly one key under the prefix; a reader checks many.
    std::thread reader([&] {
      auto r = (*db)->CreateTransaction();
      while (!writers_done.load()) {
        bool after_first = first_done.load();
        r->Reset();
        auto range = r->GetRange("p/", "p0", {.snapshot = true});
        ASSERT_TRUE(range.ok());
        if (after_first) {
          ++reads;
          if (range->kvs.size() != 1) ++bad_reads;
        }
      }
    });
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < 25; ++i) {
          auto txn = (*db)->CreateTransaction();
          std::string key = "p/" + std::to_string(t) + "/" + std::to_string(i);
          txn->ClearRange("p/", "p0");
          txn->Set(key, "v");
          ASSERT_TRUE(txn->Commit().ok());
          first_done = true;
          std::string stamp = *txn->GetVersionstamp();
          std::lock_guard<std::mutex> lock(mu);
          versions.insert(*txn->GetCommittedVersion());
          if (stamp > last_stamp) {
            last_stamp = stamp;
            last_key = key;
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    writers_done = true;
    reader.join();
    EXPECT_GT(reads.load(), 0);
    EXPECT_EQ(bad_reads.load(), 0) << "a committed state held more than one key";
    auto r = (*db)->CreateTransaction();
    auto range = r->GetRange("p/", "p0");
    ASSERT_TRUE(range.ok());
    ASSERT_LT(versions.size(), 200u) << "no two transactions shared a batch";
    ASSERT_EQ(range->kvs.size(), 1u) << "preload " << preload;
    EXPECT_EQ(range->kvs[0].key, last_key);
  }
}

TEST(EmbeddedTest, CommitVersionContinuesAfterReopen) {
  TempDir dir;
  int64_t last = 0;
  for (int round = 0; round < 3; ++round) {
    auto db = OpenEmbedded({.path = dir.path(), .durability = Durability::kNone});
    ASSERT_TRUE(db.ok());
    auto txn = (*db)->CreateTransaction();
    auto rv = txn->GetReadVersion();
    ASSERT_TRUE(rv.ok());
    EXPECT_EQ(*rv, last);  // the read version after open is the last committed version
    txn->Set("a", "b");
    ASSERT_TRUE(txn->Commit().ok());
    EXPECT_EQ(*txn->GetCommittedVersion(), last + 1);
    last = *txn->GetCommittedVersion();
  }
}

// Every commit also writes the last version into the small metadata column family, whose
// memtable would otherwise keep every log file alive until it reached 64 MB of its own: the
// logs (and the replay at the next open) grew with all data written. They stay bounded.
TEST(EmbeddedTest, WriteAheadLogsStayBounded) {
  TempDir dir;
  {
    auto db = OpenEmbedded({.path = dir.path(), .durability = Durability::kNone});
    ASSERT_TRUE(db.ok());
    const std::string value(kMaxValueBytes, 'v');
    for (int t = 0; t < 160; ++t) {  // 160 MB
      auto txn = (*db)->CreateTransaction();
      for (int k = 0; k < 10; ++k) txn->Set("k" + std::to_string(t % 7) + std::to_string(k), value);
      ASSERT_TRUE(txn->Commit().ok());
    }
  }
  uintmax_t logs = 0;
  for (const auto& f : std::filesystem::recursive_directory_iterator(dir.path())) {
    if (f.path().extension() == ".log") logs += f.file_size();
  }
  EXPECT_LT(logs, uintmax_t{100} << 20) << "write-ahead logs kept: " << (logs >> 20) << " MB";
}

TEST(EmbeddedTest, UnknownFormatVersionFailsClosed) {
  TempDir dir;
  { ASSERT_TRUE(OpenEmbedded({.path = dir.path()}).ok()); }
  {
    rocksdb::DB* raw = nullptr;
    std::vector<rocksdb::ColumnFamilyDescriptor> cfs = {{rocksdb::kDefaultColumnFamilyName, {}},
                                                        {"fdyno_meta", {}}};
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DBOptions options;
    ASSERT_TRUE(rocksdb::DB::Open(options, dir.path() + "/rocksdb", cfs, &handles, &raw).ok());
    ASSERT_TRUE(raw->Put({}, handles[1], "format_version", std::string(1, '\x09')).ok());
    for (auto* h : handles) ASSERT_TRUE(raw->DestroyColumnFamilyHandle(h).ok());
    delete raw;
  }
  auto db = OpenEmbedded({.path = dir.path()});
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.error().message.find("unsupported kv format version"), std::string::npos);
}

TEST(EmbeddedTest, SetReadVersionSharesASnapshot) {
  TempDir dir;
  auto db = OpenEmbedded({.path = dir.path(), .durability = Durability::kNone});
  ASSERT_TRUE(db.ok());
  auto w = (*db)->CreateTransaction();
  w->Set("k", "1");
  ASSERT_TRUE(w->Commit().ok());
  auto a = (*db)->CreateTransaction();
  int64_t rv = *a->GetReadVersion();
  w->Reset();
  w->Set("k", "2");
  ASSERT_TRUE(w->Commit().ok());
  auto b = (*db)->CreateTransaction();
  b->SetReadVersion(rv);  // a still holds the snapshot at rv
  auto v = b->Get("k");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(**v, "1");
  auto c = (*db)->CreateTransaction();
  c->SetReadVersion(*w->GetCommittedVersion() + 100);
  auto f = c->Get("k");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error().kv_code, kFutureVersion);
}

// One read-write commit of key `key` that also reads it (so it goes through the resolver).
void ReadWrite(Database& db, const std::string& key) {
  auto t = db.CreateTransaction();
  ASSERT_TRUE(t->Get(key).ok());
  t->Set(key, "v");
  ASSERT_TRUE(t->Commit().ok());
}

int64_t ResolverWrites() { return Metrics::Global().GetGauge("fdyno_kv_resolver_writes").value(); }

// The resolver forgets writes below the oldest read view a transaction still holds, not only
// those older than 5 s: with no old transaction alive it holds the last few commits' writes.
TEST(EmbeddedTest, ResolverForgetsWritesNoLiveTransactionCanConflictWith) {
  TempDir dir;
  auto db = OpenEmbedded({.path = dir.path(), .durability = Durability::kNone});
  ASSERT_TRUE(db.ok());
  const int64_t before = ResolverWrites();
  for (int i = 0; i < 2000; ++i) ReadWrite(**db, "k" + std::to_string(i));
  EXPECT_LT(ResolverWrites() - before, 100);
}

// A transaction that holds an old read view still sees every conflict after thousands of
// later commits (they are not too old for it, and they are not forgotten).
TEST(EmbeddedTest, ALiveReadViewKeepsTheWritesItCanConflictWith) {
  TempDir dir;
  auto db = OpenEmbedded({.path = dir.path(), .durability = Durability::kNone});
  ASSERT_TRUE(db.ok());
  const int64_t before = ResolverWrites();
  auto old = (*db)->CreateTransaction();
  ASSERT_TRUE(old->Get("target").ok());
  ReadWrite(**db, "target");
  for (int i = 0; i < 2000; ++i) ReadWrite(**db, "k" + std::to_string(i));
  EXPECT_GE(ResolverWrites() - before, 2001);
  old->Set("other", "v");
  Status s = old->Commit();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().kv_code, kNotCommitted);
  old.reset();
  // Later commits forget the backlog, a bounded number of writes each.
  for (int i = 0; i < 200; ++i) ReadWrite(**db, "k" + std::to_string(i));
  EXPECT_LT(ResolverWrites() - before, 100);
}

// A read version whose view nobody holds any more cannot be read at: its writes may be gone.
TEST(EmbeddedTest, AReadVersionWithoutALiveViewIsTooOld) {
  TempDir dir;
  auto db = OpenEmbedded({.path = dir.path(), .durability = Durability::kNone});
  ASSERT_TRUE(db.ok());
  ReadWrite(**db, "k");
  int64_t rv = 0;
  {
    auto t = (*db)->CreateTransaction();
    rv = *t->GetReadVersion();
  }
  ReadWrite(**db, "k");
  auto late = (*db)->CreateTransaction();
  late->SetReadVersion(rv);
  auto v = late->Get("k");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().kv_code, kTransactionTooOld);
}

// A memory key reads like any other key: every kind of write, read-your-writes, older read
// versions (from RocksDB), conflicts, and a reopen.
TEST(EmbeddedTest, MemoryKeysReadLikeStoredKeys) {
  TempDir dir;
  const std::string k = "mv";
  auto read = [&](Database& db) {
    auto txn = db.CreateTransaction();
    auto v = txn->Get(k);
    EXPECT_TRUE(v.ok()) << v.error().message;
    return v.ok() ? *v : std::optional<std::string>("<error>");
  };
  auto commit = [&](Database& db, const std::function<void(Transaction&)>& f) {
    auto txn = db.CreateTransaction();
    f(*txn);
    EXPECT_TRUE(txn->Commit().ok());
    return *txn->GetCommittedVersion();
  };
  std::string one(8, '\0'), two(8, '\0');
  one[0] = 1;
  two[0] = 2;
  {
    auto db = OpenEmbedded({.path = dir.path(), .memory_keys = {k}});
    ASSERT_TRUE(db.ok());
    EXPECT_EQ(read(**db), std::nullopt);
    commit(**db, [&](Transaction& t) { t.Set(k, one); });
    EXPECT_EQ(read(**db), one);
    auto at_v1 = (*db)->CreateTransaction();  // holds the read version of the Set
    ASSERT_TRUE(at_v1->GetReadVersion().ok());
    commit(**db, [&](Transaction& t) {
      t.AtomicOp(MutationType::kAdd, k, one);
      t.AtomicOp(MutationType::kAdd, k, one);
    });
    std::string three(8, '\0');
    three[0] = 3;
    EXPECT_EQ(read(**db), three);
    EXPECT_EQ(*at_v1->Get(k, /*snapshot=*/true), one);  // older read version: from RocksDB
    auto at_v2 = (*db)->CreateTransaction();
    ASSERT_TRUE(at_v2->GetReadVersion().ok());
    // Read-your-writes over the memory copy.
    {
      auto txn = (*db)->CreateTransaction();
      txn->AtomicOp(MutationType::kAdd, k, one);
      std::string four(8, '\0');
      four[0] = 4;
      EXPECT_EQ(*txn->Get(k), four);
    }
    commit(**db, [&](Transaction& t) { t.ClearRange("m", "n"); });
    EXPECT_EQ(read(**db), std::nullopt);
    EXPECT_EQ(*at_v2->Get(k, /*snapshot=*/true), three);
    at_v1.reset();
    at_v2.reset();
    commit(**db, [&](Transaction& t) { t.Set(k, two); });
    commit(**db, [&](Transaction& t) { t.Clear(k); });
    EXPECT_EQ(read(**db), std::nullopt);
    commit(**db, [&](Transaction& t) { t.AtomicOp(MutationType::kAdd, k, two); });
    // A reader of the memory key conflicts with a later writer of it.
    auto reader = (*db)->CreateTransaction();
    EXPECT_EQ(*reader->Get(k), two);
    commit(**db, [&](Transaction& t) { t.AtomicOp(MutationType::kAdd, k, one); });
    reader->Set("other", "x");
    Status s = reader->Commit();
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().kv_code, kNotCommitted);
  }
  auto db = OpenEmbedded({.path = dir.path(), .memory_keys = {k}});
  ASSERT_TRUE(db.ok());
  std::string three(8, '\0');
  three[0] = 3;
  EXPECT_EQ(read(**db), three);  // loaded from RocksDB at open
}

TEST(EmbeddedTest, InMemoryTouchesNoDiskAndForgetsOnClose) {
  TempDir dir;
  const std::string path = dir.path() + "/never-created";
  {
    auto db = OpenEmbedded({.path = path, .in_memory = true});
    ASSERT_TRUE(db.ok()) << db.error().message;
    auto txn = (*db)->CreateTransaction();
    txn->Set("k", "v");
    ASSERT_TRUE(txn->Commit().ok());
    auto reader = (*db)->CreateTransaction();
    EXPECT_EQ(*reader->Get("k"), std::optional<std::string>("v"));
    // A second in-memory database is its own, not the first one's.
    auto other = OpenEmbedded({.path = path, .in_memory = true});
    ASSERT_TRUE(other.ok());
    EXPECT_EQ(*(*other)->CreateTransaction()->Get("k"), std::nullopt);
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  auto again = OpenEmbedded({.path = path, .in_memory = true});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*(*again)->CreateTransaction()->Get("k"), std::nullopt);
}

// Incompressible, so that stored bytes (table files are compressed) match the values.
std::string IncompressibleValue(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string value(90'000, '\0');
  for (char& c : value) c = static_cast<char>(rng());
  return value;
}

Status PutValue(Database& db, const std::string& key, const std::string& value) {
  auto txn = db.CreateTransaction();
  txn->Set(key, value);
  return txn->Commit();
}

// Deletes item/i and, as DeleteItem writes a receipt and a counter, writes a little too.
Status RemoveItem(Database& db, int i) {
  auto txn = db.CreateTransaction();
  txn->Clear("item/" + std::to_string(i));
  txn->Set("receipt/" + std::to_string(i), std::string(100, 'r'));
  return txn->Commit();
}

TEST(EmbeddedTest, InMemoryLimitRefusesWritesWhileDeletesStillFreeSpace) {
  constexpr uint64_t kLimit = 8 << 20;
  auto db = OpenEmbedded({.path = "mem", .in_memory = true, .memory_limit_bytes = kLimit});
  ASSERT_TRUE(db.ok());
  const std::string value = IncompressibleValue(7);
  auto put = [&](int i) { return PutValue(**db, "item/" + std::to_string(i), value); };
  int stored = 0;
  Status refused = Status::Ok();
  for (; stored < 1000; ++stored) {
    refused = put(stored);
    if (!refused.ok()) break;
  }
  ASSERT_FALSE(refused.ok()) << "8 MiB held 1000 values of 90 KB";
  EXPECT_EQ(refused.error().type, ErrorType::kLimitExceeded);
  EXPECT_NE(refused.error().message.find("The in-memory database is full"), std::string::npos);
  EXPECT_GT(stored * value.size(), kLimit * 3 / 4);  // most of the limit is usable
  EXPECT_LE(stored * value.size(), kLimit);
  // Nothing of the refused write is there.
  EXPECT_EQ(*(*db)->CreateTransaction()->Get("item/" + std::to_string(stored)), std::nullopt);
  // A full database can still be emptied, by deletes that also write a little.
  for (int i = 0; i < stored; ++i) {
    Status s = RemoveItem(**db, i);
    ASSERT_TRUE(s.ok()) << i << ": " << s.error().message;
  }
  // Once the deletes are compacted away (in the background), writes fit again.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  int again = 0;
  while (again < stored / 2) {
    if (put(1000 + again).ok()) {
      ++again;
      continue;
    }
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "space never came back";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// A transaction that read before the deletes holds a snapshot that may still read what they
// delete, and RocksDB keeps that data through any flush or compaction while it is held. The
// reclaim the deletes ask for waits for it, so the data goes once the transaction ends (it
// stayed, and the server's memory with it, when the reclaim ran first: a flaky black-box test).
TEST(EmbeddedTest, InMemoryReclaimWaitsForTheSnapshotsOlderThanItsDeletes) {
  constexpr uint64_t kLimit = 8 << 20;
  auto db = OpenEmbedded({.path = "mem", .in_memory = true, .memory_limit_bytes = kLimit});
  ASSERT_TRUE(db.ok());
  const std::string value = IncompressibleValue(13);
  int stored = 0;
  while (stored < 1000 && PutValue(**db, "item/" + std::to_string(stored), value).ok()) ++stored;
  ASSERT_LT(stored, 1000) << "8 MiB held 1000 values of 90 KB";
  // Only the reclaim compacts: RocksDB also compacts files whose deleted data a released
  // snapshot let go, but frees that memory where the reclaim does not return it to the system.
  auto* engine = dynamic_cast<embedded::EmbeddedDatabase*>(db->get());
  ASSERT_NE(engine, nullptr);
  ASSERT_TRUE(
      engine->db()->SetOptions(engine->data(), {{"disable_auto_compactions", "true"}}).ok());

  auto older = (*db)->CreateTransaction();
  ASSERT_TRUE(older->Get("item/0").ok());  // reads at a snapshot from before the deletes
  auto deletes = (*db)->CreateTransaction();
  for (int i = 0; i < stored; ++i) deletes->Clear("item/" + std::to_string(i));
  ASSERT_TRUE(deletes->Commit().ok());
  deletes.reset();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // a reclaim would have run
  older.reset();

  auto live = [&] {
    uint64_t memtables = 0, tables = 0;
    engine->db()->GetAggregatedIntProperty(rocksdb::DB::Properties::kCurSizeAllMemTables,
                                           &memtables);
    engine->db()->GetAggregatedIntProperty(rocksdb::DB::Properties::kLiveSstFilesSize, &tables);
    return memtables + tables;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (live() > kLimit / 8) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline)
        << live() << " bytes live 5 s after every value was deleted";
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// After a compaction RocksDB keeps its input files until nothing reads the version that holds
// them: a running compaction (its input version) or an open iterator. Meanwhile
// total-sst-files-size counts them beside their replacements, so the stored data looks up to
// twice its size. Deletes must go on: only the live data counts for them, while writes that
// only add count everything memory holds.
TEST(EmbeddedTest, InMemoryLimitAdmitsDeletesWhileReplacedFilesArePinned) {
  constexpr uint64_t kLimit = 16 << 20;
  auto db = OpenEmbedded({.path = "mem", .in_memory = true, .memory_limit_bytes = kLimit});
  ASSERT_TRUE(db.ok());
  const std::string value = IncompressibleValue(11);
  auto put = [&](const std::string& key) { return PutValue(**db, key, value); };
  int stored = 0;
  while (stored < 1000 && put("item/" + std::to_string(stored)).ok()) ++stored;
  ASSERT_LT(stored, 1000) << "16 MiB held 1000 values of 90 KB";
  constexpr int kFreed = 10;  // room for one more value in the live data, once compacted
  ASSERT_GT(stored, kFreed);
  for (int i = 0; i < kFreed; ++i) ASSERT_TRUE(RemoveItem(**db, i).ok()) << i;

  // Flush the data into table files, pin them as an iterator does, then replace every one of
  // them with a compaction that rewrites them all.
  auto* engine = dynamic_cast<embedded::EmbeddedDatabase*>(db->get());
  ASSERT_NE(engine, nullptr);
  rocksdb::DB* rocks = engine->db();
  ASSERT_TRUE(rocks->Flush(rocksdb::FlushOptions(), engine->data()).ok());
  std::unique_ptr<rocksdb::Iterator> pin(
      rocks->NewIterator(rocksdb::ReadOptions(), engine->data()));
  rocksdb::CompactRangeOptions rewrite;
  rewrite.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  ASSERT_TRUE(rocks->CompactRange(rewrite, engine->data(), nullptr, nullptr).ok());
  auto property = [&](const std::string& name) {
    uint64_t v = 0;
    EXPECT_TRUE(rocks->GetAggregatedIntProperty(name, &v)) << name;
    return v;
  };
  using Properties = rocksdb::DB::Properties;
  const uint64_t held =
      property(Properties::kSizeAllMemTables) + property(Properties::kTotalSstFilesSize);
  const uint64_t live =
      property(Properties::kCurSizeAllMemTables) + property(Properties::kLiveSstFilesSize);
  const uint64_t reserve = std::max<uint64_t>(kLimit / 16, 4 << 20);
  ASSERT_GT(held, kLimit + reserve) << "the replaced files are not counted: nothing to test";
  ASSERT_LT(live + 2 * value.size(), kLimit) << "the live data has no room for a value";

  // A write that only adds is refused although the live data has room: memory does hold the
  // pinned files. Deletes are accepted.
  Status grow = put("more");
  ASSERT_FALSE(grow.ok());
  EXPECT_EQ(grow.error().type, ErrorType::kLimitExceeded);
  for (int i = kFreed; i < stored; ++i) {
    Status s = RemoveItem(**db, i);
    ASSERT_TRUE(s.ok()) << i << ": " << s.error().message;
  }
  // Once nothing reads the replaced files, RocksDB drops them and the write fits.
  pin.reset();
  EXPECT_TRUE(put("more").ok());
}

}  // namespace
}  // namespace fdyno::kv
