#include "store/items.h"

#include <cassert>

#include "kv/tuple.h"
#include "store/layout.h"

namespace fdyno::store {

namespace {

// Value kinds after the version byte. Persisted: never renumber.
constexpr uint8_t kWhole = 0;  // the entire image
constexpr uint8_t kHead = 1;   // u32 chunk count, u32 image length, first part
constexpr uint8_t kPart = 2;   // u32 chunk index (>= 1), part

void PutU32(std::string& out, uint32_t v) {
  for (int i = 3; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
uint32_t GetU32(std::string_view s) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(s[i]);
  return v;
}

Error Corrupt(std::string_view what) {
  return Error::Internal("corrupt stored item: " + std::string(what));
}

std::string ChunkKey(std::string_view key, uint32_t index) {
  return std::string(key) + kv::Tuple{static_cast<int64_t>(index)}.Pack();
}

std::string ChunkRangeBegin(std::string_view key) { return std::string(key) + '\x00'; }

struct Head {
  uint8_t kind = kWhole;
  uint32_t chunks = 1;
  uint32_t length = 0;
  std::string_view data;
};

Result<Head> ParseHead(std::string_view value) {
  if (value.size() < 2) return Corrupt("short value");
  if (static_cast<uint8_t>(value[0]) != kItemFormatVersion) {
    return Error::Internal("stored item has unknown format version " +
                           std::to_string(static_cast<uint8_t>(value[0])));
  }
  Head h;
  h.kind = static_cast<uint8_t>(value[1]);
  if (h.kind == kWhole) {
    h.data = value.substr(2);
    h.length = static_cast<uint32_t>(h.data.size());
    return h;
  }
  if (h.kind != kHead || value.size() < 10) return Corrupt("bad head");
  h.chunks = GetU32(value.substr(2));
  h.length = GetU32(value.substr(6));
  h.data = value.substr(10);
  if (h.chunks < 2 || h.chunks > kMaxItemChunks || h.data.size() > h.length) {
    return Corrupt("bad chunk count");
  }
  return h;
}

// Appends part `index` of a split item to image.
Status AppendPart(std::string_view value, uint32_t index, std::string& image) {
  if (value.size() < 6 || static_cast<uint8_t>(value[0]) != kItemFormatVersion ||
      static_cast<uint8_t>(value[1]) != kPart) {
    return Corrupt("bad chunk");
  }
  if (GetU32(value.substr(2)) != index) return Corrupt("chunk out of sequence");
  image.append(value.substr(6));
  return Status::Ok();
}

}  // namespace

uint32_t PartitionHash(std::string_view encoded_hash_key) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : encoded_hash_key) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ULL;
  }
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebULL;
  h ^= h >> 31;
  return static_cast<uint32_t>(h >> 32);
}

std::string ItemKey(int64_t table_id, std::string_view encoded_hash,
                    const std::string* encoded_range) {
  // layout::Items(table_id).Pack({hash, encoded_hash[, encoded_range]}), appended element by
  // element: every item request builds a key, and the Tuple costs allocations.
  std::string key = layout::TablePartPrefix(table_id, layout::TablePart::kItems);
  key.reserve(key.size() + 10 + encoded_hash.size() + (encoded_range ? encoded_range->size() : 0));
  kv::AppendPackedInt(&key, static_cast<int64_t>(PartitionHash(encoded_hash)));
  kv::AppendPackedBytes(&key, encoded_hash);
  if (encoded_range != nullptr) kv::AppendPackedBytes(&key, *encoded_range);
  return key;
}

bool IsItemPart(std::string_view value) {
  return value.size() >= 2 && static_cast<uint8_t>(value[1]) == kPart;
}

std::string ItemRangeEnd(std::string_view key) { return std::string(key) + '\xff'; }

Result<std::optional<StoredItem>> ReadItem(kv::Transaction& tx, std::string_view key,
                                           bool snapshot) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> value, tx.Get(key, snapshot));
  if (!value) return std::optional<StoredItem>();
  FDYNO_ASSIGN_OR_RETURN(Head head, ParseHead(*value));
  StoredItem item;
  if (head.kind == kWhole) {
    // Drop the two header bytes in place rather than copying the image.
    value->erase(0, 2);
    item.image = std::move(*value);
    return std::optional<StoredItem>(std::move(item));
  }
  item.chunk_count = head.chunks;
  item.image.reserve(head.length);
  item.image.append(head.data);
  kv::RangeOptions options;
  options.snapshot = snapshot;
  FDYNO_ASSIGN_OR_RETURN(kv::RangeResult parts,
                         tx.GetRange(ChunkRangeBegin(key), ItemRangeEnd(key), options));
  if (parts.kvs.size() != head.chunks - 1) return Corrupt("missing chunks");
  for (uint32_t i = 1; i < head.chunks; ++i) {
    const kv::KeyValue& kv = parts.kvs[i - 1];
    if (kv.key != ChunkKey(key, i)) return Corrupt("chunk key out of sequence");
    FDYNO_RETURN_IF_ERROR(AppendPart(kv.value, i, item.image));
  }
  if (item.image.size() != head.length) return Corrupt("length mismatch");
  return std::optional<StoredItem>(std::move(item));
}

uint32_t WriteItem(kv::Transaction& tx, std::string_view key, std::string_view image,
                   const OldItem& old) {
  assert(image.size() <= kItemChunkBytes * kMaxItemChunks);
  uint32_t chunks =
      image.size() <= kItemChunkBytes
          ? 1
          : static_cast<uint32_t>((image.size() + kItemChunkBytes - 1) / kItemChunkBytes);
  if (old.unknown || (old.exists && old.chunk_count > 1)) {
    tx.ClearRange(ChunkRangeBegin(key), ItemRangeEnd(key));
  }
  std::string value;
  if (chunks == 1) {
    value.reserve(2 + image.size());
    value.push_back(static_cast<char>(kItemFormatVersion));
    value.push_back(static_cast<char>(kWhole));
    value.append(image);
    tx.Set(key, value);
    return 1;
  }
  value.reserve(10 + kItemChunkBytes);
  value.push_back(static_cast<char>(kItemFormatVersion));
  value.push_back(static_cast<char>(kHead));
  PutU32(value, chunks);
  PutU32(value, static_cast<uint32_t>(image.size()));
  value.append(image.substr(0, kItemChunkBytes));
  tx.Set(key, value);
  for (uint32_t i = 1; i < chunks; ++i) {
    std::string part;
    part.reserve(6 + kItemChunkBytes);
    part.push_back(static_cast<char>(kItemFormatVersion));
    part.push_back(static_cast<char>(kPart));
    PutU32(part, i);
    part.append(image.substr(static_cast<size_t>(i) * kItemChunkBytes, kItemChunkBytes));
    tx.Set(ChunkKey(key, i), part);
  }
  return chunks;
}

void DeleteItem(kv::Transaction& tx, std::string_view key, const OldItem& old) {
  if (old.unknown || (old.exists && old.chunk_count > 1)) {
    tx.ClearRange(key, ItemRangeEnd(key));
  } else if (old.exists) {
    tx.Clear(key);
  }
}

Result<std::optional<std::string_view>> WholeImage(std::string_view value) {
  FDYNO_ASSIGN_OR_RETURN(Head head, ParseHead(value));
  if (head.kind != kWhole) return std::optional<std::string_view>();
  return std::optional<std::string_view>(head.data);
}

std::string ItemAssembler::next_part_key() const { return ChunkKey(key_, next_index_); }

Result<std::optional<ItemAssembler::Assembled>> ItemAssembler::Add(const kv::KeyValue& kv) {
  if (remaining_ > 0) {
    if (kv.key != ChunkKey(key_, next_index_)) return Corrupt("chunk key out of sequence");
    FDYNO_RETURN_IF_ERROR(AppendPart(kv.value, next_index_, image_));
    ++next_index_;
    if (--remaining_ > 0) return std::optional<Assembled>();
    if (image_.size() != length_) return Corrupt("length mismatch");
    return std::optional<Assembled>(Assembled{std::move(key_), std::move(image_)});
  }
  FDYNO_ASSIGN_OR_RETURN(Head head, ParseHead(kv.value));
  if (head.kind == kWhole) {
    return std::optional<Assembled>(Assembled{kv.key, std::string(head.data)});
  }
  key_ = kv.key;
  image_.assign(head.data);
  image_.reserve(head.length);
  length_ = head.length;
  next_index_ = 1;
  remaining_ = head.chunks - 1;
  return std::optional<Assembled>();
}

}  // namespace fdyno::store
