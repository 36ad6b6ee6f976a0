// The kv contract: a transactional, ordered key-value store with FoundationDB semantics.
// See docs/architecture.md, "The kv contract". Every engine (embedded, faulty, fdb)
// implements exactly this interface, and nothing here has semantics FoundationDB's C API
// cannot provide: each call maps to one fdb_transaction_* / fdb_database_* call. The one
// exception is optional: Database::CreateSnapshotTransaction, which an engine that cannot
// provide it (FoundationDB) answers with null.
//
// Thread-safety: a Database is thread-safe. A Transaction is used by one thread at a time.
// Ownership: a Transaction must not outlive the Database that created it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace fdyno::kv {

// FoundationDB error codes (fdb_c's error numbers). Persisted nowhere; stable by contract.
inline constexpr int kTransactionTooOld = 1007;  // read version older than 5 s
inline constexpr int kFutureVersion = 1009;
inline constexpr int kNotCommitted = 1020;         // conflict; nothing committed
inline constexpr int kCommitUnknownResult = 1021;  // may or may not have committed
inline constexpr int kTransactionCancelled = 1025;
inline constexpr int kTransactionTimedOut = 1031;  // the transaction's timeout passed
inline constexpr int kProcessBehind = 1037;
inline constexpr int kDatabaseLocked = 1038;
inline constexpr int kClusterVersionChanged = 1039;
// FoundationDB's throttling and overload codes: retryable, nothing committed.
inline constexpr int kCommitProxyMemoryLimitExceeded = 1042;
inline constexpr int kBatchTransactionThrottled = 1051;
inline constexpr int kGrvProxyMemoryLimitExceeded = 1078;
inline constexpr int kTagThrottled = 1213;
inline constexpr int kProxyTagThrottled = 1223;
inline constexpr int kAccessedUnreadable = 1036;      // read of a versionstamped value/key
inline constexpr int kClientInvalidOperation = 2000;  // e.g. bad versionstamp offset
inline constexpr int kInvertedRange = 2005;           // range begin after end
inline constexpr int kUsedDuringCommit = 2017;
inline constexpr int kInvalidMutationType = 2018;
inline constexpr int kNoCommitVersion = 2021;      // committed version asked of a non-commit
inline constexpr int kTransactionTooLarge = 2101;  // mutations+conflict ranges > 10 MB
inline constexpr int kKeyTooLarge = 2102;          // key > 10,000 bytes
inline constexpr int kValueTooLarge = 2103;        // value > 100,000 bytes
inline constexpr int kInternalError = 4100;
inline constexpr int kIoError = 1510;  // engine storage failure

// FoundationDB's limits.
inline constexpr size_t kMaxKeyBytes = 10'000;
inline constexpr size_t kMaxValueBytes = 100'000;
inline constexpr size_t kMaxTransactionBytes = 10'000'000;
inline constexpr std::chrono::seconds kMaxTransactionAge{5};

// fdb_error_predicate(FDB_ERROR_PREDICATE_RETRYABLE, code): worth running the body again.
bool IsRetryable(int code);
// FDB_ERROR_PREDICATE_MAYBE_COMMITTED: the commit may have been applied.
bool MaybeCommitted(int code);
// FDB_ERROR_PREDICATE_RETRYABLE_NOT_COMMITTED: retryable and certainly not applied.
bool RetryableNotCommitted(int code);
// A short FoundationDB-style name ("not_committed") for logs and messages.
std::string_view ErrorName(int code);

// A kv error as an fdyno::Error (type kKv).
inline Error KvError(int code) { return Error::Kv(code, std::string(ErrorName(code))); }

struct KeyValue {
  std::string key;
  std::string value;
  bool operator==(const KeyValue&) const = default;
};

struct RangeOptions {
  int limit = 0;          // 0: no limit (fdb's limit=0)
  bool reverse = false;   // return the last keys of the range first
  bool snapshot = false;  // snapshot read: adds no read conflict range
};

struct RangeResult {
  std::vector<KeyValue> kvs;
  bool more = false;  // the range holds more keys past the limit
};

// Atomic mutations, numbered as fdb_c's FDBMutationType. Persisted nowhere.
enum class MutationType {
  kAdd = 2,                      // little-endian integer add (param and value up to 8 bytes)
  kSetVersionstampedKey = 14,    // key: bytes + 4-byte LE offset of a 10-byte placeholder
  kSetVersionstampedValue = 15,  // value: bytes + 4-byte LE offset of a 10-byte placeholder
};

// The 8-byte little-endian integer that kAdd adds and keeps (a counter's operand and value).
inline std::string EncodeCounter(int64_t v) {
  const uint64_t u = static_cast<uint64_t>(v);
  std::string out(8, '\0');
  for (size_t i = 0; i < 8; ++i) out[i] = static_cast<char>((u >> (8 * i)) & 0xFF);
  return out;
}

// A counter's value; nullopt unless `bytes` is exactly 8 bytes (callers fail closed).
inline std::optional<int64_t> DecodeCounter(std::string_view bytes) {
  if (bytes.size() != 8) return std::nullopt;
  uint64_t u = 0;
  for (size_t i = 0; i < 8; ++i)
    u |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[i])) << (8 * i);
  return static_cast<int64_t>(u);
}

enum class ConflictRangeType { kRead = 0, kWrite = 1 };

// A transaction. Reads see a consistent snapshot at the read version plus this
// transaction's own writes (read-your-writes). Mutations are buffered until Commit.
// Errors surface as fdyno::Error with type kKv and FoundationDB's code.
class Transaction {
 public:
  virtual ~Transaction() = default;

  // The read version (obtained lazily on first read, then fixed until Reset).
  virtual Result<int64_t> GetReadVersion() = 0;
  // Pins the read version (fdb_transaction_set_read_version), e.g. to share one snapshot
  // across transactions. REQUIRES: no read has happened yet.
  virtual void SetReadVersion(int64_t version) = 0;

  // Point read. snapshot=false adds a read conflict on the key.
  virtual Result<std::optional<std::string>> Get(std::string_view key, bool snapshot = false) = 0;
  // Keys in [begin, end). A non-snapshot read adds a read conflict on exactly the range it
  // examined (up to the last key returned when limited), so absent keys conflict too.
  virtual Result<RangeResult> GetRange(std::string_view begin, std::string_view end,
                                       const RangeOptions& options = {}) = 0;

  // Buffered mutations. Limit violations (2101-2103) are reported by Commit, as in fdb_c.
  virtual void Set(std::string_view key, std::string_view value) = 0;
  virtual void Clear(std::string_view key) = 0;
  virtual void ClearRange(std::string_view begin, std::string_view end) = 0;
  virtual void AtomicOp(MutationType type, std::string_view key, std::string_view param) = 0;

  virtual Status AddConflictRange(std::string_view begin, std::string_view end,
                                  ConflictRangeType type) = 0;

  // fdb's TIMEOUT option: after this long since the transaction started (or since the last
  // Reset) every pending and later operation fails with 1031. 0 disables it.
  virtual void SetTimeout(std::chrono::milliseconds timeout) = 0;

  // Commits. Success means durable. 1020: nothing applied. 1021: maybe applied.
  // A transaction without mutations or write conflict ranges commits trivially (no
  // conflict check, no version), as in FoundationDB.
  virtual Status Commit() = 0;
  // Commit without waiting (fdb_transaction_commit's future with a callback): `done` runs
  // exactly once with what Commit() would have returned, on an engine thread or, when the
  // outcome is known at once, on the calling thread before CommitAsync returns. Until then the
  // transaction must stay alive and untouched. `done` must be short and must never commit
  // synchronously on the same database (it may run on the engine's commit thread).
  // This default commits on the calling thread; engines that can commit without blocking
  // their caller override it and answer true to Database::CommitsAsynchronously().
  virtual void CommitAsync(std::function<void(Status)> done) { done(Commit()); }
  // REQUIRES: Commit succeeded. The commit version (-1 for a read-only commit).
  virtual Result<int64_t> GetCommittedVersion() = 0;
  // REQUIRES: Commit succeeded with mutations. The 10-byte versionstamp of this commit.
  virtual Result<std::string> GetVersionstamp() = 0;

  // Returns the transaction to its initial state (fdb_transaction_reset), keeping options.
  virtual void Reset() = 0;
  // Cancels outstanding and future operations with 1025.
  virtual void Cancel() = 0;
};

// A database: the factory of transactions. Thread-safe.
class Database {
 public:
  virtual ~Database() = default;
  virtual std::unique_ptr<Transaction> CreateTransaction() = 0;
  // Whether Transaction::CommitAsync returns before the commit is durable (rather than the
  // default, which commits on the calling thread).
  virtual bool CommitsAsynchronously() const { return false; }
  // A read-only transaction pinned to the newest committed version, whose reads never age out:
  // no 1007 however long it lives, so one consistent snapshot can be read in many bounded steps
  // (backups, exports) while writers go on. Its reads add no conflicts; a write makes its
  // Commit fail with 2000 client_invalid_operation; Reset keeps the pinned version and
  // SetReadVersion is ignored. It holds storage the engine would otherwise reclaim (the
  // versions overwritten meanwhile), so destroy it when done; it must not outlive the Database.
  // Null when the engine cannot hold a version past the 5 s window (FoundationDB): callers
  // then share a read version across transactions with SetReadVersion and fail, rather than mix
  // snapshots, when it ages out (1007).
  virtual std::unique_ptr<Transaction> CreateSnapshotTransaction() { return nullptr; }
};

}  // namespace fdyno::kv
