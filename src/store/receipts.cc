#include "store/receipts.h"

#include <atomic>
#include <random>

#include "base/bytes.h"

namespace fdyno::store {

namespace {

Error Corrupt(std::string_view what) {
  return Error::Internal("corrupt operation receipt: " + std::string(what));
}

bool KnownKind(uint8_t k) { return k >= 1 && k <= 6; }

constexpr uint8_t kHasAttributes = 0x01;
// The v2 header: version, kind, created_ms.
constexpr size_t kInlineHeaderBytes = 1 + 1 + 8;
// The largest v2 value; larger results go chunked.
constexpr size_t kMaxInlineValueBytes = kv::kMaxValueBytes;
// Bounds the chunk count a reader accepts (a receipt is at most a few MB).
constexpr uint32_t kMaxReceiptChunks = 256;

}  // namespace

OperationId OperationId::New(const Clock& clock) {
  thread_local std::mt19937_64 rng([] {
    std::random_device rd;
    std::seed_seq seq{rd(), rd(), rd(), rd()};
    return std::mt19937_64(seq);
  }());
  OperationId id;
  // The first half grows with every id this process allocates, from the wall clock in
  // nanoseconds at the first one, so receipt keys are written in nearly increasing order (the
  // embedded engine inserts them next to the previous one); the random second half keeps ids
  // of different processes apart.
  static std::atomic<uint64_t> sequence{static_cast<uint64_t>(clock.WallMillis()) * 1'000'000};
  id.created_ms = clock.WallMillis();
  id.nonce.reserve(16);
  PutU64(id.nonce, sequence.fetch_add(1, std::memory_order_relaxed));
  PutU64(id.nonce, rng());
  return id;
}

std::string EncodeReceiptResult(const ReceiptResult& r) {
  std::string out;
  out.reserve(1 + 16 + 8 + (r.attributes ? r.attributes->size() : 0) + r.extra.size());
  out.push_back(static_cast<char>(r.attributes ? kHasAttributes : 0));
  PutU64(out, r.old_size_bytes);
  PutU64(out, r.new_size_bytes);
  if (r.attributes) {
    PutU32(out, static_cast<uint32_t>(r.attributes->size()));
    out += *r.attributes;
  }
  PutU32(out, static_cast<uint32_t>(r.extra.size()));
  out += r.extra;
  return out;
}

Result<ReceiptResult> DecodeReceiptResult(ReceiptKind kind, std::string_view payload) {
  ByteReader in(payload);
  ReceiptResult r;
  r.kind = kind;
  uint8_t flags = 0;
  if (!in.U8(flags) || (flags & ~kHasAttributes) != 0) return Corrupt("bad result flags");
  if (!in.U64(r.old_size_bytes) || !in.U64(r.new_size_bytes)) return Corrupt("short sizes");
  std::string_view bytes;
  uint32_t n = 0;
  if (flags & kHasAttributes) {
    if (!in.U32(n) || !in.Bytes(n, bytes)) return Corrupt("short attributes");
    r.attributes = std::string(bytes);
  }
  if (!in.U32(n) || !in.Bytes(n, bytes)) return Corrupt("short extra");
  r.extra = std::string(bytes);
  if (!in.rest().empty()) return Corrupt("trailing bytes");
  return r;
}

ReceiptStore::ReceiptStore(kv::Subspace subspace, ReceiptOptions options)
    : subspace_(std::move(subspace)), options_(options) {}

int64_t ReceiptStore::BucketOf(int64_t created_ms) const {
  int64_t width = options_.bucket.count();
  return created_ms >= 0 ? created_ms / width : 0;
}

std::string ReceiptStore::KeyOf(const OperationId& id) const {
  return subspace_.Pack(kv::Tuple{BucketOf(id.created_ms), kv::Bytes{id.nonce}});
}

void ReceiptStore::Write(kv::Transaction& tx, const OperationId& id,
                         const ReceiptResult& result) const {
  bool small_kind = result.kind == ReceiptKind::kPutItem || result.kind == ReceiptKind::kDeleteItem;
  uint8_t format = kReceiptFormatChunked;
  if (small_kind) {
    size_t payload =
        1 + 16 + 4 + result.extra.size() + (result.attributes ? 4 + result.attributes->size() : 0);
    if (kInlineHeaderBytes + payload <= kMaxInlineValueBytes) format = kReceiptFormatInline;
  }
  WriteFormat(tx, id, result, format);
}

void ReceiptStore::WriteFormat(kv::Transaction& tx, const OperationId& id,
                               const ReceiptResult& result, uint8_t format) const {
  std::string key = KeyOf(id);
  std::string payload = EncodeReceiptResult(result);
  std::string value;
  value.push_back(static_cast<char>(format));
  value.push_back(static_cast<char>(result.kind));
  PutU64(value, static_cast<uint64_t>(id.created_ms));
  if (format == kReceiptFormatInline) {
    value += payload;
    tx.Set(key, value);
    return;
  }
  uint32_t chunks =
      static_cast<uint32_t>((payload.size() + kReceiptChunkBytes - 1) / kReceiptChunkBytes);
  PutU32(value, chunks);
  PutU32(value, static_cast<uint32_t>(payload.size()));
  tx.Set(key, value);
  kv::Subspace chunk_space = kv::Subspace::FromRawPrefix(key);
  for (uint32_t i = 0; i < chunks; ++i) {
    std::string chunk;
    chunk.push_back(static_cast<char>(kReceiptFormatChunked));
    chunk.append(payload, static_cast<size_t>(i) * kReceiptChunkBytes, kReceiptChunkBytes);
    tx.Set(chunk_space.Pack(kv::Tuple{static_cast<int64_t>(i)}), chunk);
  }
}

Result<std::optional<Receipt>> ReceiptStore::Read(kv::Transaction& tx,
                                                  const OperationId& id) const {
  std::string key = KeyOf(id);
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> stored, tx.Get(key));
  if (!stored.has_value()) return std::optional<Receipt>();
  const std::string head = std::move(stored).value();
  ByteReader in(head);
  uint8_t version = 0, kind = 0;
  uint64_t created = 0;
  if (!in.U8(version)) return Corrupt("empty value");
  if (version != kReceiptFormatChunked && version != kReceiptFormatInline) {
    return Error::Internal("operation receipt has unknown format version " +
                           std::to_string(version));
  }
  if (!in.U8(kind) || !KnownKind(kind)) return Corrupt("unknown operation kind");
  if (!in.U64(created)) return Corrupt("short header");
  if (static_cast<int64_t>(created) != id.created_ms) return Corrupt("creation time mismatch");
  Receipt receipt;
  receipt.format_version = version;
  receipt.created_ms = static_cast<int64_t>(created);
  if (version == kReceiptFormatInline) {
    FDYNO_ASSIGN_OR_RETURN(receipt.result,
                           DecodeReceiptResult(static_cast<ReceiptKind>(kind), in.rest()));
    return std::optional<Receipt>(std::move(receipt));
  }
  uint32_t chunks = 0, length = 0;
  if (!in.U32(chunks) || !in.U32(length) || !in.rest().empty()) return Corrupt("bad v1 header");
  if (chunks > kMaxReceiptChunks || static_cast<uint64_t>(chunks) * kReceiptChunkBytes < length ||
      (chunks > 0 && static_cast<uint64_t>(chunks - 1) * kReceiptChunkBytes >= length)) {
    return Corrupt("bad v1 chunk count");
  }
  kv::Subspace chunk_space = kv::Subspace::FromRawPrefix(key);
  auto [begin, end] = chunk_space.Range();
  FDYNO_ASSIGN_OR_RETURN(kv::RangeResult range, tx.GetRange(begin, end));
  if (range.kvs.size() != chunks) return Corrupt("missing chunks");
  std::string payload;
  payload.reserve(length);
  for (uint32_t i = 0; i < chunks; ++i) {
    const kv::KeyValue& kv = range.kvs[i];
    if (kv.key != chunk_space.Pack(kv::Tuple{static_cast<int64_t>(i)})) {
      return Corrupt("chunk key out of sequence");
    }
    if (kv.value.empty() || static_cast<uint8_t>(kv.value[0]) != kReceiptFormatChunked) {
      return Corrupt("chunk version");
    }
    payload.append(kv.value, 1);
  }
  if (payload.size() != length) return Corrupt("length mismatch");
  FDYNO_ASSIGN_OR_RETURN(receipt.result,
                         DecodeReceiptResult(static_cast<ReceiptKind>(kind), payload));
  return std::optional<Receipt>(std::move(receipt));
}

bool ReceiptStore::Expired(int64_t created_ms, int64_t now_ms) const {
  return now_ms - created_ms >= options_.ttl.count();
}

bool ReceiptStore::ClearExpired(kv::Transaction& tx, int64_t now_ms) const {
  // Every receipt in a bucket below `boundary` was created before boundary * width <=
  // now - ttl, so it has expired.
  int64_t boundary = BucketOf(now_ms - options_.ttl.count());
  int64_t seen = cleared_below_.load(std::memory_order_relaxed);
  if (boundary <= seen) return false;
  if (!cleared_below_.compare_exchange_strong(seen, boundary)) return false;
  tx.ClearRange(subspace_.key(), subspace_.Pack(kv::Tuple{boundary}));
  return true;
}

}  // namespace fdyno::store
