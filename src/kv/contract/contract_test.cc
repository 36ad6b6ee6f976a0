// The kv contract suite (kv/kv.h, docs/architecture.md "The kv contract"), run against every
// engine registered in engines.cc. Each test gets a fresh database in its own directory.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <future>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "kv/contract/engines.h"

namespace fdyno::kv::contract {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

std::string Le64(int64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i)
    s[i] = static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff);
  return s;
}

int64_t FromLe64(const std::string& s) {
  uint64_t v = 0;
  for (size_t i = s.size(); i-- > 0;) v = (v << 8) | static_cast<unsigned char>(s[i]);
  return static_cast<int64_t>(v);
}

std::string Le32(uint32_t v) { return Le64(v).substr(0, 4); }

// A versionstamp placeholder at offset within prefix + 10 bytes + suffix, with the offset
// suffix of API version >= 520.
std::string Stamped(const std::string& prefix, const std::string& suffix = "") {
  return prefix + std::string(10, '\0') + suffix + Le32(static_cast<uint32_t>(prefix.size()));
}

int Code(const Status& s) { return s.ok() ? 0 : s.error().kv_code; }
template <typename T>
int Code(const Result<T>& r) {
  return r.ok() ? 0 : r.error().kv_code;
}

std::vector<std::string> Keys(const RangeResult& r) {
  std::vector<std::string> keys;
  for (const KeyValue& kv : r.kvs) keys.push_back(kv.key);
  return keys;
}

class ContractTest : public ::testing::TestWithParam<EngineFactory> {
 protected:
  void SetUp() override {
    if (GetParam().unavailable) {
      if (std::string why = GetParam().unavailable(); !why.empty()) GTEST_SKIP() << why;
    }
    std::string tmpl = (std::filesystem::temp_directory_path() / "fdyno_contract_XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    Open();
  }
  void TearDown() override {
    db_.reset();
    if (dir_.empty()) return;  // skipped
    if (GetParam().destroy) GetParam().destroy(dir_);
    std::filesystem::remove_all(dir_);
  }

  void Open(Clock* clock = nullptr) {
    db_.reset();
    auto db = GetParam().open(dir_, clock);
    ASSERT_TRUE(db.ok()) << db.error().message;
    db_ = std::move(db).value();
  }

  std::unique_ptr<Transaction> Txn() { return db_->CreateTransaction(); }

  // Lets `d` pass for the engine: on `clock` when the engine follows it, else in real time.
  void Elapse(ManualClock& clock, milliseconds d) {
    if (GetParam().follows_clock) {
      clock.Advance(d);
    } else {
      std::this_thread::sleep_for(d);
    }
  }

  void Put(const std::string& k, const std::string& v) {
    auto t = Txn();
    t->Set(k, v);
    ASSERT_TRUE(t->Commit().ok());
  }
  std::optional<std::string> Read(const std::string& k) {
    auto t = Txn();
    auto v = t->Get(k);
    EXPECT_TRUE(v.ok());
    return v.ok() ? *v : std::nullopt;
  }
  std::vector<std::string> ReadKeys(Transaction* t, const std::string& b, const std::string& e,
                                    RangeOptions o = {}) {
    auto r = t->GetRange(b, e, o);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? Keys(*r) : std::vector<std::string>{};
  }

  std::string dir_;
  ManualClock clock_;  // declared before db_: outlives it
  std::unique_ptr<Database> db_;
};

using V = std::vector<std::string>;

TEST_P(ContractTest, SnapshotIsolation) {
  Put("a", "1");
  Put("c", "1");
  auto reader = Txn();
  ASSERT_EQ(**reader->Get("a"), "1");
  auto writer = Txn();
  writer->Set("a", "2");
  writer->Set("b", "2");
  writer->Clear("c");
  ASSERT_TRUE(writer->Commit().ok());
  // The reader keeps its read version: neither the change, the insert nor the delete shows.
  EXPECT_EQ(**reader->Get("a"), "1");
  EXPECT_FALSE(*reader->Get("b"));
  EXPECT_EQ(ReadKeys(reader.get(), "a", "z"), (V{"a", "c"}));
  auto later = Txn();
  EXPECT_EQ(**later->Get("a"), "2");
  EXPECT_EQ(ReadKeys(later.get(), "a", "z"), (V{"a", "b"}));
}

TEST_P(ContractTest, ReadVersionIsFixedAndAdvancesWithCommits) {
  auto t = Txn();
  auto v1 = t->GetReadVersion();
  ASSERT_TRUE(v1.ok());
  Put("k", "v");
  EXPECT_EQ(*t->GetReadVersion(), *v1);
  auto w = Txn();
  w->Set("x", "y");
  ASSERT_TRUE(w->Commit().ok());
  int64_t cv = *w->GetCommittedVersion();
  EXPECT_GT(cv, *v1);
  auto after = Txn();
  EXPECT_GE(*after->GetReadVersion(), cv);
}

TEST_P(ContractTest, ReadYourWritesPoints) {
  Put("k", "old");
  auto t = Txn();
  t->Set("k", "new");
  EXPECT_EQ(**t->Get("k"), "new");
  t->Clear("k");
  EXPECT_FALSE(*t->Get("k"));
  t->Set("k", "again");
  EXPECT_EQ(**t->Get("k"), "again");
  t->Set("fresh", "1");
  EXPECT_EQ(**t->Get("fresh", /*snapshot=*/true), "1");
  EXPECT_EQ(*Read("k"), "old");  // nothing is visible outside before commit
  ASSERT_TRUE(t->Commit().ok());
  EXPECT_EQ(*Read("k"), "again");
  EXPECT_EQ(*Read("fresh"), "1");
}

TEST_P(ContractTest, ReadYourWritesRanges) {
  for (const char* k : {"a", "c", "e", "g"}) Put(k, std::string("db-") + k);
  auto t = Txn();
  t->Set("b", "mine-b");
  t->Set("c", "mine-c");
  t->Clear("e");
  t->Set("h", "mine-h");
  t->Set("zz", "outside");
  auto fwd = t->GetRange("a", "z");
  ASSERT_TRUE(fwd.ok());
  EXPECT_EQ(fwd->kvs,
            (std::vector<KeyValue>{
                {"a", "db-a"}, {"b", "mine-b"}, {"c", "mine-c"}, {"g", "db-g"}, {"h", "mine-h"}}));
  EXPECT_FALSE(fwd->more);
  EXPECT_EQ(ReadKeys(t.get(), "a", "z", {.reverse = true}), (V{"h", "g", "c", "b", "a"}));
  EXPECT_EQ(ReadKeys(t.get(), "b", "g"), (V{"b", "c"}));
  EXPECT_EQ(ReadKeys(t.get(), "b", "g", {.reverse = true}), (V{"c", "b"}));

  auto lim = t->GetRange("a", "z", {.limit = 3});
  ASSERT_TRUE(lim.ok());
  EXPECT_EQ(Keys(*lim), (V{"a", "b", "c"}));
  EXPECT_TRUE(lim->more);
  auto rlim = t->GetRange("a", "z", {.limit = 2, .reverse = true});
  ASSERT_TRUE(rlim.ok());
  EXPECT_EQ(Keys(*rlim), (V{"h", "g"}));
  EXPECT_TRUE(rlim->more);
  auto exact = t->GetRange("a", "z", {.limit = 5});
  ASSERT_TRUE(exact.ok());
  EXPECT_EQ(exact->kvs.size(), 5u);
  EXPECT_FALSE(exact->more);
  auto empty = t->GetRange("m", "m");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->kvs.empty());
}

TEST_P(ContractTest, ReadYourWritesClearRange) {
  for (const char* k : {"a", "b", "c", "d", "e"}) Put(k, k);
  auto t = Txn();
  t->Set("bb", "new");
  t->ClearRange("b", "d");  // clears b, bb (our own write) and c
  EXPECT_FALSE(*t->Get("b"));
  EXPECT_FALSE(*t->Get("bb"));
  EXPECT_EQ(ReadKeys(t.get(), "a", "z"), (V{"a", "d", "e"}));
  t->Set("c", "back");  // a write after the clear shows again
  EXPECT_EQ(**t->Get("c"), "back");
  EXPECT_EQ(ReadKeys(t.get(), "a", "z"), (V{"a", "c", "d", "e"}));
  EXPECT_EQ(ReadKeys(t.get(), "a", "z", {.reverse = true}), (V{"e", "d", "c", "a"}));
  EXPECT_EQ(ReadKeys(t.get(), "a", "z", {.limit = 2, .reverse = true}), (V{"e", "d"}));
  t->ClearRange("d", "zz");
  EXPECT_EQ(ReadKeys(t.get(), "", "\xff"), (V{"a", "c"}));
  EXPECT_EQ(ReadKeys(t.get(), "", "\xff", {.reverse = true}), (V{"c", "a"}));
  ASSERT_TRUE(t->Commit().ok());
  auto r = Txn();
  EXPECT_EQ(ReadKeys(r.get(), "", "\xff"), (V{"a", "c"}));
  EXPECT_EQ(**r->Get("c"), "back");
}

TEST_P(ContractTest, AtomicAdd) {
  Put("n", Le64(5));
  auto t = Txn();
  t->AtomicOp(MutationType::kAdd, "n", Le64(3));
  EXPECT_EQ(FromLe64(**t->Get("n")), 8);
  t->AtomicOp(MutationType::kAdd, "absent", Le64(7));
  EXPECT_EQ(FromLe64(**t->Get("absent")), 7);
  t->Set("s", Le64(100));
  t->AtomicOp(MutationType::kAdd, "s", Le64(-1));
  EXPECT_EQ(FromLe64(**t->Get("s")), 99);
  t->ClearRange("n", "o");
  t->AtomicOp(MutationType::kAdd, "n", Le64(2));  // over a cleared key: starts from nothing
  auto range = t->GetRange("a", "z");
  ASSERT_TRUE(range.ok());
  ASSERT_EQ(Keys(*range), (V{"absent", "n", "s"}));
  EXPECT_EQ(FromLe64(range->kvs[1].value), 2);
  ASSERT_TRUE(t->Commit().ok());
  EXPECT_EQ(FromLe64(*Read("n")), 2);
  EXPECT_EQ(FromLe64(*Read("absent")), 7);
  EXPECT_EQ(FromLe64(*Read("s")), 99);

  // Blind adds never conflict: concurrent increments all land.
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      for (int j = 0; j < 25; ++j) {
        auto a = Txn();
        a->AtomicOp(MutationType::kAdd, "counter", Le64(1));
        EXPECT_TRUE(a->Commit().ok());
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(FromLe64(*Read("counter")), 100);
}

TEST_P(ContractTest, PointReadConflicts) {
  Put("k", "0");
  auto t1 = Txn();
  ASSERT_TRUE(t1->Get("k").ok());
  Put("k", "1");
  t1->Set("other", "x");
  EXPECT_EQ(Code(t1->Commit()), kNotCommitted);
  EXPECT_FALSE(Read("other"));  // nothing applied

  auto t2 = Txn();
  ASSERT_TRUE(t2->Get("k").ok());
  Put("unrelated", "1");
  t2->Set("other", "y");
  EXPECT_TRUE(t2->Commit().ok());
}

TEST_P(ContractTest, ReadOfAbsentKeyConflicts) {
  auto t = Txn();
  ASSERT_FALSE(*t->Get("ghost"));
  Put("ghost", "boo");
  t->Set("x", "1");
  EXPECT_EQ(Code(t->Commit()), kNotCommitted);
}

TEST_P(ContractTest, RangeReadConflictsAndPreventsPhantoms) {
  Put("a", "1");
  Put("e", "1");
  // A key inserted inside the range read (a phantom) conflicts.
  auto t = Txn();
  EXPECT_EQ(ReadKeys(t.get(), "b", "d"), V{});
  Put("c", "new");
  t->Set("x", "1");
  EXPECT_EQ(Code(t->Commit()), kNotCommitted);
  // A key outside it does not.
  auto u = Txn();
  EXPECT_EQ(ReadKeys(u.get(), "b", "d"), (V{"c"}));
  Put("d", "boundary");  // end is exclusive
  Put("a", "2");
  u->Set("x", "2");
  EXPECT_TRUE(u->Commit().ok());
  // Clearing a key inside the range conflicts too.
  auto w = Txn();
  EXPECT_EQ(ReadKeys(w.get(), "b", "d", {.reverse = true}), (V{"c"}));
  auto c = Txn();
  c->ClearRange("c", "cz");
  ASSERT_TRUE(c->Commit().ok());
  w->Set("x", "3");
  EXPECT_EQ(Code(w->Commit()), kNotCommitted);
}

TEST_P(ContractTest, LimitedRangeReadConflictsOnlyOnWhatItExamined) {
  for (const char* k : {"a", "b", "c", "d"}) Put(k, k);
  // Forward, limit 2: examined [a, b]; a write after b does not conflict, one before does.
  auto t = Txn();
  EXPECT_EQ(ReadKeys(t.get(), "a", "z", {.limit = 2}), (V{"a", "b"}));
  Put("d", "changed");
  Put("bb", "new");
  t->Set("zz", "1");
  EXPECT_TRUE(t->Commit().ok());
  auto u = Txn();
  EXPECT_EQ(ReadKeys(u.get(), "a", "z", {.limit = 2}), (V{"a", "b"}));
  Put("ab", "phantom");
  u->Set("zz", "2");
  EXPECT_EQ(Code(u->Commit()), kNotCommitted);
  // Reverse, limit 2: examined [c, z).
  auto r = Txn();
  EXPECT_EQ(ReadKeys(r.get(), "a", "z", {.limit = 2, .reverse = true}), (V{"d", "c"}));
  Put("a", "changed");
  r->Set("zz", "3");
  EXPECT_TRUE(r->Commit().ok());
  auto s = Txn();
  EXPECT_EQ(ReadKeys(s.get(), "a", "z", {.limit = 2, .reverse = true}), (V{"d", "c"}));
  Put("y", "phantom");
  s->Set("zz", "4");
  EXPECT_EQ(Code(s->Commit()), kNotCommitted);
}

TEST_P(ContractTest, SnapshotReadsDoNotConflict) {
  Put("k", "0");
  auto t = Txn();
  ASSERT_TRUE(t->Get("k", /*snapshot=*/true).ok());
  ASSERT_TRUE(t->GetRange("a", "z", {.snapshot = true}).ok());
  Put("k", "1");
  Put("m", "1");
  t->Set("x", "1");
  EXPECT_TRUE(t->Commit().ok());
}

TEST_P(ContractTest, ExplicitConflictRanges) {
  // An explicit read conflict range conflicts like a read.
  auto t = Txn();
  ASSERT_TRUE(t->GetReadVersion().ok());
  ASSERT_TRUE(t->AddConflictRange("m", "n", ConflictRangeType::kRead).ok());
  Put("mm", "1");
  t->Set("x", "1");
  EXPECT_EQ(Code(t->Commit()), kNotCommitted);
  // An explicit write conflict range, with no mutation, makes readers of it conflict.
  auto reader = Txn();
  ASSERT_TRUE(reader->Get("p").ok());
  auto marker = Txn();
  ASSERT_TRUE(marker->AddConflictRange("o", "q", ConflictRangeType::kWrite).ok());
  ASSERT_TRUE(marker->Commit().ok());
  EXPECT_GE(*marker->GetCommittedVersion(), 0);
  reader->Set("y", "1");
  EXPECT_EQ(Code(reader->Commit()), kNotCommitted);
  // Ranges that miss each other do not conflict.
  auto u = Txn();
  ASSERT_TRUE(u->GetReadVersion().ok());
  ASSERT_TRUE(u->AddConflictRange("r", "s", ConflictRangeType::kRead).ok());
  Put("s", "1");
  u->Set("z", "1");
  EXPECT_TRUE(u->Commit().ok());
}

TEST_P(ContractTest, ConcurrentReadModifyWriteIsSerializable) {
  Put("counter", "0");
  constexpr int kThreads = 4, kIncrements = 20;
  std::atomic<int> conflicts{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&] {
      auto t = Txn();
      for (int j = 0; j < kIncrements;) {
        auto v = t->Get("counter");
        ASSERT_TRUE(v.ok());
        t->Set("counter", std::to_string(std::stoi(**v) + 1));
        Status s = t->Commit();
        t->Reset();
        if (s.ok()) {
          ++j;
        } else {
          ASSERT_EQ(Code(s), kNotCommitted);
          ++conflicts;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(*Read("counter"), std::to_string(kThreads * kIncrements));
}

// Fulfils a promise when destroyed: held by a callback, it tells when the engine has released
// the callback, after which the callback can never run again.
struct ReleaseSignal {
  std::promise<void> released;
  ~ReleaseSignal() { released.set_value(); }
};

// Waits (up to 10 s: a stuck engine fails the test rather than hanging it) until `f` is ready.
template <typename Future>
bool Await(Future& f) {
  return f.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
}

// CommitAsync answers with exactly what Commit would have: done runs once, and the
// transaction's committed version and versionstamp are those of the commit. "Once" is checked
// after the engine released the callback, so a second call cannot come later.
Status CommitAndWait(Transaction& t) {
  auto signal = std::make_shared<ReleaseSignal>();
  std::future<void> released = signal->released.get_future();
  std::atomic<int> calls{0};
  Status result;
  t.CommitAsync([&, signal](Status s) {
    if (calls.fetch_add(1) == 0) result = std::move(s);
  });
  signal.reset();
  EXPECT_TRUE(Await(released)) << "the engine kept the callback after answering";
  EXPECT_EQ(calls.load(), 1);
  return result;
}

TEST_P(ContractTest, CommitAsyncCommitsLikeCommit) {
  auto t = Txn();
  t->Set("a", "1");
  t->AtomicOp(MutationType::kSetVersionstampedValue, "stamp", Stamped("vs="));
  ASSERT_TRUE(CommitAndWait(*t).ok());
  auto version = t->GetCommittedVersion();
  ASSERT_TRUE(version.ok());
  EXPECT_GT(*version, 0);
  auto vs = t->GetVersionstamp();
  ASSERT_TRUE(vs.ok());
  EXPECT_EQ(*Read("a"), "1");
  EXPECT_EQ(*Read("stamp"), "vs=" + *vs);
  EXPECT_EQ(Code(CommitAndWait(*t)), kUsedDuringCommit);  // a second commit, as with Commit()

  auto empty = Txn();  // no mutations: committed at once, version -1
  ASSERT_TRUE(CommitAndWait(*empty).ok());
  EXPECT_EQ(*empty->GetCommittedVersion(), -1);

  auto big = Txn();  // a limit violation is reported by the commit
  big->Set("k", std::string(kMaxValueBytes + 1, 'v'));
  EXPECT_EQ(Code(CommitAndWait(*big)), kValueTooLarge);
}

// The callback (and what it holds: a network connection, in the server) is released once it
// has run, without waiting for another commit to come along.
TEST_P(ContractTest, CommitAsyncReleasesItsCallbackOnceRun) {
  auto signal = std::make_shared<ReleaseSignal>();
  std::future<void> released = signal->released.get_future();
  std::promise<void> ran;
  auto t = Txn();
  t->Set("k", "v");
  t->CommitAsync([signal, &ran](Status s) {
    EXPECT_TRUE(s.ok());
    ran.set_value();
  });
  signal.reset();
  ran.get_future().get();
  // No other commit comes along: the engine must release it on its own.
  EXPECT_TRUE(Await(released));
}

TEST_P(ContractTest, CommitAsyncReportsConflicts) {
  Put("k", "0");
  auto reader = Txn();
  ASSERT_TRUE(reader->Get("k").ok());
  reader->Set("other", "x");
  Put("k", "1");
  EXPECT_EQ(Code(CommitAndWait(*reader)), kNotCommitted);
  EXPECT_EQ(Read("other"), std::nullopt);
  reader->Reset();  // usable again once done has run
  ASSERT_TRUE(reader->Get("k").ok());
  reader->Set("other", "y");
  ASSERT_TRUE(CommitAndWait(*reader).ok());
  EXPECT_EQ(*Read("other"), "y");
}

TEST_P(ContractTest, ConcurrentAsyncAndWaitingCommitsAreSerializable) {
  // Increments of one counter through both commit calls at once: every success is counted
  // exactly once, conflicts apply nothing, and each done may destroy its transaction.
  Put("counter", "0");
  constexpr int kThreads = 4, kIncrements = 25;
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      for (int j = 0; j < kIncrements;) {
        auto t = Txn();
        auto v = t->Get("counter");
        ASSERT_TRUE(v.ok());
        t->Set("counter", std::to_string(std::stoi(**v) + 1));
        Status s;
        if (i % 2 == 0) {
          s = t->Commit();
        } else {
          std::promise<Status> result;
          Transaction* raw = t.release();
          raw->CommitAsync([&result, raw](Status st) {
            delete raw;
            result.set_value(std::move(st));
          });
          s = result.get_future().get();
        }
        if (s.ok()) {
          ++j;
        } else {
          ASSERT_EQ(Code(s), kNotCommitted);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(*Read("counter"), std::to_string(kThreads * kIncrements));
}

TEST_P(ContractTest, TrivialCommit) {
  auto t = Txn();
  ASSERT_TRUE(t->Get("k").ok());
  ASSERT_TRUE(t->Commit().ok());
  EXPECT_EQ(*t->GetCommittedVersion(), -1);
  EXPECT_FALSE(t->GetVersionstamp().ok());
  auto empty = Txn();
  ASSERT_TRUE(empty->Commit().ok());
  EXPECT_EQ(*empty->GetCommittedVersion(), -1);
}

TEST_P(ContractTest, LimitsAndCodes) {
  auto ok = Txn();
  ok->Set(std::string(kMaxKeyBytes, 'k'), std::string(kMaxValueBytes, 'v'));
  EXPECT_TRUE(ok->Commit().ok());
  EXPECT_EQ(Read(std::string(kMaxKeyBytes, 'k'))->size(), kMaxValueBytes);

  auto key = Txn();
  key->Set(std::string(kMaxKeyBytes + 1, 'k'), "v");
  EXPECT_EQ(Code(key->Commit()), kKeyTooLarge);
  auto value = Txn();
  value->Set("k", std::string(kMaxValueBytes + 1, 'v'));
  EXPECT_EQ(Code(value->Commit()), kValueTooLarge);
  auto add = Txn();
  add->AtomicOp(MutationType::kAdd, std::string(kMaxKeyBytes + 1, 'k'), Le64(1));
  EXPECT_EQ(Code(add->Commit()), kKeyTooLarge);
  auto big = Txn();
  for (int i = 0; i < 101; ++i) big->Set("big" + std::to_string(i), std::string(99'000, 'x'));
  EXPECT_EQ(Code(big->Commit()), kTransactionTooLarge);
  EXPECT_FALSE(Read("big0"));
  EXPECT_TRUE(kv::IsRetryable(kNotCommitted));
  EXPECT_FALSE(kv::IsRetryable(kTransactionTooLarge));
}

TEST_P(ContractTest, CancelFailsLaterOperations) {
  auto t = Txn();
  t->Set("k", "v");
  t->Cancel();
  EXPECT_EQ(Code(t->Get("k")), kTransactionCancelled);
  EXPECT_EQ(Code(t->Commit()), kTransactionCancelled);
  EXPECT_FALSE(Read("k"));
  t->Reset();
  t->Set("k", "v");
  EXPECT_TRUE(t->Commit().ok());
}

TEST_P(ContractTest, VersionstampsIncreaseAndMatchTheCommit) {
  std::string prev;
  for (int i = 0; i < 5; ++i) {
    auto t = Txn();
    t->AtomicOp(MutationType::kSetVersionstampedKey, Stamped("log/", std::string("\x00\x01", 2)),
                "entry");
    t->AtomicOp(MutationType::kSetVersionstampedValue, "latest", Stamped("vs=", "!"));
    ASSERT_TRUE(t->Commit().ok());
    auto vs = t->GetVersionstamp();
    ASSERT_TRUE(vs.ok());
    ASSERT_EQ(vs->size(), 10u);
    EXPECT_GT(*vs, prev);
    // The committed version is the versionstamp's first 8 bytes, big-endian.
    int64_t version = 0;
    for (int b = 0; b < 8; ++b) version = (version << 8) | static_cast<unsigned char>((*vs)[b]);
    EXPECT_EQ(version, *t->GetCommittedVersion());
    EXPECT_EQ(*Read("latest"), "vs=" + *vs + "!");
    EXPECT_EQ(*Read("log/" + *vs + std::string("\x00\x01", 2)), "entry");
    prev = *vs;
  }
  auto r = Txn();
  auto log = r->GetRange("log/", "log0");
  ASSERT_TRUE(log.ok());
  ASSERT_EQ(log->kvs.size(), 5u);  // key order is commit order
  EXPECT_EQ(log->kvs.back().key.substr(4, 10), prev);
}

TEST_P(ContractTest, VersionstampsAreDistinctUnderConcurrency) {
  std::vector<std::vector<std::string>> stamps(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      for (int j = 0; j < 20; ++j) {
        auto t = Txn();
        t->AtomicOp(MutationType::kSetVersionstampedKey, Stamped("q/"), std::to_string(i));
        ASSERT_TRUE(t->Commit().ok());
        stamps[i].push_back(*t->GetVersionstamp());
      }
    });
  }
  for (auto& th : threads) th.join();
  std::set<std::string> all;
  for (const auto& s : stamps) {
    for (size_t j = 1; j < s.size(); ++j) EXPECT_GT(s[j], s[j - 1]);
    all.insert(s.begin(), s.end());
  }
  EXPECT_EQ(all.size(), 80u);
  auto r = Txn();
  auto q = r->GetRange("q/", "q0");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->kvs.size(), 80u);
}

TEST_P(ContractTest, MalformedVersionstampIsRejected) {
  auto t = Txn();
  t->AtomicOp(MutationType::kSetVersionstampedKey, "short" + Le32(3), "v");  // no room
  EXPECT_FALSE(t->Commit().ok());
}

TEST_P(ContractTest, ReadingAVersionstampedValueBeforeCommitFails) {
  auto t = Txn();
  t->AtomicOp(MutationType::kSetVersionstampedValue, "k", Stamped(""));
  EXPECT_FALSE(t->Get("k").ok());
}

TEST_P(ContractTest, DurableAcrossReopen) {
  if (!GetParam().persistent) GTEST_SKIP() << GetParam().name << " is not persistent";
  Put("a", "1");
  Put("b", "2");
  auto t = Txn();
  t->ClearRange("b", "c");
  t->AtomicOp(MutationType::kAdd, "n", Le64(41));
  t->AtomicOp(MutationType::kAdd, "n", Le64(1));
  ASSERT_TRUE(t->Commit().ok());
  auto stamp = Txn();
  stamp->AtomicOp(MutationType::kSetVersionstampedKey, Stamped("s/"), "x");
  ASSERT_TRUE(stamp->Commit().ok());
  std::string before = *stamp->GetVersionstamp();
  Open();
  EXPECT_EQ(*Read("a"), "1");
  EXPECT_FALSE(Read("b"));
  EXPECT_EQ(FromLe64(*Read("n")), 42);
  // Versionstamps keep increasing across the reopen.
  auto after = Txn();
  after->AtomicOp(MutationType::kSetVersionstampedKey, Stamped("s/"), "y");
  ASSERT_TRUE(after->Commit().ok());
  EXPECT_GT(*after->GetVersionstamp(), before);
  auto r = Txn();
  EXPECT_EQ(ReadKeys(r.get(), "s/", "s0").size(), 2u);
}

TEST_P(ContractTest, DataDirectoryIsLocked) {
  if (!GetParam().locks_directory) GTEST_SKIP() << GetParam().name << " does not lock";
  auto second = GetParam().open(dir_, nullptr);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().message.find(dir_), std::string::npos) << second.error().message;
  db_.reset();
  auto third = GetParam().open(dir_, nullptr);
  EXPECT_TRUE(third.ok()) << "the lock must be released when the database closes";
}

TEST_P(ContractTest, ReadVersionOlderThanFiveSecondsIsTooOld) {
  ManualClock& clock = clock_;
  Open(&clock);
  for (const char* k : {"k", "k2", "k3"}) Put(k, "v");
  // At the boundary on an injected clock; with margins when the window passes in real time.
  const bool exact = GetParam().follows_clock;
  auto t = Txn();
  ASSERT_TRUE(t->Get("k").ok());
  Elapse(clock, milliseconds(exact ? 4900 : 3000));
  EXPECT_TRUE(t->Get("k2").ok());
  Elapse(clock, milliseconds(exact ? 200 : 4000));
  // A key the transaction has not read (FoundationDB answers a second read of a key from its
  // read-your-writes cache, without the storage servers that enforce the window).
  EXPECT_EQ(Code(t->Get("k3")), kTransactionTooOld);
  t->Set("k", "w");
  EXPECT_EQ(Code(t->Commit()), kTransactionTooOld);
  EXPECT_TRUE(kv::IsRetryable(kTransactionTooOld));
  t->Reset();  // a new read version is fresh again
  ASSERT_TRUE(t->Get("k").ok());
  t->Set("k", "w");
  EXPECT_TRUE(t->Commit().ok());
}

TEST_P(ContractTest, SnapshotTransactionReadsOneVersionForAsLongAsItLives) {
  ManualClock& clock = clock_;
  Open(&clock);
  Put("a", "1");
  Put("k", "v1");
  std::unique_ptr<Transaction> snap = db_->CreateSnapshotTransaction();
  if (!snap) GTEST_SKIP() << GetParam().name << " cannot hold a snapshot past the window";
  auto version = snap->GetReadVersion();
  ASSERT_TRUE(version.ok());
  // Writers go on, and time passes far beyond the 5 s window.
  for (int i = 0; i < 30; ++i) {
    clock.Advance(seconds(1));
    Put("k", "v" + std::to_string(i + 2));
    Put("n" + std::to_string(i), "x");
  }
  auto v = snap->Get("k");
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(*v, "v1");
  EXPECT_EQ(ReadKeys(snap.get(), "a", "z"), (V{"a", "k"}));
  EXPECT_EQ(*snap->GetReadVersion(), *version);
  // An ordinary transaction still ages out meanwhile.
  auto t = Txn();
  ASSERT_TRUE(t->Get("k").ok());
  clock.Advance(seconds(6));
  EXPECT_EQ(Code(t->Get("k")), kTransactionTooOld);
  // Reset keeps the pinned version; SetReadVersion does not move it.
  snap->Reset();
  snap->SetReadVersion(*version + 1);
  EXPECT_EQ(*snap->Get("k"), "v1");
  EXPECT_EQ(*snap->GetReadVersion(), *version);
  // Read-only: a commit without writes succeeds, one with writes fails and applies nothing.
  EXPECT_TRUE(snap->Commit().ok());
  snap->Reset();
  snap->Set("w", "1");
  EXPECT_EQ(Code(snap->Commit()), kClientInvalidOperation);
  EXPECT_FALSE(Read("w"));
  snap.reset();
  EXPECT_EQ(*Read("k"), "v31");
}

TEST_P(ContractTest, TooOldCommitAfterHistoryMovedOn) {
  ManualClock& clock = clock_;
  Open(&clock);
  Put("k", "v");
  auto t = Txn();
  ASSERT_TRUE(t->Get("k").ok());
  // Other commits keep flowing while t waits beyond the window (7 s in real time).
  for (int i = 0; i < (GetParam().follows_clock ? 12 : 14); ++i) {
    Elapse(clock, milliseconds(500));
    Put("other" + std::to_string(i), "x");
  }
  t->Set("x", "1");
  EXPECT_EQ(Code(t->Commit()), kTransactionTooOld);
}

TEST_P(ContractTest, TimeoutFailsOperations) {
  ManualClock& clock = clock_;
  Open(&clock);
  // In real time, long enough for a cluster's round trips to fit in.
  const milliseconds timeout(GetParam().follows_clock ? 100 : 1000);
  const milliseconds past = timeout * 3 / 2;
  auto t = Txn();
  t->SetTimeout(timeout);
  ASSERT_TRUE(t->Get("k").ok());
  Elapse(clock, past);
  EXPECT_EQ(Code(t->Get("k")), kTransactionTimedOut);
  t->Set("k", "v");
  EXPECT_EQ(Code(t->Commit()), kTransactionTimedOut);
  EXPECT_FALSE(Read("k"));
  t->Reset();  // keeps the option, restarts the clock
  t->Set("k", "v");
  EXPECT_TRUE(t->Commit().ok());
  t->Reset();
  Elapse(clock, past);
  EXPECT_EQ(Code(t->GetReadVersion()), kTransactionTimedOut);
  t->Reset();
  t->SetTimeout(milliseconds(0));  // 0 disables it
  Elapse(clock, seconds(1));
  EXPECT_TRUE(t->Get("k").ok());
}

// FoundationDB's ADD on the model: little-endian, truncated to the parameter's length.
std::string ModelAdd(const std::optional<std::string>& existing, const std::string& param) {
  if (!existing) return param;
  std::string out(param.size(), '\0');
  unsigned carry = 0;
  for (size_t i = 0; i < param.size(); ++i) {
    unsigned a = i < existing->size() ? static_cast<unsigned char>((*existing)[i]) : 0;
    unsigned sum = a + static_cast<unsigned char>(param[i]) + carry;
    out[i] = static_cast<char>(sum & 0xff);
    carry = sum >> 8;
  }
  return out;
}

// Seeded random transactions (sets, clears, range clears, adds, point and range reads with
// limits, forward and reverse) against a std::map model. Single-threaded, so each
// transaction's snapshot is the model's committed state. Replay: FDYNO_KV_SEED=<seed>.
TEST_P(ContractTest, RandomOperationsMatchAModel) {
  const char* env = std::getenv("FDYNO_KV_SEED");
  uint64_t seed =
      env != nullptr && *env != '\0' ? std::strtoull(env, nullptr, 10) : std::random_device{}();
  std::printf("kv model test seed=%llu (replay: FDYNO_KV_SEED=%llu)\n",
              static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  auto key = [&] {
    std::string k = "k" + std::to_string(rng() % 16);
    if (rng() % 4 == 0) k += std::string(1, static_cast<char>('a' + rng() % 3));
    return k;
  };
  std::map<std::string, std::string> committed;
  for (int txn_no = 0; txn_no < 150; ++txn_no) {
    SCOPED_TRACE("transaction " + std::to_string(txn_no));
    auto t = Txn();
    std::map<std::string, std::string> view = committed;
    int ops = 1 + static_cast<int>(rng() % 12);
    for (int op = 0; op < ops; ++op) {
      switch (rng() % 7) {
        case 0: {
          std::string k = key(), v = "v" + std::to_string(rng() % 1000);
          t->Set(k, v);
          view[k] = v;
          break;
        }
        case 1: {
          std::string k = key();
          t->Clear(k);
          view.erase(k);
          break;
        }
        case 2: {
          std::string a = key(), b = key();
          if (a > b) std::swap(a, b);
          t->ClearRange(a, b);
          view.erase(view.lower_bound(a), view.lower_bound(b));
          break;
        }
        case 3: {
          std::string k = key();
          std::string param = Le64(static_cast<int64_t>(rng() % 300)).substr(0, 1 + rng() % 8);
          t->AtomicOp(MutationType::kAdd, k, param);
          auto it = view.find(k);
          view[k] = ModelAdd(it == view.end() ? std::nullopt : std::optional(it->second), param);
          break;
        }
        case 4: {
          std::string k = key();
          auto got = t->Get(k, rng() % 2 == 0);
          ASSERT_TRUE(got.ok()) << got.error().message;
          auto it = view.find(k);
          ASSERT_EQ(*got, it == view.end() ? std::nullopt : std::optional(it->second)) << k;
          break;
        }
        default: {
          std::string a = key(), b = key();
          if (a > b) std::swap(a, b);
          RangeOptions o{.limit = static_cast<int>(rng() % 5),
                         .reverse = rng() % 2 == 0,
                         .snapshot = rng() % 3 == 0};
          auto got = t->GetRange(a, b, o);
          ASSERT_TRUE(got.ok()) << got.error().message;
          std::vector<KeyValue> want;
          for (auto it = view.lower_bound(a); it != view.end() && it->first < b; ++it) {
            want.push_back({it->first, it->second});
          }
          if (o.reverse) std::reverse(want.begin(), want.end());
          bool more = false;
          if (o.limit > 0 && want.size() > static_cast<size_t>(o.limit)) {
            want.resize(static_cast<size_t>(o.limit));
            more = true;
          }
          ASSERT_EQ(got->kvs, want)
              << "[" << a << ", " << b << ") limit " << o.limit << (o.reverse ? " reverse" : "");
          if (more) {
            ASSERT_TRUE(got->more);
          }
          break;
        }
      }
    }
    if (rng() % 5 != 0) {
      Status s = t->Commit();
      ASSERT_TRUE(s.ok()) << s.error().message;
      committed = std::move(view);
    }
    if (txn_no % 10 == 9) {
      auto r = Txn();
      auto all = r->GetRange("", "\xff");
      ASSERT_TRUE(all.ok());
      std::vector<KeyValue> want;
      for (const auto& [k, v] : committed) want.push_back({k, v});
      ASSERT_EQ(all->kvs, want);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, ContractTest, ::testing::ValuesIn(ContractEngines()),
                         [](const ::testing::TestParamInfo<EngineFactory>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace fdyno::kv::contract
