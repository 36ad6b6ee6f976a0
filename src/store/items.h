// Item storage: how one item's encoded image (model item codec) is kept under its item key.
// Format: docs/format/items.md.
//
// An image of at most kItemChunkBytes (one engine value, kv::kMaxValueBytes = 100,000 B, less
// 16 B for the header) is one value at the item key. A larger image is split: the item key
// holds a head value (chunk count, total length, first part) and the other parts sit at item
// key + packed tuple (i), i >= 1, so the whole item occupies the key range [item key, item
// key + 0xFF) and nothing else does (item keys are packed tuples of fixed arity, never a prefix
// of one another). Secondary index entries (store/indexes.h) are kept the same way under their
// entry keys.
//
// Every write replaces the whole representation: callers pass what they read of the old one,
// so the parts of an old split image are cleared in the same transaction. Base items are
// written only by store::Mutation (store/mutation.h), index entries by store/indexes.h.
//
// Thread-safety: free functions over a Transaction used by one thread; ItemAssembler is a
// value used by one thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "kv/kv.h"

namespace fdyno::store {

// Item value format version. Persisted: never renumber.
inline constexpr uint8_t kItemFormatVersion = 1;
// Bytes of image per value (the rest of a value is its header).
inline constexpr size_t kItemChunkBytes = kv::kMaxValueBytes - 16;
// Bounds the chunks of one item (DynamoDB items are at most 400 KB).
inline constexpr uint32_t kMaxItemChunks = 64;

// The 32-bit hash of an encoded partition key (model::EncodeKeyValue) that leads every item
// key: FNV-1a 64 over the bytes, then splitmix64's finalizer, upper 32 bits. Spreads
// partitions evenly so Scan order looks like DynamoDB's and parallel-scan segments are hash
// ranges. Persisted in every item key: never change.
uint32_t PartitionHash(std::string_view encoded_hash_key);

// The key of an item: layout::Items(table_id) + (PartitionHash(hash), bytes hash, bytes
// range), the range element only for tables with a sort key. Arguments are key-codec
// encodings (model::EncodeKeyValue).
std::string ItemKey(int64_t table_id, std::string_view encoded_hash,
                    const std::string* encoded_range);

// An item as stored.
struct StoredItem {
  std::string image;         // the item codec bytes
  uint32_t chunk_count = 1;  // values it occupies (1: not split)
};

// What a writer knows about the representation it replaces.
struct OldItem {
  bool exists = false;
  uint32_t chunk_count = 0;
  // Not read (blind write): stale chunks are cleared with a ClearRange to be safe.
  bool unknown = false;

  static OldItem Of(const std::optional<StoredItem>& stored) {
    return stored ? OldItem{true, stored->chunk_count, false} : OldItem{};
  }
  static OldItem Unknown() { return OldItem{false, 0, true}; }
};

// Reads the item at `key`; nullopt when absent. A non-snapshot read conflicts on the item.
// Malformed values or an unknown format version are InternalServerError (fail closed).
Result<std::optional<StoredItem>> ReadItem(kv::Transaction& tx, std::string_view key,
                                           bool snapshot = false);

// Buffers `image` as the item at `key`, replacing `old`. Returns the chunk count written.
// REQUIRES: image.size() <= kItemChunkBytes * kMaxItemChunks.
uint32_t WriteItem(kv::Transaction& tx, std::string_view key, std::string_view image,
                   const OldItem& old);

// Buffers the removal of the item at `key` (no-op when `old` says it is absent).
void DeleteItem(kv::Transaction& tx, std::string_view key, const OldItem& old);

// Whether `value` is part i >= 1 of a split image (not an item's whole value or head): a range
// read over item keys skips parts and reads a split item at its head.
bool IsItemPart(std::string_view value);

// The key range an item occupies: [key, ItemRangeEnd(key)).
std::string ItemRangeEnd(std::string_view key);

// The item image in a head value read from an item key when the item is stored whole, as a
// view into `value`; nullopt when it is split (ReadItem assembles it). A malformed value is
// InternalServerError. Query and Scan use it to read each whole item without copying it.
Result<std::optional<std::string_view>> WholeImage(std::string_view value);

// Reassembles items from a forward range read over item keys. Feed key-values in key order;
// each complete item is returned with its key. A range read that stopped inside a split item
// leaves it pending(): resume the next read at pending_key(). store::ItemCursor
// (store/item_cursor.h), the reader of every item of a range in key order, and
// store::SplitItems, which serves Query and Scan's reads in either direction, are built on it.
class ItemAssembler {
 public:
  struct Assembled {
    std::string key;
    std::string image;
  };
  // Consumes one key-value; returns a complete item when this value completes one. Values
  // out of sequence or malformed are InternalServerError.
  Result<std::optional<Assembled>> Add(const kv::KeyValue& kv);
  bool pending() const { return remaining_ > 0; }
  const std::string& pending_key() const { return key_; }
  // The key of the part the pending item needs next.
  std::string next_part_key() const;

 private:
  std::string key_;
  std::string image_;
  uint32_t next_index_ = 0;
  uint32_t remaining_ = 0;
  uint32_t length_ = 0;
};

}  // namespace fdyno::store
