#include "store/item_collections.h"

#include <cstring>
#include <optional>

#include "kv/tuple.h"
#include "model/item_size.h"
#include "model/key_codec.h"
#include "store/indexes.h"
#include "store/layout.h"

namespace fdyno::store {
namespace {

// The stored value as a signed integer; nullopt when absent.
Result<std::optional<int64_t>> ReadRaw(kv::Transaction& tx, std::string_view key) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> value, tx.Get(key, /*snapshot=*/true));
  if (!value) return std::optional<int64_t>();
  std::optional<int64_t> size = kv::DecodeCounter(*value);
  if (!size) {
    return Error::Internal("item collection size record is malformed (" +
                           std::to_string(value->size()) + " bytes)");
  }
  return size;
}

Status AddReadConflict(kv::Transaction& tx, const std::string& key) {
  return tx.AddConflictRange(key, key + std::string(1, '\0'), kv::ConflictRangeType::kRead);
}

}  // namespace

bool HasItemCollections(const TableInfo& table) { return !table.local_indexes.empty(); }

uint64_t ItemCollectionBytes(const TableInfo& table, const model::Item& item) {
  if (!HasItemCollections(table)) return 0;
  uint64_t bytes = model::ItemSize(item);
  for (const SecondaryIndex& index : table.local_indexes) {
    if (!IndexIsMaintained(index)) continue;
    std::optional<IndexEntry> entry = ComputeIndexEntry(table, index, item);
    if (entry) bytes += model::ItemSize(entry->image) + kLocalIndexEntryOverheadBytes;
  }
  return bytes;
}

std::string ItemCollectionSizeKey(int64_t table_id, std::string_view encoded_hash) {
  kv::Tuple t;
  t.AddBytes(encoded_hash);
  return layout::ItemCollections(table_id).Pack(t);
}

Result<uint64_t> ReadItemCollectionSize(kv::Transaction& tx, int64_t table_id,
                                        std::string_view encoded_hash) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<int64_t> raw,
                         ReadRaw(tx, ItemCollectionSizeKey(table_id, encoded_hash)));
  return raw && *raw > 0 ? static_cast<uint64_t>(*raw) : uint64_t{0};
}

std::pair<double, double> SizeEstimateRangeGB(uint64_t bytes) {
  const double lower = static_cast<double>(bytes >> 30);
  return {lower, lower + 1.0};
}

ItemCollectionRef CollectionOf(const TableInfo& table, const model::Item& item_or_key) {
  return ItemCollectionRef{table.id,
                           model::EncodeKeyValue(item_or_key.at(table.key_schema.hash.name))};
}

void ItemCollectionChanges::Record(const TableInfo& table, const model::Item* old_item,
                                   const model::Item* new_item) {
  if (!HasItemCollections(table)) return;
  const model::Item& any = new_item != nullptr ? *new_item : *old_item;
  int64_t delta = 0;
  if (new_item != nullptr) delta += static_cast<int64_t>(ItemCollectionBytes(table, *new_item));
  if (old_item != nullptr) delta -= static_cast<int64_t>(ItemCollectionBytes(table, *old_item));
  entries_[CollectionOf(table, any)].delta += delta;
}

Result<std::vector<ItemCollectionRef>> ItemCollectionChanges::Apply(kv::Transaction& tx,
                                                                    uint64_t limit_bytes) {
  std::vector<ItemCollectionRef> exceeded;
  struct Planned {
    const ItemCollectionRef* ref;
    Entry* entry;
    std::string key;
    std::optional<int64_t> raw;
  };
  std::vector<Planned> planned;
  for (auto& [ref, entry] : entries_) {
    Planned p{&ref, &entry, ItemCollectionSizeKey(ref.table_id, ref.encoded_hash), {}};
    FDYNO_ASSIGN_OR_RETURN(p.raw, ReadRaw(tx, p.key));
    entry.before = p.raw && *p.raw > 0 ? static_cast<uint64_t>(*p.raw) : 0;
    if (entry.delta > 0 && entry.before + static_cast<uint64_t>(entry.delta) > limit_bytes) {
      exceeded.push_back(ref);
    }
    planned.push_back(std::move(p));
  }
  if (!exceeded.empty()) return exceeded;

  const uint64_t margin = ItemCollectionExactMargin(limit_bytes);
  for (Planned& p : planned) {
    const int64_t delta = p.entry->delta;
    const int64_t before = static_cast<int64_t>(p.entry->before);
    const int64_t after = before + delta;
    if (after <= 0) {
      // Empty: clear the key. The read conflict makes a concurrent write to this collection
      // (whose Add the Clear would erase) abort this transaction instead.
      if (p.raw) {
        FDYNO_RETURN_IF_ERROR(AddReadConflict(tx, p.key));
        tx.Clear(p.key);
      }
      continue;
    }
    if (p.raw && *p.raw < 0) {
      // Cannot happen with this code's writes; repair rather than add to a negative count.
      FDYNO_RETURN_IF_ERROR(AddReadConflict(tx, p.key));
      tx.Set(p.key, kv::EncodeCounter(after));
      continue;
    }
    if (delta == 0) continue;
    if (delta > 0 && static_cast<uint64_t>(after) + margin > limit_bytes) {
      FDYNO_RETURN_IF_ERROR(AddReadConflict(tx, p.key));
    }
    tx.AtomicOp(kv::MutationType::kAdd, p.key, kv::EncodeCounter(delta));
  }
  return exceeded;
}

Result<uint64_t> ItemCollectionChanges::SizeAfter(kv::Transaction& tx,
                                                  const ItemCollectionRef& ref) const {
  auto it = entries_.find(ref);
  if (it == entries_.end()) return ReadItemCollectionSize(tx, ref.table_id, ref.encoded_hash);
  int64_t after = static_cast<int64_t>(it->second.before) + it->second.delta;
  return after > 0 ? static_cast<uint64_t>(after) : uint64_t{0};
}

int64_t ItemCollectionChanges::Delta(const ItemCollectionRef& ref) const {
  auto it = entries_.find(ref);
  return it == entries_.end() ? 0 : it->second.delta;
}

}  // namespace fdyno::store
