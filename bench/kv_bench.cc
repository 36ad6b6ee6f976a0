// kv_bench: figures for the embedded engine (issue 2, "Measure").
//
//   BM_Commit/conc:N/fsync:F  single-key commits/s with N concurrent committers, durable
//                             (fsync per group commit) or not. Target: fsync conc 64 >= 10x
//                             conc 1, i.e. group commit shares one fsync among many commits.
//   BM_KvPointRead            a point read through a kv transaction (read-your-writes lookup,
//                             snapshot, read conflict bookkeeping) ...
//   BM_RawRocksGet            ... against a raw RocksDB Get on a database with the same options
//                             and data. Target: kv within 2x of raw.
//   BM_ResolverCheck          conflict check of a transaction (4 point reads, 1 range read)
//                             plus recording its 2 writes, with 10k recent commits remembered.
//
// Data lives under $FDYNO_BENCH_DIR (default: the system temp directory), which should be on
// the disk being measured. Run: build/bench/kv_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>
#include <rocksdb/db.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <thread>

#include "kv/engines/embedded/embedded.h"
#include "kv/engines/embedded/resolver.h"
#include "kv/engines/embedded/rocks_options.h"

namespace {

using fdyno::kv::Database;
using fdyno::kv::Durability;

std::string BenchDir(const std::string& name) {
  const char* base = std::getenv("FDYNO_BENCH_DIR");
  std::filesystem::path root = base != nullptr && *base != '\0'
                                   ? std::filesystem::path(base)
                                   : std::filesystem::temp_directory_path();
  std::filesystem::path p = root / ("fdyno_kv_bench_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p.string();
}

std::string Key(uint64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "user%016llx", static_cast<unsigned long long>(i));
  return buf;
}

void BM_Commit(benchmark::State& state) {
  const int conc = static_cast<int>(state.range(0));
  const bool fsync = state.range(1) != 0;
  std::string dir = BenchDir("commit");
  auto db = fdyno::kv::OpenEmbedded(
      {.path = dir, .durability = fsync ? Durability::kFsync : Durability::kNone});
  if (!db.ok()) {
    state.SkipWithError(db.error().message.c_str());
    return;
  }
  // Per iteration every committer makes `per_thread` commits; enough that thread start-up
  // does not matter.
  const int per_thread = std::max(1, (fsync ? 256 : 8192) / conc);
  std::atomic<uint64_t> next_key{0};
  std::atomic<int64_t> failures{0};
  int64_t commits = 0;
  for (auto _ : state) {
    std::vector<std::thread> threads;
    for (int t = 0; t < conc; ++t) {
      threads.emplace_back([&] {
        auto txn = (*db)->CreateTransaction();
        for (int i = 0; i < per_thread; ++i) {
          txn->Reset();
          txn->Set(Key(next_key.fetch_add(1)), std::string(100, 'v'));
          if (!txn->Commit().ok()) ++failures;
        }
      });
    }
    for (auto& th : threads) th.join();
    commits += static_cast<int64_t>(conc) * per_thread;
  }
  state.counters["commits/s"] =
      benchmark::Counter(static_cast<double>(commits), benchmark::Counter::kIsRate);
  state.counters["failures"] = static_cast<double>(failures.load());
  db->reset();
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_Commit)
    ->ArgNames({"conc", "fsync"})
    ->ArgsProduct({{1, 8, 32, 64}, {1, 0}})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0);

constexpr uint64_t kReadKeys = 100'000;

// The same 100k keys, in a kv database and in a raw RocksDB with the engine's options.
struct ReadFixture {
  ReadFixture() {
    kv_dir = BenchDir("kvread");
    raw_dir = BenchDir("rawread");
    auto opened = fdyno::kv::OpenEmbedded({.path = kv_dir, .durability = Durability::kNone});
    if (!opened.ok()) std::abort();
    kv = std::move(opened).value();
    rocksdb::Options options = fdyno::kv::embedded::DataOptions();
    if (!rocksdb::DB::Open(options, raw_dir, &raw).ok()) std::abort();
    for (uint64_t i = 0; i < kReadKeys; i += 1000) {
      auto txn = kv->CreateTransaction();
      for (uint64_t j = i; j < i + 1000; ++j) {
        std::string value(100, static_cast<char>('a' + j % 26));
        txn->Set(Key(j), value);
        if (!raw->Put(rocksdb::WriteOptions(), Key(j), value).ok()) std::abort();
      }
      if (!txn->Commit().ok()) std::abort();
    }
    std::mt19937_64 rng(42);
    for (int i = 0; i < 1 << 16; ++i) keys.push_back(Key(rng() % kReadKeys));
  }
  ~ReadFixture() {
    kv.reset();
    delete raw;
    std::filesystem::remove_all(kv_dir);
    std::filesystem::remove_all(raw_dir);
  }
  std::string kv_dir, raw_dir;
  std::unique_ptr<Database> kv;
  rocksdb::DB* raw = nullptr;
  std::vector<std::string> keys;
};

ReadFixture& Reads() {
  static ReadFixture* fixture = new ReadFixture();  // shared by the read benchmarks
  return *fixture;
}

void BM_KvPointRead(benchmark::State& state) {
  ReadFixture& f = Reads();
  const bool snapshot = state.range(0) != 0;
  auto txn = f.kv->CreateTransaction();
  size_t i = 0;
  for (auto _ : state) {
    // A transaction reads a bounded number of keys; start a new one every 1000 reads.
    if (i % 1000 == 0) txn->Reset();
    auto v = txn->Get(f.keys[i++ & 0xffff], snapshot);
    if (!v.ok() || !*v) state.SkipWithError("read failed");
    benchmark::DoNotOptimize(v);
  }
}
BENCHMARK(BM_KvPointRead)->ArgName("snapshot")->Arg(0)->Arg(1);

// Point reads while other transactions keep deleting small ranges (as deleting an item with
// its chunks does): range tombstones accumulate in RocksDB's memtable. One ClearRange commit
// per `state.range(0)` reads.
void BM_KvPointReadWithClearRanges(benchmark::State& state) {
  ReadFixture& f = Reads();
  const int64_t reads_per_clear = state.range(0);
  auto txn = f.kv->CreateTransaction();
  auto clearer = f.kv->CreateTransaction();
  size_t i = 0;
  uint64_t next_clear = 0;
  for (auto _ : state) {
    if (i % reads_per_clear == 0) {
      state.PauseTiming();
      clearer->Reset();
      // Ranges past the read keys, so every read still finds its key.
      std::string k = "zdel" + Key(next_clear++);
      clearer->ClearRange(k, k + "\xff");
      if (!clearer->Commit().ok()) state.SkipWithError("clear failed");
      state.ResumeTiming();
    }
    if (i % 1000 == 0) txn->Reset();
    auto v = txn->Get(f.keys[i++ & 0xffff]);
    if (!v.ok() || !*v) state.SkipWithError("read failed");
    benchmark::DoNotOptimize(v);
  }
  state.counters["clear_ranges"] = static_cast<double>(next_clear);
}
BENCHMARK(BM_KvPointReadWithClearRanges)->ArgName("reads_per_clear")->Arg(10)->Arg(100);

void BM_RawRocksGet(benchmark::State& state) {
  ReadFixture& f = Reads();
  size_t i = 0;
  std::string value;
  for (auto _ : state) {
    rocksdb::Status s = f.raw->Get(rocksdb::ReadOptions(), f.keys[i++ & 0xffff], &value);
    if (!s.ok()) state.SkipWithError("read failed");
    benchmark::DoNotOptimize(value);
  }
}
BENCHMARK(BM_RawRocksGet);

void BM_ResolverCheck(benchmark::State& state) {
  using fdyno::kv::embedded::Resolver;
  const int64_t recent = state.range(0);
  constexpr uint64_t kSpace = 1'000'000;
  // Keys are formatted once so that the loop measures the resolver, not snprintf.
  static const std::vector<std::string>* keys = [] {
    auto* k = new std::vector<std::string>();
    for (uint64_t i = 0; i < kSpace + 128; ++i) k->push_back(Key(i));
    return k;
  }();
  Resolver resolver;
  std::mt19937_64 rng(7);
  // `recent` commits, each writing two random keys; one in ten also clears a 10-key range.
  int64_t version = 1;
  for (; version <= recent; ++version) {
    resolver.AddPoint((*keys)[rng() % kSpace], version);
    resolver.AddPoint((*keys)[rng() % kSpace], version);
    if (version % 10 == 0) {
      uint64_t b = rng() % kSpace;
      resolver.AddRange((*keys)[b], (*keys)[b + 10], version);
    }
  }
  int64_t conflicts = 0;
  for (auto _ : state) {
    // A transaction whose read version is 100 commits old: 4 point reads and a 100-key range
    // read, then (if it passes) its 2 writes are recorded under a new commit version.
    int64_t read_version = version - 100;
    bool c = false;
    for (int i = 0; i < 4; ++i) c |= resolver.PointConflicts((*keys)[rng() % kSpace], read_version);
    uint64_t b = rng() % kSpace;
    c |= resolver.RangeConflicts((*keys)[b], (*keys)[b + 100], read_version);
    conflicts += c;
    if (!c) {
      resolver.AddPoint((*keys)[rng() % kSpace], version);
      resolver.AddPoint((*keys)[rng() % kSpace], version);
      ++version;
      // Keep about `recent` commits of history, as the 5 s window would.
      resolver.SetPendingHorizon(version - recent);
      resolver.PruneStep(16 + 4 * 2);
    }
  }
  state.counters["boundaries"] = static_cast<double>(resolver.boundaries());
  state.counters["conflict_rate"] =
      benchmark::Counter(static_cast<double>(conflicts), benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_ResolverCheck)->ArgName("recent_commits")->Arg(10'000)->Arg(100'000);

}  // namespace

BENCHMARK_MAIN();
