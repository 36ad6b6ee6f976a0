#include "store/item_counts.h"

#include <optional>
#include <utility>

#include "kv/tuple.h"
#include "model/key_codec.h"
#include "store/indexes.h"
#include "store/items.h"
#include "store/layout.h"
#include "store/vector_index.h"

namespace fdyno::store {
namespace {

Result<int64_t> ParseLe64(std::string_view value, const char* what) {
  std::optional<int64_t> v = kv::DecodeCounter(value);
  if (!v) {
    return Error::Internal(std::string(what) + " is malformed (" + std::to_string(value.size()) +
                           " bytes)");
  }
  return *v;
}

// The part of an item key after the table's items prefix (the journal keys reuse it).
std::string_view ItemKeySuffix(int64_t table_id, std::string_view item_key) {
  const std::string prefix = layout::Items(table_id).key();
  return item_key.substr(std::min(prefix.size(), item_key.size()));
}

std::string StorageKeyOf(const TableInfo& table, const model::Item& item) {
  std::string h = model::EncodeKeyValue(item.at(table.key_schema.hash.name));
  if (!table.key_schema.range) return ItemKey(table.id, h, nullptr);
  std::string r = model::EncodeKeyValue(item.at(table.key_schema.range->name));
  return ItemKey(table.id, h, &r);
}

}  // namespace

bool HasIndexEntry(const SecondaryIndex& index, const model::Item& item) {
  return IndexKeyIsStorable(index, item);
}

std::string ItemCountKey(int64_t table_id, int64_t id) {
  return layout::ItemCounts(table_id).Pack(kv::Tuple{id});
}

std::string ItemCountJournalKey(int64_t table_id, int64_t index_id, std::string_view item_key) {
  std::string key = layout::ItemCountJournal(table_id, index_id).key();
  key += ItemKeySuffix(table_id, item_key);
  return key;
}

void AddItemCount(kv::Transaction& tx, int64_t table_id, int64_t id, int64_t delta) {
  if (delta == 0) return;
  tx.AtomicOp(kv::MutationType::kAdd, ItemCountKey(table_id, id), kv::EncodeCounter(delta));
}

void RecordItemCountChange(kv::Transaction& tx, const TableInfo& table, const model::Item* old_item,
                           const model::Item* new_item) {
  AddItemCount(
      tx, table.id, kTableCountId,
      static_cast<int64_t>(new_item != nullptr) - static_cast<int64_t>(old_item != nullptr));
  std::optional<std::string> storage_key;
  // One index (secondary or vector) whose entry test is `has_entry`.
  auto record = [&](int64_t index_id, bool backfilling, auto has_entry) {
    const bool before = old_item != nullptr && has_entry(*old_item);
    const bool after = new_item != nullptr && has_entry(*new_item);
    const int64_t delta = static_cast<int64_t>(after) - static_cast<int64_t>(before);
    if (delta == 0) return;
    AddItemCount(tx, table.id, index_id, delta);
    if (backfilling) {
      if (!storage_key) storage_key = StorageKeyOf(table, old_item ? *old_item : *new_item);
      tx.AtomicOp(kv::MutationType::kAdd, ItemCountJournalKey(table.id, index_id, *storage_key),
                  kv::EncodeCounter(delta));
    }
  };
  for (const auto* list : {&table.local_indexes, &table.global_indexes}) {
    for (const SecondaryIndex& index : *list) {
      if (!IndexIsMaintained(index)) continue;
      record(index.id, index.backfilling,
             [&](const model::Item& item) { return HasIndexEntry(index, item); });
    }
  }
  for (const VectorIndex& index : table.vector_indexes) {
    if (!VectorIndexIsMaintained(index)) continue;
    record(index.id, index.backfilling,
           [&](const model::Item& item) { return HasVectorEntry(index, item); });
  }
}

Result<int64_t> TakeBackfillJournal(kv::Transaction& tx, int64_t table_id, int64_t index_id,
                                    std::string_view item_begin, std::string_view item_end) {
  const std::string begin = ItemCountJournalKey(table_id, index_id, item_begin);
  const std::string end = ItemCountJournalKey(table_id, index_id, item_end);
  if (begin >= end) return int64_t{0};
  int64_t sum = 0;
  std::string from = begin;
  // A page's range holds at most one journal key per base item of the page.
  while (from < end) {
    kv::RangeOptions ro;
    ro.limit = 1000;
    FDYNO_ASSIGN_OR_RETURN(kv::RangeResult rr, tx.GetRange(from, end, ro));
    for (const kv::KeyValue& kv : rr.kvs) {
      FDYNO_ASSIGN_OR_RETURN(int64_t delta, ParseLe64(kv.value, "item count journal entry"));
      sum += delta;
    }
    if (!rr.more || rr.kvs.empty()) break;
    from = rr.kvs.back().key + '\x00';
  }
  tx.ClearRange(begin, end);
  return sum;
}

void ClearBackfillJournal(kv::Transaction& tx, int64_t table_id, int64_t index_id) {
  auto [begin, end] = layout::ItemCountJournal(table_id, index_id).Range();
  tx.ClearRange(begin, end);
}

void ClearIndexCounts(kv::Transaction& tx, int64_t table_id, int64_t index_id) {
  tx.Clear(ItemCountKey(table_id, index_id));
  ClearBackfillJournal(tx, table_id, index_id);
}

Result<ItemCounts> ReadItemCounts(kv::Transaction& tx, const TableInfo& table) {
  ItemCounts out;
  auto read = [&](int64_t id) -> Result<int64_t> {
    FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> value,
                           tx.Get(ItemCountKey(table.id, id), /*snapshot=*/true));
    if (!value) return int64_t{0};
    FDYNO_ASSIGN_OR_RETURN(int64_t n, ParseLe64(*value, "item count record"));
    return n > 0 ? n : 0;
  };
  FDYNO_ASSIGN_OR_RETURN(out.table, read(kTableCountId));
  for (const auto* list : {&table.local_indexes, &table.global_indexes}) {
    for (const SecondaryIndex& index : *list) {
      FDYNO_ASSIGN_OR_RETURN(int64_t n, read(index.id));
      out.indexes[index.id] = n;
    }
  }
  for (const VectorIndex& index : table.vector_indexes) {
    FDYNO_ASSIGN_OR_RETURN(int64_t n, read(index.id));
    out.indexes[index.id] = n;
  }
  return out;
}

}  // namespace fdyno::store
