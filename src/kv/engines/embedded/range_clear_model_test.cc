// Seeded random model test of the embedded engine's writes over RocksDB: point sets, clears,
// atomic adds and range clears of every size (from empty ranges to thousands of keys, on both
// sides of the point-delete cutoff where a clear becomes a RocksDB range tombstone), in every
// kind of key prefix (keys written in increasing order, as operation receipts are, and keys
// written in random order), with several transactions in one group-commit batch. The database
// is checked against an in-memory model by full scans and by point reads (which consult the
// memtable's bloom filter and the range tombstones), then closed and reopened (replaying the
// write-ahead log, which holds the range tombstones) and checked again; the values are large
// enough that memtables are flushed and files compacted along the way.
//
// Debian's RocksDB is built with its assertions live, so a corrupted memtable aborts here. This
// test aborted with RocksDB 7.8's memtable insert hints (memtable_insert_with_hint_prefix_
// extractor), which that version shares between point keys and range tombstones (fixed in
// RocksDB 9.2): docs/format/kv_embedded.md, "RocksDB features".
//
// The seed is printed; FDYNO_SEED=<seed> replays it. FDYNO_FULL=1 runs more steps and reopens.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/test_seed.h"
#include "kv/engines/embedded/embedded.h"
#include "kv/tuple.h"

namespace fdyno::kv {
namespace {

using test::Seed;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "fdyno_rcm_XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

bool FullRun() {
  const char* v = std::getenv("FDYNO_FULL");
  return v != nullptr && std::string(v) == "1";
}

// The prefixes keys live under: shaped like the store's root subspaces and table parts. Keys
// under the first ones grow with time (receipts, versionstamped records); the others are random.
struct Prefix {
  std::string bytes;
  bool increasing = false;
  int64_t next = 0;  // increasing prefixes: the next key's sequence
};

std::vector<Prefix> Prefixes() {
  return {
      {Tuple{4}.Pack(), true},            // operation receipts
      {Tuple{3, 7, 3}.Pack(), true},      // a table's stream records
      {Tuple{1}.Pack(), false},           // catalog
      {Tuple{3, 7, 1}.Pack(), false},     // a table's items
      {Tuple{3, 7, 2, 1}.Pack(), false},  // an index
      {Tuple{5}.Pack(), false},           // tokens
      {Tuple{3, 8}.Pack(), false},        // a whole second table
  };
}

using Model = std::map<std::string, std::string>;

class RangeClearModel {
 public:
  explicit RangeClearModel(uint64_t seed) : rng_(seed), prefixes_(Prefixes()) {}

  void Open() {
    db_.reset();
    auto db = OpenEmbedded({.path = dir_.path(), .durability = Durability::kNone});
    ASSERT_TRUE(db.ok()) << db.error().message;
    db_ = std::move(db).value();
  }

  // One step: a few transactions committed together (one batch when the committer is busy),
  // applied to the model in commit order.
  void Step() {
    const int n = Uniform(1, 4);
    std::vector<std::unique_ptr<Transaction>> txs;
    std::vector<std::vector<std::function<void(Model&)>>> effects(n);
    std::vector<Status> results(n);
    for (int i = 0; i < n; ++i) {
      txs.push_back(db_->CreateTransaction());
      // Each transaction sees the model as it will be when it commits: the model with the
      // transactions before it applied (blind writes: none of them reads, none conflicts).
      Model view = model_;
      for (int j = 0; j < i; ++j) {
        for (auto& e : effects[j]) e(view);
      }
      const int mutations = Uniform(1, 6);
      for (int m = 0; m < mutations; ++m) effects[i].push_back(RandomMutation(*txs[i], view));
    }
    std::atomic<int> pending{n};
    for (int i = 0; i < n; ++i) {
      txs[i]->CommitAsync([&, i](Status s) {
        results[i] = std::move(s);
        pending.fetch_sub(1);
      });
    }
    while (pending.load() > 0) std::this_thread::yield();
    // Commit order is versionstamp order. A transaction whose only mutations were clears of
    // empty ranges committed nothing (as in FoundationDB) and has no versionstamp.
    std::vector<std::pair<std::string, int>> order;
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE(results[i].ok()) << results[i].error().message;
      Result<std::string> stamp = txs[i]->GetVersionstamp();
      if (stamp.ok()) order.emplace_back(*stamp, i);
    }
    ASSERT_TRUE(std::is_sorted(order.begin(), order.end())) << "commits out of call order";
    for (int i = 0; i < n; ++i) {
      for (auto& e : effects[i]) e(model_);
    }
  }

  void Check(const std::string& when) {
    auto tx = db_->CreateTransaction();
    Result<RangeResult> all = tx->GetRange("", "\xff", {.snapshot = true});
    ASSERT_TRUE(all.ok()) << all.error().message;
    Model got;
    for (const KeyValue& kv : all->kvs) got.emplace(kv.key, kv.value);
    ASSERT_EQ(got.size(), model_.size()) << when;
    for (const auto& [k, v] : model_) {
      auto it = got.find(k);
      ASSERT_TRUE(it != got.end()) << when << ": missing " << Tuple::Unpack(k)->ToString();
      ASSERT_EQ(it->second, v) << when << ": wrong value at " << Tuple::Unpack(k)->ToString();
    }
    // Point reads, of present keys and of keys removed by a clear.
    for (int i = 0; i < 64; ++i) {
      std::string key =
          i % 2 == 0 && !model_.empty() ? AnyKeyOf(model_) : RandomKey(RandomPrefix());
      Result<std::optional<std::string>> v = tx->Get(key, true);
      ASSERT_TRUE(v.ok());
      auto it = model_.find(key);
      ASSERT_EQ(v->has_value(), it != model_.end()) << when << ": point read";
      if (it != model_.end()) {
        ASSERT_EQ(**v, it->second) << when << ": point read";
      }
    }
  }

  size_t size() const { return model_.size(); }

 private:
  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  Prefix& RandomPrefix() { return prefixes_[Uniform(0, static_cast<int>(prefixes_.size()) - 1)]; }

  std::string RandomKey(Prefix& p) {
    if (p.increasing) {
      const int64_t seq = p.next++;
      return p.bytes + Tuple{seq / 1000, seq}.Pack();  // (time bucket, id), like a receipt
    }
    return p.bytes + Tuple{Uniform(0, 5000)}.Pack();
  }

  std::string Value() {
    // Mostly small; now and then large enough to fill memtables and force flushes.
    const int size = Uniform(0, 9) == 0 ? Uniform(2000, 6000) : Uniform(1, 200);
    std::string v(static_cast<size_t>(size), '\0');
    for (char& c : v) c = static_cast<char>('a' + Uniform(0, 25));
    return v;
  }

  // Buffers one random mutation in tx and returns what it does to a model. `view`: the state
  // the transaction will commit over, with its own earlier mutations applied as they are made.
  std::function<void(Model&)> RandomMutation(Transaction& tx, Model& view) {
    std::function<void(Model&)> effect;
    const int kind = Uniform(0, 9);
    if (kind <= 3) {  // sets, under an increasing prefix half the time
      Prefix& p = Uniform(0, 1) == 0 ? prefixes_[Uniform(0, 1)] : RandomPrefix();
      const int count = Uniform(1, 40);
      std::vector<std::pair<std::string, std::string>> kvs;
      for (int i = 0; i < count; ++i) kvs.emplace_back(RandomKey(p), Value());
      for (const auto& [k, v] : kvs) tx.Set(k, v);
      effect = [kvs](Model& m) {
        for (const auto& [k, v] : kvs) m[k] = v;
      };
    } else if (kind == 4 && !view.empty()) {
      std::string k = AnyKeyOf(view);
      tx.Clear(k);
      effect = [k](Model& m) { m.erase(k); };
    } else if (kind == 5) {
      std::string k = RandomPrefix().bytes + Tuple{"counter", Uniform(0, 3)}.Pack();
      const int64_t delta = Uniform(-5, 5);
      tx.AtomicOp(MutationType::kAdd, k, EncodeCounter(delta));
      effect = [k, delta](Model& m) {
        auto it = m.find(k);
        int64_t v = delta;
        if (it != m.end()) v += DecodeCounter(it->second).value_or(0);
        m[k] = EncodeCounter(v);
      };
    } else {
      effect = RangeClear(tx, view);
    }
    effect(view);
    return effect;
  }

  std::string AnyKeyOf(const Model& m) {
    auto it = m.lower_bound(RandomKey(RandomPrefix()));
    return it != m.end() ? it->first : m.begin()->first;
  }

  // A ClearRange over a chosen number of existing keys: none, a few, around the point-delete
  // cutoff (64), or many; or the whole prefix; starting at the oldest keys of a prefix (as the
  // receipts' expiry does) or in the middle.
  std::function<void(Model&)> RangeClear(Transaction& tx, const Model& view) {
    static constexpr int kSizes[] = {0, 1, 2, 17, 63, 64, 65, 66, 100, 250, 1000, 100000};
    Prefix& p = Uniform(0, 2) == 0 ? prefixes_[Uniform(0, 1)] : RandomPrefix();
    const std::string prefix_end = Strinc(p.bytes);
    auto first = view.lower_bound(p.bytes);
    if (Uniform(0, 1) == 1) {  // start in the middle of the prefix
      int skip = Uniform(0, 50);
      while (skip-- > 0 && first != view.end() && first->first < prefix_end) ++first;
    }
    std::string begin = first != view.end() && first->first < prefix_end ? first->first : p.bytes;
    if (Uniform(0, 3) == 0) begin = p.bytes;
    int n = kSizes[Uniform(0, static_cast<int>(std::size(kSizes)) - 1)];
    auto last = view.lower_bound(begin);
    while (n-- > 0 && last != view.end() && last->first < prefix_end) ++last;
    std::string end = last != view.end() && last->first < prefix_end ? last->first : prefix_end;
    tx.ClearRange(begin, end);
    return [begin, end](Model& m) { m.erase(m.lower_bound(begin), m.lower_bound(end)); };
  }

  static std::string Strinc(std::string s) {
    while (!s.empty() && static_cast<uint8_t>(s.back()) == 0xff) s.pop_back();
    if (!s.empty()) s.back() = static_cast<char>(static_cast<uint8_t>(s.back()) + 1);
    return s;
  }

  TempDir dir_;
  std::mt19937_64 rng_;
  std::vector<Prefix> prefixes_;
  std::unique_ptr<Database> db_;
  Model model_;
};

TEST(RangeClearModelTest, EverySizeInEveryPrefixSurvivesReopen) {
  const uint64_t seed = Seed();
  std::cout << "seed " << seed << " (replay: FDYNO_SEED=" << seed
            << " build/src/kv/engines/embedded/kv_range_clear_model_test)" << std::endl;
  const int reopens = FullRun() ? 20 : 5;
  const int steps = FullRun() ? 600 : 250;
  RangeClearModel m(seed);
  m.Open();
  for (int r = 0; r < reopens; ++r) {
    for (int s = 0; s < steps; ++s) {
      ASSERT_NO_FATAL_FAILURE(m.Step());
      if (s % 50 == 49) {
        ASSERT_NO_FATAL_FAILURE(m.Check("step " + std::to_string(s)));
      }
    }
    ASSERT_NO_FATAL_FAILURE(m.Check("before reopen " + std::to_string(r)));
    ASSERT_NO_FATAL_FAILURE(m.Open());
    ASSERT_NO_FATAL_FAILURE(m.Check("after reopen " + std::to_string(r)));
  }
  std::cout << "keys at the end: " << m.size() << std::endl;
}

}  // namespace
}  // namespace fdyno::kv
