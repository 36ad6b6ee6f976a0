#include "kv/testing/memory_engine.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>

namespace fdyno::kv {
namespace {

using TimePoint = std::chrono::steady_clock::time_point;

struct KeyRange {
  std::string begin;
  std::string end;  // exclusive
};

bool Intersects(const KeyRange& a, const KeyRange& b) { return a.begin < b.end && b.begin < a.end; }

std::string KeyAfter(std::string_view key) {
  std::string s(key);
  s.push_back('\0');
  return s;
}

// FoundationDB's ADD: little-endian, the result has the parameter's length; the existing
// value is zero-extended or truncated to it.
std::string ApplyAdd(const std::optional<std::string>& existing, std::string_view param) {
  std::string out(param.size(), '\0');
  unsigned carry = 0;
  for (size_t i = 0; i < param.size(); ++i) {
    unsigned a = existing && i < existing->size() ? static_cast<uint8_t>((*existing)[i]) : 0;
    unsigned sum = a + static_cast<uint8_t>(param[i]) + carry;
    out[i] = static_cast<char>(sum & 0xFF);
    carry = sum >> 8;
  }
  return out;
}

// Splits "bytes + 4-byte LE offset" and substitutes the 10-byte versionstamp.
std::optional<std::string> SubstituteVersionstamp(std::string_view param,
                                                  std::string_view versionstamp) {
  if (param.size() < 4) return std::nullopt;
  uint32_t offset = 0;
  for (int i = 0; i < 4; ++i) {
    offset |= static_cast<uint32_t>(static_cast<uint8_t>(param[param.size() - 4 + i])) << (8 * i);
  }
  std::string out(param.substr(0, param.size() - 4));
  if (static_cast<size_t>(offset) + 10 > out.size()) return std::nullopt;
  std::memcpy(out.data() + offset, versionstamp.data(), 10);
  return out;
}

struct Mutation {
  enum class Kind { kSet, kClear, kClearRange, kAdd, kVersionstampedKey, kVersionstampedValue };
  Kind kind;
  std::string key;    // begin for kClearRange
  std::string value;  // end for kClearRange; param for atomic ops
};

struct Committed {
  int64_t version;
  TimePoint time;
  std::vector<KeyRange> writes;
};

class MemoryDatabase;

class MemoryTransaction : public Transaction {
 public:
  explicit MemoryTransaction(MemoryDatabase* db);

  Result<int64_t> GetReadVersion() override;
  void SetReadVersion(int64_t version) override;
  Result<std::optional<std::string>> Get(std::string_view key, bool snapshot) override;
  Result<RangeResult> GetRange(std::string_view begin, std::string_view end,
                               const RangeOptions& options) override;
  void Set(std::string_view key, std::string_view value) override;
  void Clear(std::string_view key) override;
  void ClearRange(std::string_view begin, std::string_view end) override;
  void AtomicOp(MutationType type, std::string_view key, std::string_view param) override;
  Status AddConflictRange(std::string_view begin, std::string_view end,
                          ConflictRangeType type) override;
  void SetTimeout(std::chrono::milliseconds timeout) override;
  Status Commit() override;
  Result<int64_t> GetCommittedVersion() override;
  Result<std::string> GetVersionstamp() override;
  void Reset() override;
  void Cancel() override;

 private:
  // What this transaction wrote to a key, for read-your-writes.
  struct Written {
    bool known = true;                 // false: base value is the snapshot's, then `adds` apply
    std::optional<std::string> value;  // when known
    std::vector<std::string> adds;     // pending ADD params when !known
    bool unreadable = false;           // set with a versionstamped value: unknown until commit
  };

  Status CheckUsable();
  Status EnsureReadVersion();
  bool Cleared(std::string_view key) const;
  Result<std::optional<std::string>> Resolve(const Written& w, std::string_view key);
  void NoteMutationBytes(size_t key_bytes, size_t value_bytes, bool check_value = true);

  MemoryDatabase* db_;
  std::optional<int64_t> read_version_;
  TimePoint read_version_time_{};
  std::map<std::string, Written, std::less<>> writes_;
  std::vector<KeyRange> cleared_;
  std::vector<Mutation> mutations_;
  std::vector<KeyRange> read_ranges_;
  std::vector<KeyRange> write_ranges_;
  size_t bytes_ = 0;
  std::optional<Error> deferred_error_;  // limit violations, reported by Commit
  std::chrono::milliseconds timeout_{0};
  TimePoint start_;
  bool cancelled_ = false;
  bool committed_ = false;
  int64_t committed_version_ = -1;
  std::string versionstamp_;
};

class MemoryDatabase : public Database {
 public:
  explicit MemoryDatabase(const MemoryEngineOptions& options)
      : clock_(options.clock ? options.clock : Clock::Real()),
        max_transaction_bytes_(options.max_transaction_bytes) {}

  std::unique_ptr<Transaction> CreateTransaction() override {
    return std::make_unique<MemoryTransaction>(this);
  }

  Clock* clock() const { return clock_; }
  size_t max_transaction_bytes() const { return max_transaction_bytes_; }

  int64_t CurrentVersion() {
    std::lock_guard<std::mutex> l(mu_);
    return version_;
  }

  // When the given version stopped being the newest (the next commit's time), or now.
  std::optional<TimePoint> VersionTime(int64_t version) {
    std::lock_guard<std::mutex> l(mu_);
    if (version >= version_) return clock_->Now();
    auto it = std::upper_bound(history_.begin(), history_.end(), version,
                               [](int64_t v, const Committed& c) { return v < c.version; });
    if (it == history_.end() || it->version != version + 1) {
      return std::nullopt;  // pruned: older than the window
    }
    return it->time;
  }

  std::optional<std::string> Read(std::string_view key, int64_t version) {
    std::lock_guard<std::mutex> l(mu_);
    auto it = data_.find(key);
    if (it == data_.end()) return std::nullopt;
    return At(it->second, version);
  }

  // Every present key in [begin, end) at the version, in order.
  std::vector<KeyValue> ReadRange(std::string_view begin, std::string_view end, int64_t version) {
    std::lock_guard<std::mutex> l(mu_);
    std::vector<KeyValue> out;
    for (auto it = data_.lower_bound(begin); it != data_.end() && it->first < end; ++it) {
      auto v = At(it->second, version);
      if (v) out.push_back({it->first, std::move(*v)});
    }
    return out;
  }

  struct CommitRequest {
    std::optional<int64_t> read_version;
    TimePoint read_version_time;
    const std::vector<KeyRange>* reads;
    std::vector<KeyRange> writes;
    const std::vector<Mutation>* mutations;
  };

  // Resolves and applies; returns the commit version and versionstamp.
  Result<std::pair<int64_t, std::string>> Commit(CommitRequest req) {
    std::lock_guard<std::mutex> l(mu_);
    TimePoint now = clock_->Now();
    if (req.read_version) {
      if (now - req.read_version_time > kMaxTransactionAge) return KvError(kTransactionTooOld);
      for (auto it = history_.rbegin(); it != history_.rend() && it->version > *req.read_version;
           ++it) {
        for (const auto& w : it->writes) {
          for (const auto& r : *req.reads) {
            if (Intersects(w, r)) return KvError(kNotCommitted);
          }
        }
      }
    }
    int64_t version = version_ + 1;
    std::string stamp(10, '\0');
    for (int i = 0; i < 8; ++i) stamp[i] = static_cast<char>((version >> (8 * (7 - i))) & 0xFF);
    // Validate versionstamp placements before applying anything: all or nothing.
    for (const auto& m : *req.mutations) {
      if (m.kind == Mutation::Kind::kVersionstampedKey) {
        auto key = SubstituteVersionstamp(m.key, stamp);
        if (!key) return KvError(kInvalidMutationType);
        req.writes.push_back({*key, KeyAfter(*key)});
      } else if (m.kind == Mutation::Kind::kVersionstampedValue) {
        if (!SubstituteVersionstamp(m.value, stamp)) return KvError(kInvalidMutationType);
      }
    }
    version_ = version;
    for (const auto& m : *req.mutations) Apply(m, version, stamp);
    history_.push_back({version, now, std::move(req.writes)});
    // Entries older than the window can no longer decide a conflict: any transaction that
    // read before them is too old. Keep a margin.
    while (!history_.empty() && now - history_.front().time > kMaxTransactionAge * 2) {
      history_.pop_front();
    }
    return std::make_pair(version, stamp);
  }

 private:
  using Versions = std::vector<std::pair<int64_t, std::optional<std::string>>>;

  static std::optional<std::string> At(const Versions& versions, int64_t version) {
    for (auto it = versions.rbegin(); it != versions.rend(); ++it) {
      if (it->first <= version) return it->second;
    }
    return std::nullopt;
  }

  void Put(const std::string& key, int64_t version, std::optional<std::string> value) {
    auto& versions = data_[key];
    if (!versions.empty() && versions.back().first == version) {
      versions.back().second = std::move(value);
    } else {
      versions.emplace_back(version, std::move(value));
    }
  }

  void Apply(const Mutation& m, int64_t version, const std::string& stamp) {
    switch (m.kind) {
      case Mutation::Kind::kSet:
        Put(m.key, version, m.value);
        break;
      case Mutation::Kind::kClear:
        if (data_.count(m.key)) Put(m.key, version, std::nullopt);
        break;
      case Mutation::Kind::kClearRange:
        for (auto it = data_.lower_bound(m.key); it != data_.end() && it->first < m.value; ++it) {
          if (!it->second.empty() && it->second.back().second)
            Put(it->first, version, std::nullopt);
        }
        break;
      case Mutation::Kind::kAdd: {
        auto it = data_.find(m.key);
        std::optional<std::string> existing;
        if (it != data_.end() && !it->second.empty()) existing = it->second.back().second;
        Put(m.key, version, ApplyAdd(existing, m.value));
        break;
      }
      case Mutation::Kind::kVersionstampedKey:
        Put(*SubstituteVersionstamp(m.key, stamp), version, m.value);
        break;
      case Mutation::Kind::kVersionstampedValue:
        Put(m.key, version, *SubstituteVersionstamp(m.value, stamp));
        break;
    }
  }

  Clock* clock_;
  const size_t max_transaction_bytes_;
  std::mutex mu_;
  int64_t version_ = 0;
  std::map<std::string, Versions, std::less<>> data_;
  std::deque<Committed> history_;
};

MemoryTransaction::MemoryTransaction(MemoryDatabase* db) : db_(db), start_(db->clock()->Now()) {}

Status MemoryTransaction::CheckUsable() {
  if (cancelled_) return KvError(kTransactionCancelled);
  if (timeout_.count() > 0 && db_->clock()->Now() - start_ >= timeout_) {
    return KvError(kTransactionTimedOut);
  }
  if (committed_) return KvError(kUsedDuringCommit);
  return {};
}

Status MemoryTransaction::EnsureReadVersion() {
  if (!read_version_) {
    read_version_ = db_->CurrentVersion();
    read_version_time_ = db_->clock()->Now();
  }
  if (db_->clock()->Now() - read_version_time_ > kMaxTransactionAge) {
    return KvError(kTransactionTooOld);
  }
  return {};
}

Result<int64_t> MemoryTransaction::GetReadVersion() {
  FDYNO_RETURN_IF_ERROR(CheckUsable());
  FDYNO_RETURN_IF_ERROR(EnsureReadVersion());
  return *read_version_;
}

void MemoryTransaction::SetReadVersion(int64_t version) {
  read_version_ = version;
  auto t = db_->VersionTime(version);
  // A pruned version is far older than the window: the first read reports 1007.
  read_version_time_ = t ? *t : db_->clock()->Now() - kMaxTransactionAge * 3;
}

bool MemoryTransaction::Cleared(std::string_view key) const {
  for (const auto& r : cleared_) {
    if (key >= r.begin && key < r.end) return true;
  }
  return false;
}

Result<std::optional<std::string>> MemoryTransaction::Resolve(const Written& w,
                                                              std::string_view key) {
  // FoundationDB's accessed_unreadable: the value holds a versionstamp not yet known.
  if (w.unreadable) return KvError(kAccessedUnreadable);
  if (w.known) return w.value;
  std::optional<std::string> v = db_->Read(key, *read_version_);
  for (const auto& add : w.adds) v = ApplyAdd(v, add);
  return v;
}

Result<std::optional<std::string>> MemoryTransaction::Get(std::string_view key, bool snapshot) {
  FDYNO_RETURN_IF_ERROR(CheckUsable());
  if (key.size() > kMaxKeyBytes) return KvError(kKeyTooLarge);
  FDYNO_RETURN_IF_ERROR(EnsureReadVersion());
  if (!snapshot) read_ranges_.push_back({std::string(key), KeyAfter(key)});
  auto it = writes_.find(key);
  if (it != writes_.end()) return Resolve(it->second, key);
  if (Cleared(key)) return std::optional<std::string>();
  return db_->Read(key, *read_version_);
}

Result<RangeResult> MemoryTransaction::GetRange(std::string_view begin, std::string_view end,
                                                const RangeOptions& options) {
  FDYNO_RETURN_IF_ERROR(CheckUsable());
  FDYNO_RETURN_IF_ERROR(EnsureReadVersion());
  RangeResult result;
  if (begin >= end) return result;
  // Merge the snapshot (minus cleared ranges and overwritten keys) with local writes.
  std::map<std::string, std::string> merged;
  for (auto& kv : db_->ReadRange(begin, end, *read_version_)) {
    if (writes_.count(kv.key) || Cleared(kv.key)) continue;
    merged.emplace(std::move(kv.key), std::move(kv.value));
  }
  for (auto it = writes_.lower_bound(begin); it != writes_.end() && it->first < end; ++it) {
    FDYNO_ASSIGN_OR_RETURN(auto v, Resolve(it->second, it->first));
    if (v) merged[it->first] = std::move(*v);
  }
  size_t limit = options.limit > 0 ? static_cast<size_t>(options.limit) : merged.size();
  if (options.reverse) {
    for (auto it = merged.rbegin(); it != merged.rend() && result.kvs.size() < limit; ++it) {
      result.kvs.push_back({it->first, it->second});
    }
  } else {
    for (auto it = merged.begin(); it != merged.end() && result.kvs.size() < limit; ++it) {
      result.kvs.push_back({it->first, it->second});
    }
  }
  result.more = result.kvs.size() < merged.size();
  if (!options.snapshot) {
    if (!result.more) {
      read_ranges_.push_back({std::string(begin), std::string(end)});
    } else if (options.reverse) {
      read_ranges_.push_back({result.kvs.back().key, std::string(end)});
    } else {
      read_ranges_.push_back({std::string(begin), KeyAfter(result.kvs.back().key)});
    }
  }
  return result;
}

void MemoryTransaction::NoteMutationBytes(size_t key_bytes, size_t value_bytes, bool check_value) {
  bytes_ += key_bytes + value_bytes;
  if (deferred_error_) return;
  if (key_bytes > kMaxKeyBytes) {
    deferred_error_ = KvError(kKeyTooLarge);
  } else if (check_value && value_bytes > kMaxValueBytes) {
    deferred_error_ = KvError(kValueTooLarge);
  }
}

void MemoryTransaction::Set(std::string_view key, std::string_view value) {
  NoteMutationBytes(key.size(), value.size());
  writes_[std::string(key)] = Written{true, std::string(value), {}};
  mutations_.push_back({Mutation::Kind::kSet, std::string(key), std::string(value)});
  write_ranges_.push_back({std::string(key), KeyAfter(key)});
}

void MemoryTransaction::Clear(std::string_view key) {
  NoteMutationBytes(key.size(), 0);
  writes_[std::string(key)] = Written{true, std::nullopt, {}};
  mutations_.push_back({Mutation::Kind::kClear, std::string(key), {}});
  write_ranges_.push_back({std::string(key), KeyAfter(key)});
}

void MemoryTransaction::ClearRange(std::string_view begin, std::string_view end) {
  NoteMutationBytes(begin.size() + end.size(), 0);
  if (begin >= end) return;
  writes_.erase(writes_.lower_bound(begin), writes_.lower_bound(end));
  cleared_.push_back({std::string(begin), std::string(end)});
  mutations_.push_back({Mutation::Kind::kClearRange, std::string(begin), std::string(end)});
  write_ranges_.push_back({std::string(begin), std::string(end)});
}

void MemoryTransaction::AtomicOp(MutationType type, std::string_view key, std::string_view param) {
  switch (type) {
    case MutationType::kAdd: {
      NoteMutationBytes(key.size(), param.size());
      auto it = writes_.find(key);
      if (it != writes_.end()) {
        if (it->second.unreadable) {
          // Still unreadable: the base value is unknown until commit.
        } else if (it->second.known) {
          it->second.value = ApplyAdd(it->second.value, param);
        } else {
          it->second.adds.emplace_back(param);
        }
      } else if (Cleared(key)) {
        writes_[std::string(key)] = Written{true, ApplyAdd(std::nullopt, param), {}};
      } else {
        writes_[std::string(key)] = Written{false, std::nullopt, {std::string(param)}};
      }
      mutations_.push_back({Mutation::Kind::kAdd, std::string(key), std::string(param)});
      write_ranges_.push_back({std::string(key), KeyAfter(key)});
      break;
    }
    case MutationType::kSetVersionstampedKey:
      // The key's 4-byte offset suffix is not part of the stored key.
      NoteMutationBytes(key.size() >= 4 ? key.size() - 4 : key.size(), param.size());
      mutations_.push_back(
          {Mutation::Kind::kVersionstampedKey, std::string(key), std::string(param)});
      break;
    case MutationType::kSetVersionstampedValue:
      NoteMutationBytes(key.size(), param.size() >= 4 ? param.size() - 4 : param.size());
      writes_[std::string(key)] = Written{true, std::nullopt, {}, true};
      mutations_.push_back(
          {Mutation::Kind::kVersionstampedValue, std::string(key), std::string(param)});
      write_ranges_.push_back({std::string(key), KeyAfter(key)});
      break;
    default:
      if (!deferred_error_) deferred_error_ = KvError(kInvalidMutationType);
  }
}

Status MemoryTransaction::AddConflictRange(std::string_view begin, std::string_view end,
                                           ConflictRangeType type) {
  FDYNO_RETURN_IF_ERROR(CheckUsable());
  if (begin >= end) return {};
  bytes_ += begin.size() + end.size();
  auto& ranges = type == ConflictRangeType::kRead ? read_ranges_ : write_ranges_;
  ranges.push_back({std::string(begin), std::string(end)});
  return {};
}

void MemoryTransaction::SetTimeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }

Status MemoryTransaction::Commit() {
  FDYNO_RETURN_IF_ERROR(CheckUsable());
  if (deferred_error_) return *deferred_error_;
  if (mutations_.empty() && write_ranges_.empty()) {
    committed_ = true;
    committed_version_ = -1;
    return {};
  }
  // FoundationDB counts mutations and both kinds of conflict ranges.
  for (const auto& r : read_ranges_) bytes_ += r.begin.size() + r.end.size();
  for (const auto& r : write_ranges_) bytes_ += r.begin.size() + r.end.size();
  if (bytes_ > db_->max_transaction_bytes()) return KvError(kTransactionTooLarge);
  MemoryDatabase::CommitRequest req{read_version_, read_version_time_, &read_ranges_, write_ranges_,
                                    &mutations_};
  FDYNO_ASSIGN_OR_RETURN(auto committed, db_->Commit(std::move(req)));
  committed_ = true;
  committed_version_ = committed.first;
  versionstamp_ = std::move(committed.second);
  return {};
}

Result<int64_t> MemoryTransaction::GetCommittedVersion() {
  if (!committed_) return KvError(kInternalError);
  return committed_version_;
}

Result<std::string> MemoryTransaction::GetVersionstamp() {
  if (!committed_ || versionstamp_.empty()) return KvError(kInternalError);
  return versionstamp_;
}

void MemoryTransaction::Reset() {
  read_version_.reset();
  writes_.clear();
  cleared_.clear();
  mutations_.clear();
  read_ranges_.clear();
  write_ranges_.clear();
  bytes_ = 0;
  deferred_error_.reset();
  start_ = db_->clock()->Now();
  cancelled_ = false;
  committed_ = false;
  committed_version_ = -1;
  versionstamp_.clear();
}

void MemoryTransaction::Cancel() { cancelled_ = true; }

}  // namespace

std::unique_ptr<Database> OpenMemoryEngine(const MemoryEngineOptions& options) {
  return std::make_unique<MemoryDatabase>(options);
}

}  // namespace fdyno::kv
