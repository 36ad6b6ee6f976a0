// Seeded random serializability test. Many threads run random read-modify-write transactions
// through kv::Run against one engine: transfers between accounts (which also open accounts
// and close them, so range reads meet inserts and deletes), audits that read every account and
// commit, and read-only range sums with limits and reverse. Every committing attempt writes a
// log entry under a versionstamped key holding its read version, everything it read and
// everything it wrote; the log is therefore exactly the set of attempts that really committed,
// including those whose commit reported commit_unknown_result after applying.
//
// At the end the log is replayed in versionstamp order (the commit order) against a model:
// every committed read must equal the model state just before its commit, and every read-only
// transaction must equal the model state at its read version. The total balance must be the
// same in every full read. Acknowledged commits must be in the log; attempts known not to have
// committed must not be.
//
// The seed is printed with the one command that replays it (FDYNO_SEED=<seed> ...); it fixes
// every operation each thread runs and the faults drawn for the n-th transaction, though not
// the threads' interleaving. FDYNO_FULL=1
// runs a longer workload (8 x 5000 operations per engine instead of 8 x 1000).
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "base/metrics.h"
#include "kv/engines/faulty/faulty.h"
#include "kv/engines/fdb/fdb.h"
#include "kv/run.h"
#include "kv/testing/memory_engine.h"
#include "kv/tuple.h"
#ifdef FDYNO_HAVE_EMBEDDED
#include "kv/engines/embedded/embedded.h"
#endif

namespace fdyno::kv {
namespace {

constexpr int64_t kInitialBalance = 1000;

bool FullRun() {
  const char* v = std::getenv("FDYNO_FULL");
  return v != nullptr && std::string(v) == "1";
}

uint64_t Seed() {
  if (const char* s = std::getenv("FDYNO_SEED")) return std::strtoull(s, nullptr, 10);
  return std::random_device{}() ^ (static_cast<uint64_t>(std::random_device{}()) << 32);
}

uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// What one attempt read and wrote. Account values: nullopt when the account does not exist.
struct PointAccess {
  int64_t account;
  std::optional<int64_t> value;
};
struct RangeAccess {
  int64_t lo;  // accounts [lo, hi)
  int64_t hi;
  int64_t limit;  // 0: none
  bool reverse;
  std::vector<std::pair<int64_t, int64_t>> rows;  // in the order returned
};
struct Record {
  int64_t attempt_id = 0;
  int64_t read_version = 0;
  std::vector<PointAccess> reads;
  std::vector<RangeAccess> ranges;
  std::vector<PointAccess> writes;  // nullopt: cleared
};

TupleElement OptInt(const std::optional<int64_t>& v) {
  return v ? TupleElement(*v) : TupleElement(nullptr);
}

std::string EncodeRecord(const Record& r) {
  Tuple reads, ranges, writes;
  for (const auto& p : r.reads) reads.AddTuple(Tuple{p.account, OptInt(p.value)});
  for (const auto& w : r.writes) writes.AddTuple(Tuple{w.account, OptInt(w.value)});
  for (const auto& g : r.ranges) {
    Tuple rows;
    for (const auto& [a, v] : g.rows) rows.AddTuple(Tuple{a, v});
    ranges.AddTuple(Tuple{g.lo, g.hi, g.limit, g.reverse, rows});
  }
  return Tuple{1 /* format version */, r.attempt_id, r.read_version, reads, ranges, writes}.Pack();
}

Result<std::vector<PointAccess>> DecodePoints(const Tuple& t) {
  std::vector<PointAccess> out;
  for (size_t i = 0; i < t.size(); ++i) {
    FDYNO_ASSIGN_OR_RETURN(Tuple p, t.GetTuple(i));
    FDYNO_ASSIGN_OR_RETURN(int64_t account, p.GetInt(0));
    std::optional<int64_t> value;
    if (!p[1].is<std::nullptr_t>()) {
      FDYNO_ASSIGN_OR_RETURN(int64_t v, p.GetInt(1));
      value = v;
    }
    out.push_back({account, value});
  }
  return out;
}

Result<Record> DecodeRecord(std::string_view packed) {
  FDYNO_ASSIGN_OR_RETURN(Tuple t, Tuple::Unpack(packed));
  FDYNO_ASSIGN_OR_RETURN(int64_t version, t.GetInt(0));
  if (version != 1) return Error::Internal("unknown log format version");
  Record r;
  FDYNO_ASSIGN_OR_RETURN(r.attempt_id, t.GetInt(1));
  FDYNO_ASSIGN_OR_RETURN(r.read_version, t.GetInt(2));
  FDYNO_ASSIGN_OR_RETURN(Tuple reads, t.GetTuple(3));
  FDYNO_ASSIGN_OR_RETURN(Tuple ranges, t.GetTuple(4));
  FDYNO_ASSIGN_OR_RETURN(Tuple writes, t.GetTuple(5));
  FDYNO_ASSIGN_OR_RETURN(r.reads, DecodePoints(reads));
  FDYNO_ASSIGN_OR_RETURN(r.writes, DecodePoints(writes));
  for (size_t i = 0; i < ranges.size(); ++i) {
    FDYNO_ASSIGN_OR_RETURN(Tuple g, ranges.GetTuple(i));
    RangeAccess a;
    FDYNO_ASSIGN_OR_RETURN(a.lo, g.GetInt(0));
    FDYNO_ASSIGN_OR_RETURN(a.hi, g.GetInt(1));
    FDYNO_ASSIGN_OR_RETURN(a.limit, g.GetInt(2));
    FDYNO_ASSIGN_OR_RETURN(a.reverse, g.GetBool(3));
    FDYNO_ASSIGN_OR_RETURN(Tuple rows, g.GetTuple(4));
    for (size_t j = 0; j < rows.size(); ++j) {
      FDYNO_ASSIGN_OR_RETURN(Tuple row, rows.GetTuple(j));
      FDYNO_ASSIGN_OR_RETURN(int64_t acct, row.GetInt(0));
      FDYNO_ASSIGN_OR_RETURN(int64_t v, row.GetInt(1));
      a.rows.emplace_back(acct, v);
    }
    r.ranges.push_back(std::move(a));
  }
  return r;
}

// The expected rows of a range read in a model state.
std::vector<std::pair<int64_t, int64_t>> ModelRange(const std::map<int64_t, int64_t>& state,
                                                    const RangeAccess& g) {
  std::vector<std::pair<int64_t, int64_t>> rows;
  for (auto it = state.lower_bound(g.lo); it != state.end() && it->first < g.hi; ++it) {
    rows.emplace_back(*it);
  }
  if (g.reverse) std::reverse(rows.begin(), rows.end());
  if (g.limit > 0 && rows.size() > static_cast<size_t>(g.limit)) rows.resize(g.limit);
  return rows;
}

// Describes the first way a record's reads disagree with the model state, or "".
std::string CheckReads(const Record& r, const std::map<int64_t, int64_t>& state) {
  for (const auto& p : r.reads) {
    auto it = state.find(p.account);
    std::optional<int64_t> expected;
    if (it != state.end()) expected = it->second;
    if (expected != p.value) {
      return "account " + std::to_string(p.account) + " read " +
             (p.value ? std::to_string(*p.value) : "absent") + ", model has " +
             (expected ? std::to_string(*expected) : "absent");
    }
  }
  for (const auto& g : r.ranges) {
    if (ModelRange(state, g) != g.rows) {
      return "range [" + std::to_string(g.lo) + ", " + std::to_string(g.hi) + ") limit " +
             std::to_string(g.limit) + (g.reverse ? " reverse" : "") + " differs from the model";
    }
  }
  return "";
}

struct Workload {
  int threads = 8;
  int ops_per_thread = 1000;
  int accounts = 10;
};

// Bookkeeping of one operation (one kv::Run call), kept outside the transaction.
struct OpTrace {
  std::vector<int64_t> attempt_ids;
  bool final_maybe_committed = false;
  enum class Outcome { kCommitted, kReadOnly, kFailed, kUnknown } outcome = Outcome::kFailed;
};

class Harness {
 public:
  Harness(Database* db, uint64_t seed, Workload w) : db_(db), seed_(seed), w_(w) {}

  std::string AccountKey(int64_t a) const { return space_.Pack(Tuple{"acct", a}); }

  void Load() {
    Status s = kv::Run(*db_, [&](Transaction& tr, const Attempt&) -> Status {
      tr.ClearRange(space_.Range().first, space_.Range().second);
      for (int a = 0; a < w_.accounts; ++a) tr.Set(AccountKey(a), std::to_string(kInitialBalance));
      return {};
    });
    ASSERT_TRUE(s.ok()) << s.error().message;
    for (int a = 0; a < w_.accounts; ++a) initial_[a] = kInitialBalance;
  }

  void RunThreads() {
    std::vector<std::thread> threads;
    for (int t = 0; t < w_.threads; ++t) threads.emplace_back([this, t] { Worker(t); });
    for (auto& th : threads) th.join();
  }

  // Replays the log against the model and checks every read. Returns the number of log entries.
  void Verify() {
    std::vector<std::pair<Versionstamp, Record>> log;
    std::string begin = space_.Range(Tuple{"log"}).first;
    const std::string end = space_.Range(Tuple{"log"}).second;
    for (;;) {
      RunOptions o;
      o.read_only = true;
      auto page = kv::Run(*db_, o, [&](Transaction& tr, const Attempt&) -> Result<RangeResult> {
        return tr.GetRange(begin, end, {.limit = 500});
      });
      ASSERT_TRUE(page.ok()) << page.error().message;
      for (const auto& kv : page->kvs) {
        auto key = space_.Unpack(kv.key);
        ASSERT_TRUE(key.ok()) << key.error().message;
        auto stamp = key->GetVersionstamp(1);
        ASSERT_TRUE(stamp.ok());
        auto record = DecodeRecord(kv.value);
        ASSERT_TRUE(record.ok()) << record.error().message;
        log.emplace_back(*stamp, std::move(*record));
      }
      if (!page->more) break;
      begin = page->kvs.back().key + '\0';
    }

    // Which attempts committed, by the log; each at most once.
    std::map<int64_t, int64_t> committed_version;
    for (const auto& [stamp, r] : log) {
      ASSERT_TRUE(committed_version.emplace(r.attempt_id, stamp.commit_version()).second)
          << "attempt " << r.attempt_id << " is in the log twice";
    }
    // Acknowledged commits are there; attempts known not to have committed are not.
    for (const auto& op : ops_) {
      const int64_t last = op.attempt_ids.back();
      switch (op.outcome) {
        case OpTrace::Outcome::kCommitted:
          ASSERT_TRUE(committed_version.count(last)) << "acknowledged attempt " << last << " lost";
          break;
        case OpTrace::Outcome::kReadOnly:
        case OpTrace::Outcome::kFailed:
          ASSERT_FALSE(committed_version.count(last))
              << "attempt " << last << " reported as not committed is in the log";
          break;
        case OpTrace::Outcome::kUnknown:
          break;
      }
      if (!op.final_maybe_committed && op.outcome != OpTrace::Outcome::kUnknown) {
        for (size_t i = 0; i + 1 < op.attempt_ids.size(); ++i) {
          ASSERT_FALSE(committed_version.count(op.attempt_ids[i]))
              << "attempt " << op.attempt_ids[i] << " committed, but no later attempt of its "
              << "operation was told that an earlier attempt may have committed";
        }
      }
    }

    // Replay in commit order.
    std::sort(read_only_.begin(), read_only_.end(),
              [](const Record& a, const Record& b) { return a.read_version < b.read_version; });
    std::map<int64_t, int64_t> state = initial_;
    size_t next_ro = 0;
    int64_t previous_version = 0;
    auto check_read_only_before = [&](int64_t version) {
      for (; next_ro < read_only_.size() && read_only_[next_ro].read_version < version; ++next_ro) {
        const Record& ro = read_only_[next_ro];
        std::string diff = CheckReads(ro, state);
        ASSERT_EQ(diff, "") << "read-only attempt " << ro.attempt_id << " at read version "
                            << ro.read_version << " is not consistent with the serial history";
      }
    };
    for (const auto& [stamp, r] : log) {
      int64_t cv = stamp.commit_version();
      ASSERT_GE(cv, previous_version);
      previous_version = cv;
      ASSERT_LT(r.read_version, cv) << "attempt " << r.attempt_id;
      check_read_only_before(cv);
      std::string diff = CheckReads(r, state);
      ASSERT_EQ(diff, "") << "committed attempt " << r.attempt_id << " (read version "
                          << r.read_version << ", commit version " << cv
                          << ") read a state that no serial order explains: " << diff;
      for (const auto& w : r.writes) {
        if (w.value) {
          state[w.account] = *w.value;
        } else {
          state.erase(w.account);
        }
      }
      int64_t total = 0;
      for (const auto& [a, v] : state) total += v;
      ASSERT_EQ(total, kInitialBalance * w_.accounts) << "after attempt " << r.attempt_id;
    }
    check_read_only_before(INT64_MAX);

    // The database's final accounts are the model's.
    RunOptions o;
    o.read_only = true;
    auto final_rows = kv::Run(*db_, o, [&](Transaction& tr, const Attempt&) -> Result<RangeResult> {
      return tr.GetRange(space_.Range(Tuple{"acct"}).first, space_.Range(Tuple{"acct"}).second);
    });
    ASSERT_TRUE(final_rows.ok());
    std::map<int64_t, int64_t> db_state;
    for (const auto& kv : final_rows->kvs) {
      db_state[space_.Unpack(kv.key)->GetInt(1).value()] = std::stoll(kv.value);
    }
    ASSERT_EQ(db_state, state);
    log_entries_ = log.size();
  }

  void Report(const std::string& engine) const {
    int64_t committed = 0, read_only = 0, failed = 0, unknown = 0, attempts = 0;
    for (const auto& op : ops_) {
      attempts += op.attempt_ids.size();
      switch (op.outcome) {
        case OpTrace::Outcome::kCommitted:
          ++committed;
          break;
        case OpTrace::Outcome::kReadOnly:
          ++read_only;
          break;
        case OpTrace::Outcome::kFailed:
          ++failed;
          break;
        case OpTrace::Outcome::kUnknown:
          ++unknown;
          break;
      }
    }
    std::cout << "[" << engine << "] ops " << ops_.size() << ", attempts " << attempts
              << ", committed " << committed << ", read-only " << read_only << ", failed " << failed
              << ", outcome unknown " << unknown << ", log entries " << log_entries_
              << ", full-sum checks " << sum_checks_.load() << "\n";
  }

  int64_t invariant_violations() const { return invariant_violations_.load(); }

 private:
  struct Choice {
    enum class Kind { kTransfer, kClose, kAudit, kRangeSum } kind;
    int64_t a, b, amount;
    int64_t lo, hi, limit;
    bool reverse;
    int64_t think_us;  // a pause between reads and writes, to widen the conflict window
  };

  static void Think(const Choice& c) {
    if (c.think_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(c.think_us));
  }

  Choice Pick(std::mt19937_64& rng) {
    auto uniform = [&](int64_t lo, int64_t hi) {
      return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
    };
    Choice c{};
    // A few more account ids than initially exist, so transfers open new accounts.
    int64_t n = w_.accounts + 4;
    // Half of the transfers touch a few hot accounts, so that conflicts are frequent.
    int64_t pick_hi = uniform(0, 1) == 0 ? 3 : n - 1;
    c.a = uniform(0, pick_hi);
    do c.b = uniform(0, pick_hi);
    while (c.b == c.a);
    c.amount = uniform(1, 300);
    c.think_us = uniform(0, 1) == 0 ? uniform(1, 500) : 0;
    int64_t roll = uniform(0, 99);
    if (roll < 55) {
      c.kind = Choice::Kind::kTransfer;
    } else if (roll < 60) {
      c.kind = Choice::Kind::kClose;
    } else if (roll < 72) {
      c.kind = Choice::Kind::kAudit;
    } else {
      c.kind = Choice::Kind::kRangeSum;
      c.lo = uniform(0, n - 1);
      c.hi = uniform(c.lo, n);
      if (uniform(0, 3) == 0) {  // a full range, checked against the total
        c.lo = 0;
        c.hi = n;
      }
      c.limit = uniform(0, 2) == 0 ? uniform(1, 6) : 0;
      c.reverse = uniform(0, 1) == 1;
    }
    return c;
  }

  Result<std::optional<int64_t>> ReadAccount(Transaction& tr, int64_t a, Record* r) {
    FDYNO_ASSIGN_OR_RETURN(auto v, tr.Get(AccountKey(a)));
    std::optional<int64_t> value;
    if (v) value = std::stoll(*v);
    r->reads.push_back({a, value});
    return value;
  }

  Status ReadRange(Transaction& tr, int64_t lo, int64_t hi, int64_t limit, bool reverse,
                   Record* r) {
    RangeAccess g{lo, hi, limit, reverse, {}};
    if (lo < hi) {
      FDYNO_ASSIGN_OR_RETURN(auto rows,
                             tr.GetRange(AccountKey(lo), AccountKey(hi),
                                         {.limit = static_cast<int>(limit), .reverse = reverse}));
      for (const auto& kv : rows.kvs) {
        FDYNO_ASSIGN_OR_RETURN(Tuple key, space_.Unpack(kv.key));
        FDYNO_ASSIGN_OR_RETURN(int64_t account, key.GetInt(1));
        g.rows.emplace_back(account, std::stoll(kv.value));
      }
    }
    r->ranges.push_back(std::move(g));
    return {};
  }

  void Write(Transaction& tr, int64_t a, std::optional<int64_t> v, Record* r) {
    if (v) {
      tr.Set(AccountKey(a), std::to_string(*v));
    } else {
      tr.Clear(AccountKey(a));
    }
    r->writes.push_back({a, v});
  }

  Status CheckTotal(const RangeAccess& g) {
    if (g.lo != 0 || g.hi != w_.accounts + 4 || g.limit != 0) return {};
    int64_t total = 0;
    for (const auto& [a, v] : g.rows) total += v;
    ++sum_checks_;
    if (total != kInitialBalance * w_.accounts) ++invariant_violations_;
    return {};
  }

  void Worker(int thread) {
    std::mt19937_64 rng(Mix(seed_ ^ Mix(thread + 1)));
    std::vector<OpTrace> local_ops;
    std::vector<Record> local_ro;
    for (int i = 0; i < w_.ops_per_thread; ++i) {
      Choice c = Pick(rng);
      OpTrace op;
      RunOptions options;
      options.read_only = c.kind == Choice::Kind::kRangeSum;
      auto result =
          kv::Run(*db_, options, [&](Transaction& tr, const Attempt& attempt) -> Result<Record> {
            Record r;  // attempt-local
            r.attempt_id = next_attempt_id_.fetch_add(1);
            op.attempt_ids.push_back(r.attempt_id);
            op.final_maybe_committed = attempt.maybe_committed;
            FDYNO_ASSIGN_OR_RETURN(r.read_version, tr.GetReadVersion());
            switch (c.kind) {
              case Choice::Kind::kTransfer: {
                FDYNO_ASSIGN_OR_RETURN(auto va, ReadAccount(tr, c.a, &r));
                Think(c);
                FDYNO_ASSIGN_OR_RETURN(auto vb, ReadAccount(tr, c.b, &r));
                if (va.value_or(0) >= c.amount) {
                  Write(tr, c.a, *va - c.amount, &r);
                  Write(tr, c.b, vb.value_or(0) + c.amount, &r);
                }
                break;
              }
              case Choice::Kind::kClose: {
                FDYNO_ASSIGN_OR_RETURN(auto va, ReadAccount(tr, c.a, &r));
                Think(c);
                FDYNO_ASSIGN_OR_RETURN(auto vb, ReadAccount(tr, c.b, &r));
                if (va) {
                  Write(tr, c.a, std::nullopt, &r);
                  Write(tr, c.b, vb.value_or(0) + *va, &r);
                }
                break;
              }
              case Choice::Kind::kAudit:
                // Reads everything and commits a log entry: a range read that must conflict with
                // every concurrent transfer.
                FDYNO_RETURN_IF_ERROR(ReadRange(tr, 0, w_.accounts + 4, 0, false, &r));
                FDYNO_RETURN_IF_ERROR(CheckTotal(r.ranges.back()));
                Think(c);
                break;
              case Choice::Kind::kRangeSum:
                FDYNO_RETURN_IF_ERROR(ReadRange(tr, c.lo, c.hi, c.limit, c.reverse, &r));
                FDYNO_RETURN_IF_ERROR(CheckTotal(r.ranges.back()));
                break;
            }
            if (!r.writes.empty() || c.kind == Choice::Kind::kAudit) {
              FDYNO_ASSIGN_OR_RETURN(std::string log_key, space_.PackWithVersionstamp(Tuple{
                                                              "log", Versionstamp::Incomplete()}));
              tr.AtomicOp(MutationType::kSetVersionstampedKey, log_key, EncodeRecord(r));
            }
            return r;
          });
      if (result.ok()) {
        bool wrote = !result->writes.empty() || c.kind == Choice::Kind::kAudit;
        op.outcome = wrote ? OpTrace::Outcome::kCommitted : OpTrace::Outcome::kReadOnly;
        if (!wrote) local_ro.push_back(std::move(*result));
      } else if (IsOutcomeUnknown(result.error())) {
        op.outcome = OpTrace::Outcome::kUnknown;
      } else {
        op.outcome = OpTrace::Outcome::kFailed;
      }
      local_ops.push_back(std::move(op));
    }
    std::lock_guard<std::mutex> l(mu_);
    for (auto& op : local_ops) ops_.push_back(std::move(op));
    for (auto& r : local_ro) read_only_.push_back(std::move(r));
  }

  Database* db_;
  uint64_t seed_;
  Workload w_;
  Subspace space_{Tuple{"serializability"}};
  std::map<int64_t, int64_t> initial_;
  std::atomic<int64_t> next_attempt_id_{1};
  std::atomic<int64_t> sum_checks_{0};
  std::atomic<int64_t> invariant_violations_{0};
  std::mutex mu_;
  std::vector<OpTrace> ops_;
  std::vector<Record> read_only_;
  size_t log_entries_ = 0;
};

Workload DefaultWorkload() {
  Workload w;
  if (FullRun()) w.ops_per_thread = 5000;
  return w;
}

FaultOptions Faults(uint64_t seed) {
  FaultOptions f;
  f.seed = seed;
  f.commit_conflict = 0.05;
  f.read_too_old = 0.01;
  f.read_timed_out = 0.002;
  f.commit_timed_out = 0.01;
  f.unknown_applied = 0.08;
  f.unknown_not_applied = 0.05;
  f.latency = 0.05;
  f.max_latency = std::chrono::microseconds(300);
  return f;
}

void RunWorkload(Database* db, const std::string& engine, uint64_t seed, FaultyDatabase* faulty) {
  spdlog::set_level(spdlog::level::err);  // outcome-unknown warnings are expected here
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  std::cout << "[" << engine << "] seed " << seed << " (replay: FDYNO_SEED=" << seed
            << " build/src/kv/random/kv_serializability_test --gtest_filter="
            << test->test_suite_name() << "." << test->name() << ")\n";
  Harness h(db, seed, DefaultWorkload());
  if (faulty) faulty->SetOptions(FaultOptions{});
  ASSERT_NO_FATAL_FAILURE(h.Load());
  if (faulty) faulty->SetOptions(Faults(seed));
  Counter& conflicts = Metrics::Global().GetCounter("kv_conflicts");
  int64_t conflicts_before = conflicts.value();
  h.RunThreads();
  int64_t conflicts_seen = conflicts.value() - conflicts_before;
  if (faulty) faulty->SetOptions(FaultOptions{});
  ASSERT_NO_FATAL_FAILURE(h.Verify());
  h.Report(engine);
  EXPECT_EQ(h.invariant_violations(), 0) << "a full range read saw a wrong total";
  int64_t injected_conflicts = faulty ? faulty->counts().conflicts : 0;
  std::cout << "[" << engine
            << "] conflicts retried by kv::Run: " << conflicts_seen - injected_conflicts
            << " real, " << injected_conflicts << " injected\n";
  // Without real conflicts the test would not exercise the resolver.
  EXPECT_GT(conflicts_seen - injected_conflicts, 0);
  if (faulty) {
    auto c = faulty->counts();
    std::cout << "[" << engine << "] injected: conflicts " << c.conflicts << ", too old "
              << c.too_old << ", read timeouts " << c.read_timeouts << ", commit timeouts "
              << c.commit_timeouts_applied << " applied / " << c.commit_timeouts_not_applied
              << " not, unknown results " << c.unknown_applied << " applied / "
              << c.unknown_not_applied << " not, latencies " << c.latencies << "\n";
    int64_t min_unknown = FullRun() ? 1000 : 20;
    EXPECT_GE(c.unknown_applied, min_unknown);
    EXPECT_GE(c.unknown_not_applied, min_unknown / 2);
    EXPECT_GT(c.conflicts, 0);
    EXPECT_GT(c.too_old, 0);
  }
}

TEST(SerializabilityTest, MemoryEngine) {
  auto db = OpenMemoryEngine();
  RunWorkload(db.get(), "memory", Seed(), nullptr);
}

TEST(SerializabilityTest, FaultyMemoryEngine) {
  auto db = OpenMemoryEngine();
  uint64_t seed = Seed();
  auto faulty = WrapFaulty(db.get(), Faults(seed));
  RunWorkload(faulty.get(), "faulty(memory)", seed, faulty.get());
}

#ifdef FDYNO_HAVE_EMBEDDED
class EmbeddedDir {
 public:
  EmbeddedDir() {
    path_ =
        std::filesystem::temp_directory_path() /
        ("fdyno-serializability-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    std::filesystem::remove_all(path_);
  }
  ~EmbeddedDir() { std::filesystem::remove_all(path_); }
  std::string path() const { return path_.string(); }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

std::unique_ptr<Database> OpenEmbeddedForTest(const EmbeddedDir& dir) {
  EmbeddedOptions o;
  o.path = dir.path();
  o.durability = Durability::kNone;  // the property under test is isolation, not durability
  auto db = OpenEmbedded(o);
  EXPECT_TRUE(db.ok()) << db.error().message;
  return db.ok() ? std::move(*db) : nullptr;
}

TEST(SerializabilityTest, EmbeddedEngine) {
  EmbeddedDir dir;
  auto db = OpenEmbeddedForTest(dir);
  ASSERT_NE(db, nullptr);
  RunWorkload(db.get(), "embedded", Seed(), nullptr);
}

TEST(SerializabilityTest, FaultyEmbeddedEngine) {
  EmbeddedDir dir;
  auto db = OpenEmbeddedForTest(dir);
  ASSERT_NE(db, nullptr);
  uint64_t seed = Seed();
  auto faulty = WrapFaulty(db.get(), Faults(seed));
  RunWorkload(faulty.get(), "faulty(embedded)", seed, faulty.get());
}
#endif

// On FoundationDB when FDYNO_FDB_CLUSTER_FILE names a cluster (FDYNO_FDB_LIBRARY: the client
// library), under a prefix of its own, cleared afterwards.
TEST(SerializabilityTest, FdbEngine) {
  const char* cluster = std::getenv("FDYNO_FDB_CLUSTER_FILE");
  if (cluster == nullptr || *cluster == '\0') {
    GTEST_SKIP() << "FDYNO_FDB_CLUSTER_FILE is not set: the FoundationDB engine needs a cluster";
  }
  FdbOptions o;
  o.cluster_file = cluster;
  o.prefix = "fdyno_serializability/" + std::to_string(::getpid()) + "/";
  if (const char* library = std::getenv("FDYNO_FDB_LIBRARY"); library && *library) {
    o.library = library;
  }
  auto db = OpenFdb(o);
  ASSERT_TRUE(db.ok()) << db.error().message;
  RunWorkload(db->get(), "fdb", Seed(), nullptr);
  auto t = (*db)->CreateTransaction();
  t->ClearRange("", "\xff\xff");
  EXPECT_TRUE(t->Commit().ok());
}

}  // namespace
}  // namespace fdyno::kv
