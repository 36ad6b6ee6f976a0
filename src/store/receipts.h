// Operation receipts: the typed result of one accepted mutation, written in the same kv
// transaction as the mutation, so that a retry after commit_unknown_result (1021) can tell
// whether the earlier attempt committed and replay its result instead of applying the effect
// a second time. Format: docs/format/receipts.md.
//
// A receipt is keyed by (time bucket, operation id) inside the receipts subspace. The bucket
// is derived from the operation's creation time, so expired receipts form a key prefix range
// that a writer removes with one ClearRange (ClearExpired); storage stays bounded by the
// receipt lifetime plus two buckets per active process.
//
// Thread-safety: OperationId and ReceiptResult are values; ReceiptStore is thread-safe (its
// only mutable state is an atomic). Functions taking a Transaction use it from one thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/result.h"
#include "kv/kv.h"
#include "kv/run.h"
#include "kv/tuple.h"

namespace fdyno::store {

// The id of one accepted mutation: its creation time and a 16-byte nonce. Allocated once per
// request, before the first attempt, and kept across attempts.
struct OperationId {
  int64_t created_ms = 0;  // wall clock at allocation (Clock::WallMillis)
  // 8 bytes (big-endian) of a per-process sequence that starts at the wall clock in ns, then 8
  // random bytes: unique, and nearly increasing in allocation order.
  std::string nonce;

  static OperationId New(const Clock& clock);
  bool operator==(const OperationId&) const = default;
};

// Which operation a receipt belongs to. Persisted: never renumber.
enum class ReceiptKind : uint8_t {
  kPutItem = 1,
  kUpdateItem = 2,
  kDeleteItem = 3,
  kTransactWrite = 4,
  kBatchWrite = 5,
  kPartiql = 6,
};

// The typed result of a mutation: what its response needs to be rendered again.
struct ReceiptResult {
  ReceiptKind kind = ReceiptKind::kPutItem;
  // Attributes returned by ReturnValues, as an encoded item image (item codec), if any.
  std::optional<std::string> attributes;
  // DynamoDB item sizes of the old and new image (0 when absent), for consumed capacity.
  uint64_t old_size_bytes = 0;
  uint64_t new_size_bytes = 0;
  // Operation-specific extra bytes (opaque here), e.g. a multi-item operation's result.
  std::string extra;

  bool operator==(const ReceiptResult&) const = default;
};

// A receipt as read back.
struct Receipt {
  int format_version = 0;  // 1 (chunked) or 2 (inline)
  int64_t created_ms = 0;
  ReceiptResult result;
};

struct ReceiptOptions {
  // How long a receipt must be kept. Must exceed the longest operation deadline (the
  // retry loop that reads it); default 10 minutes against a default 30 s deadline and at
  // most kv::kMaxOperationTimeout (5 minutes).
  std::chrono::milliseconds ttl{10 * 60 * 1000};
  // Width of one time bucket.
  std::chrono::milliseconds bucket{60 * 1000};
};
static_assert(ReceiptOptions{}.ttl >= 2 * kv::kMaxOperationTimeout,
              "a receipt must outlive every operation whose retries may read it");

// Receipt formats. Persisted: never renumber.
inline constexpr uint8_t kReceiptFormatChunked = 1;  // v1: header + chunk keys
inline constexpr uint8_t kReceiptFormatInline = 2;   // v2: one value
// Payload bytes per v1 chunk value (after its version byte).
inline constexpr size_t kReceiptChunkBytes = 90'000;

class ReceiptStore {
 public:
  // `subspace`: the database-wide receipts subspace (store/layout.h).
  explicit ReceiptStore(kv::Subspace subspace, ReceiptOptions options = {});

  // Buffers the receipt for `id` in tx: v2 (inline) for a PutItem/DeleteItem result whose
  // value fits in one engine value, v1 (chunked) for everything else.
  void Write(kv::Transaction& tx, const OperationId& id, const ReceiptResult& result) const;
  // Writes in the given format regardless of size or kind (tests, and readers of old data).
  void WriteFormat(kv::Transaction& tx, const OperationId& id, const ReceiptResult& result,
                   uint8_t format) const;

  // The receipt for `id`, or nullopt when none was committed. A malformed receipt or an
  // unknown format version is an InternalServerError (fails closed: the caller must not
  // apply the effect again nor report success).
  Result<std::optional<Receipt>> Read(kv::Transaction& tx, const OperationId& id) const;

  // Clears, with one ClearRange, every bucket whose receipts have all expired at now_ms.
  // Issues the ClearRange at most once per bucket boundary per ReceiptStore (process); a
  // clear lost with an uncommitted transaction is repeated at the next boundary, which clears
  // everything below it. Returns whether a ClearRange was buffered.
  bool ClearExpired(kv::Transaction& tx, int64_t now_ms) const;

  // Whether a receipt created at created_ms has expired at now_ms.
  bool Expired(int64_t created_ms, int64_t now_ms) const;

  const kv::Subspace& subspace() const { return subspace_; }
  int64_t BucketOf(int64_t created_ms) const;

 private:
  std::string KeyOf(const OperationId& id) const;

  kv::Subspace subspace_;
  ReceiptOptions options_;
  mutable std::atomic<int64_t> cleared_below_{0};
};

// Encoding of the typed result (shared by both formats); exposed for tests.
std::string EncodeReceiptResult(const ReceiptResult& result);
Result<ReceiptResult> DecodeReceiptResult(ReceiptKind kind, std::string_view payload);

}  // namespace fdyno::store
