#include "store/tokens.h"

#include <openssl/sha.h>

#include "base/bytes.h"

namespace fdyno::store {

namespace {

Error Corrupt(std::string_view what) {
  return Error::Internal("The idempotency record of this ClientRequestToken cannot be used (" +
                         std::string(what) + "); the request was not executed")
      .WithCause(ErrorCause::kTokenRecordUnusable);
}

// Head value: format byte, u32 chunk count, first part. Chunk value: format byte, part.
constexpr size_t kHeadHeaderBytes = 1 + 4;
constexpr size_t kChunkHeaderBytes = 1;

std::string ChunkKey(const std::string& key, uint32_t i) {
  return key + kv::Tuple{static_cast<int64_t>(i)}.Pack();
}

// Every key of a record (head and chunks) lies in [key, key + 0xFF): record keys are packed
// tuples of three byte strings, never a prefix of one another.
std::string RecordEnd(const std::string& key) { return key + '\xff'; }

}  // namespace

std::string Sha256(std::string_view bytes) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest);
  return std::string(reinterpret_cast<const char*>(digest), sizeof(digest));
}

std::string EncodeTokenPayloadV1(const TokenRecord& record) {
  std::string out;
  out.reserve(40 + record.fingerprint.size() + record.result.size());
  PutU32(out, record.contract_version);
  PutU32(out, record.fingerprint_algorithm);
  PutU32(out, static_cast<uint32_t>(record.fingerprint.size()));
  out += record.fingerprint;
  PutU64(out, static_cast<uint64_t>(record.created_ms));
  PutU32(out, record.result_schema);
  PutU32(out, static_cast<uint32_t>(record.result.size()));
  out += record.result;
  return out;
}

TokenStore::TokenStore(kv::Subspace subspace, TokenOptions options)
    : subspace_(std::move(subspace)), options_(options) {}

std::string TokenStore::KeyOf(const TokenKey& key) const {
  kv::Tuple t;
  t.AddBytes(key.account).AddBytes(key.operation).AddBytes(key.token);
  return subspace_.Pack(t);
}

bool TokenStore::Expired(int64_t created_ms, int64_t now_ms) const {
  return now_ms - created_ms >= options_.lifetime.count();
}

Status TokenStore::Validate(const TokenRecord& r) const {
  if (r.contract_version == 0 || r.contract_version > options_.max_known_contract) {
    return Corrupt("unknown request contract version " + std::to_string(r.contract_version));
  }
  if (r.fingerprint_algorithm == kFingerprintWeak) return Corrupt("weak fingerprint");
  if (r.fingerprint.size() != kSha256Bytes) {
    return Corrupt("weak fingerprint of " + std::to_string(r.fingerprint.size()) + " bytes");
  }
  if (r.created_ms <= 0) return Corrupt("invalid creation time");
  if (r.result_schema == 0 || r.result_schema > options_.max_known_result_schema) {
    return Corrupt("unknown result schema version " + std::to_string(r.result_schema));
  }
  return Status::Ok();
}

Result<TokenRecord> TokenStore::Decode(kv::Transaction& tx, const std::string& key,
                                       std::string_view head, bool snapshot) const {
  if (head.empty()) return Corrupt("empty value");
  if (static_cast<uint8_t>(head[0]) != kTokenFormatV1) {
    return Corrupt("unknown format version " + std::to_string(static_cast<uint8_t>(head[0])));
  }
  ByteReader h(head.substr(1));
  uint32_t chunks = 0;
  if (!h.U32(chunks) || chunks == 0 || chunks > kMaxTokenChunks) return Corrupt("chunk count");
  std::string payload(head.substr(kHeadHeaderBytes));
  for (uint32_t i = 1; i < chunks; ++i) {
    FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> part, tx.Get(ChunkKey(key, i), snapshot));
    if (!part || part->empty() || static_cast<uint8_t>((*part)[0]) != kTokenFormatV1) {
      return Corrupt("missing or malformed chunk " + std::to_string(i));
    }
    payload.append(*part, kChunkHeaderBytes);
  }
  ByteReader r(payload);
  TokenRecord rec;
  uint32_t digest_len = 0, result_len = 0;
  uint64_t created = 0;
  std::string_view digest, result;
  if (!r.U32(rec.contract_version) || !r.U32(rec.fingerprint_algorithm) || !r.U32(digest_len) ||
      !r.Bytes(digest_len, digest) || !r.U64(created) || !r.U32(rec.result_schema) ||
      !r.U32(result_len) || !r.Bytes(result_len, result) || !r.done()) {
    return Corrupt("truncated or trailing bytes");
  }
  rec.fingerprint = std::string(digest);
  rec.created_ms = static_cast<int64_t>(created);
  rec.result = std::string(result);
  FDYNO_RETURN_IF_ERROR(Validate(rec));
  return rec;
}

Result<std::optional<TokenRecord>> TokenStore::Read(kv::Transaction& tx,
                                                    const TokenKey& key) const {
  std::string k = KeyOf(key);
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> head, tx.Get(k));
  if (!head) return std::optional<TokenRecord>();
  FDYNO_ASSIGN_OR_RETURN(TokenRecord rec, Decode(tx, k, *head, /*snapshot=*/false));
  return std::optional<TokenRecord>(std::move(rec));
}

Result<TokenLookup> TokenStore::Check(kv::Transaction& tx, const TokenKey& key,
                                      uint32_t contract_version, const Fingerprinter& fingerprint,
                                      int64_t now_ms) const {
  FDYNO_ASSIGN_OR_RETURN(std::optional<TokenRecord> rec, Read(tx, key));
  TokenLookup out;
  if (!rec) return out;
  if (Expired(rec->created_ms, now_ms)) {
    out.expired_record = true;
    return out;
  }
  if (rec->contract_version != contract_version) {
    // No reviewed bridge exists between different contract versions: the pair is
    // incompatible and key reuse across it is rejected.
    out.state = TokenState::kMismatch;
  } else {
    // Record-directed: the algorithm the record names, or fail closed.
    FDYNO_ASSIGN_OR_RETURN(std::string digest, fingerprint(rec->fingerprint_algorithm));
    out.state = digest == rec->fingerprint ? TokenState::kReplay : TokenState::kMismatch;
  }
  out.record = std::move(rec);
  return out;
}

void TokenStore::Write(kv::Transaction& tx, const TokenKey& key, const TokenRecord& record) const {
  std::string k = KeyOf(key);
  tx.ClearRange(k, RecordEnd(k));
  std::string payload = EncodeTokenPayloadV1(record);
  size_t first = std::min(payload.size(), kTokenChunkBytes);
  size_t chunks = 1 + (payload.size() - first + kTokenChunkBytes - 1) / kTokenChunkBytes;
  std::string head;
  head.push_back(static_cast<char>(kTokenFormatV1));
  PutU32(head, static_cast<uint32_t>(chunks));
  head.append(payload, 0, first);
  tx.Set(k, head);
  size_t pos = first;
  for (uint32_t i = 1; pos < payload.size(); ++i) {
    size_t n = std::min(kTokenChunkBytes, payload.size() - pos);
    std::string v(1, static_cast<char>(kTokenFormatV1));
    v.append(payload, pos, n);
    tx.Set(ChunkKey(k, i), v);
    pos += n;
  }
}

Result<TokenStore::GcPass> TokenStore::CollectExpired(kv::Transaction& tx, std::string_view begin,
                                                      int max_scan, int64_t now_ms) const {
  auto [range_begin, range_end] = subspace_.Range();
  std::string from = begin.empty() ? range_begin : std::string(begin);
  GcPass pass;
  kv::RangeOptions ro;
  ro.limit = max_scan > 0 ? max_scan : 1;
  ro.snapshot = true;
  FDYNO_ASSIGN_OR_RETURN(kv::RangeResult rr, tx.GetRange(from, range_end, ro));
  for (const kv::KeyValue& kvp : rr.kvs) {
    Result<kv::Tuple> t = subspace_.Unpack(kvp.key);
    if (t.ok() && t->size() == 4) continue;  // a chunk of a record seen through its head
    ++pass.scanned;
    if (!t.ok() || t->size() != 3) {
      ++pass.malformed;
      continue;
    }
    Result<TokenRecord> rec = Decode(tx, kvp.key, kvp.value, /*snapshot=*/true);
    if (!rec.ok()) {
      ++pass.malformed;  // fails closed: kept for an operator to inspect
      continue;
    }
    if (!Expired(rec->created_ms, now_ms)) continue;
    // Conflict with a writer that replaces the record concurrently, so a fresh record is
    // never cleared on the strength of a stale read.
    FDYNO_RETURN_IF_ERROR(
        tx.AddConflictRange(kvp.key, kvp.key + '\0', kv::ConflictRangeType::kRead));
    tx.ClearRange(kvp.key, RecordEnd(kvp.key));
    ++pass.deleted;
  }
  if (rr.more && !rr.kvs.empty()) pass.next = rr.kvs.back().key + '\0';
  return pass;
}

}  // namespace fdyno::store
