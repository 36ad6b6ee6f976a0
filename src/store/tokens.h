// Durable idempotency records for ClientRequestToken (root subspace 5, store/layout.h Tokens()).
// Format and the rules for adding a fingerprint version: docs/format/tokens.md.
//
// One record per (caller account, operation, token), keyed by exactly that and never by any
// version, so one key can hold only one effect. The record is read and written in the same kv
// transaction as the effect it guards: if that transaction committed, the record exists; if
// not, neither does the effect. A record holds:
//   * its format version (the first byte of its value);
//   * the request contract version of the request that created it;
//   * the fingerprint algorithm id (immutable: any change to canonicalization is a new id)
//     and the SHA-256 digest it produced over the canonical request without the token;
//   * its creation time (wall clock of the server that wrote it, Clock::WallMillis);
//   * the replayable result and the version of its schema.
//
// Comparison is record-directed: the caller computes the incoming request's digest with the
// algorithm the record names (a Fingerprinter), so a record written by an older algorithm is
// compared with that algorithm for as long as the record can live. A record whose format,
// contract, algorithm or result schema is unknown, whose digest is weak (not a full SHA-256)
// or whose timestamp is invalid fails closed: it is reported as an error, never as a match
// and never as absent, and the caller must neither execute the request nor overwrite it.
//
// Expiry is semantic: a record older than the lifetime (10 minutes) is treated as absent
// whether or not garbage collection removed it (the optional worker workers/token_gc.h).
//
// Thread-safety: TokenStore is immutable after construction; functions taking a Transaction
// use it from one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/result.h"
#include "kv/kv.h"
#include "kv/tuple.h"

namespace fdyno::store {

// Persisted constants: never renumber or reuse.
inline constexpr uint8_t kTokenFormatV1 = 1;
// Request contract versions (which request shape produced the fingerprint).
inline constexpr uint32_t kTokenContractTransactWriteItemsV1 = 1;  // DynamoDB_20120810
inline constexpr uint32_t kTokenContractExecuteTransactionV1 = 2;  // PartiQL statements
// Fingerprint algorithm ids. 0 is reserved and means "no usable fingerprint" (weak).
inline constexpr uint32_t kFingerprintWeak = 0;
inline constexpr uint32_t kFingerprintSha256CanonicalV1 = 1;  // SHA-256 of model canonical V1
// Result schema versions.
inline constexpr uint32_t kTokenResultSchemaV1 = 1;

inline constexpr size_t kSha256Bytes = 32;
inline constexpr std::chrono::milliseconds kTokenLifetime{10 * 60 * 1000};
// Payload bytes per value of a record (a result can be larger than one engine value).
inline constexpr size_t kTokenChunkBytes = 90'000;
inline constexpr uint32_t kMaxTokenChunks = 64;

// SHA-256 (OpenSSL) of `bytes`: 32 raw bytes.
std::string Sha256(std::string_view bytes);

// Who owns a token: the caller's account and the operation ("TransactWriteItems").
struct TokenKey {
  std::string account;
  std::string operation;
  std::string token;
};

struct TokenRecord {
  uint32_t contract_version = kTokenContractTransactWriteItemsV1;
  uint32_t fingerprint_algorithm = kFingerprintSha256CanonicalV1;
  std::string fingerprint;  // kSha256Bytes raw bytes
  int64_t created_ms = 0;   // > 0
  uint32_t result_schema = kTokenResultSchemaV1;
  std::string result;  // opaque to the store; its schema is result_schema

  bool operator==(const TokenRecord&) const = default;
};

// Computes the incoming request's digest with `algorithm`. Returns an error when the caller
// does not have that algorithm (the record then fails closed).
using Fingerprinter = std::function<Result<std::string>(uint32_t algorithm)>;

enum class TokenState {
  kAbsent,    // no record, or an expired one: execute, then write a new record
  kReplay,    // live record, same request: return its result, apply nothing
  kMismatch,  // live record, different request: IdempotentParameterMismatchException
};

struct TokenLookup {
  TokenState state = TokenState::kAbsent;
  std::optional<TokenRecord> record;  // set for kReplay and kMismatch
  bool expired_record = false;        // kAbsent because a record had expired
};

struct TokenOptions {
  std::chrono::milliseconds lifetime = kTokenLifetime;
  // Contract versions this process can compare against. A record naming another one fails
  // closed.
  uint32_t max_known_contract = kTokenContractExecuteTransactionV1;
  uint32_t max_known_result_schema = kTokenResultSchemaV1;
};

class TokenStore {
 public:
  // `subspace`: the database-wide token subspace (store/layout.h Tokens()).
  explicit TokenStore(kv::Subspace subspace, TokenOptions options = {});

  // The record's key: subspace + (account, operation, token), as bytes.
  std::string KeyOf(const TokenKey& key) const;

  // The record, nullopt when absent. The read conflicts with any concurrent writer of the same
  // token (non-snapshot), so two transactions cannot both find it absent and both commit.
  // A malformed record or unknown version is an InternalServerError (fail closed).
  Result<std::optional<TokenRecord>> Read(kv::Transaction& tx, const TokenKey& key) const;

  // Read, then classify against the incoming request (contract version and digest computed by
  // `fingerprint` with the algorithm the record names) at wall time now_ms.
  Result<TokenLookup> Check(kv::Transaction& tx, const TokenKey& key, uint32_t contract_version,
                            const Fingerprinter& fingerprint, int64_t now_ms) const;

  // Buffers `record` at `key`, replacing an absent or expired record and its chunks.
  // REQUIRES: record is well formed (Validate passes) and fits kMaxTokenChunks values.
  void Write(kv::Transaction& tx, const TokenKey& key, const TokenRecord& record) const;

  bool Expired(int64_t created_ms, int64_t now_ms) const;

  // The structural checks every stored record must pass (known versions, strong digest,
  // positive timestamp). Error: InternalServerError naming the problem.
  Status Validate(const TokenRecord& record) const;

  struct GcPass {
    int64_t scanned = 0;              // record heads examined
    int64_t deleted = 0;              // expired records cleared
    int64_t malformed = 0;            // records that fail closed; kept
    std::optional<std::string> next;  // resume key; nullopt: reached the end
  };
  // One bounded GC step in `tx`: examines up to max_scan record heads from `begin` (a key
  // returned as GcPass::next, or empty for the start) and clears the expired valid ones.
  // Malformed records are left in place.
  Result<GcPass> CollectExpired(kv::Transaction& tx, std::string_view begin, int max_scan,
                                int64_t now_ms) const;

  const kv::Subspace& subspace() const { return subspace_; }
  const TokenOptions& options() const { return options_; }

 private:
  Result<TokenRecord> Decode(kv::Transaction& tx, const std::string& key, std::string_view head,
                             bool snapshot) const;

  kv::Subspace subspace_;
  TokenOptions options_;
};

// The payload encoding (the bytes after the format byte, before chunking); exposed for tests
// that plant malformed records.
std::string EncodeTokenPayloadV1(const TokenRecord& record);

}  // namespace fdyno::store
