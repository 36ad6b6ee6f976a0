#include "store/indexes.h"

#include <utility>

#include "kv/tuple.h"
#include "model/item_codec.h"
#include "model/key_codec.h"
#include "store/item_counts.h"
#include "store/items.h"
#include "store/layout.h"

namespace fdyno::store {
namespace {

using model::AttributeValue;
using model::Item;

const AttributeValue* Find(const Item& item, const std::string& name) {
  auto it = item.find(name);
  return it == item.end() ? nullptr : &it->second;
}

bool HasType(const AttributeValue& v, ScalarType type) { return v.type() == model::ToType(type); }

uint32_t ChunksOf(size_t image_bytes) {
  return image_bytes <= kItemChunkBytes
             ? 1
             : static_cast<uint32_t>((image_bytes + kItemChunkBytes - 1) / kItemChunkBytes);
}

kv::Tuple PartitionTuple(const AttributeValue& hash_value) {
  std::string enc = model::EncodeKeyValue(hash_value);
  kv::Tuple t;
  t.AddInt(static_cast<int64_t>(PartitionHash(enc)));
  t.AddBytes(enc);
  return t;
}

}  // namespace

bool IndexIsMaintained(const SecondaryIndex& index) {
  return index.status != IndexStatus::kDeleting;
}

Item ProjectForIndex(const TableInfo& table, const SecondaryIndex& index, const Item& item) {
  if (index.projection.type == ProjectionType::kAll) return item;
  Item out;
  auto keep = [&](const std::string& name) {
    if (const AttributeValue* v = Find(item, name)) out.emplace(name, *v);
  };
  keep(table.key_schema.hash.name);
  if (table.key_schema.range) keep(table.key_schema.range->name);
  keep(index.key_schema.hash.name);
  if (index.key_schema.range) keep(index.key_schema.range->name);
  if (index.projection.type == ProjectionType::kInclude) {
    for (const std::string& name : index.projection.non_key_attributes) keep(name);
  }
  return out;
}

std::string IndexEntryKey(int64_t table_id, const SecondaryIndex& index,
                          const KeySchema& table_schema, const Item& keys) {
  kv::Tuple t = PartitionTuple(keys.at(index.key_schema.hash.name));
  if (index.key_schema.range) {
    t.AddBytes(model::EncodeKeyValue(keys.at(index.key_schema.range->name)));
  }
  t.AddBytes(model::EncodeKeyValue(keys.at(table_schema.hash.name)));
  if (table_schema.range) t.AddBytes(model::EncodeKeyValue(keys.at(table_schema.range->name)));
  return layout::Index(table_id, index.id).Pack(t);
}

std::optional<IndexEntry> ComputeIndexEntry(const TableInfo& table, const SecondaryIndex& index,
                                            const Item& item) {
  const AttributeValue* h = Find(item, index.key_schema.hash.name);
  if (h == nullptr || !HasType(*h, index.key_schema.hash.type)) return std::nullopt;
  if (index.key_schema.range) {
    const AttributeValue* r = Find(item, index.key_schema.range->name);
    if (r == nullptr || !HasType(*r, index.key_schema.range->type)) return std::nullopt;
  }
  IndexEntry e;
  e.key = IndexEntryKey(table.id, index, table.key_schema, item);
  e.image = ProjectForIndex(table, index, item);
  return e;
}

Status ValidateIndexKeys(const TableInfo& table, const Item& item) {
  auto check = [&](const SecondaryIndex& index, const model::KeyAttribute& attr) -> Status {
    const AttributeValue* v = Find(item, attr.name);
    if (v == nullptr) return Status();
    if (!HasType(*v, attr.type)) {
      return Error::Validation(
          "One or more parameter values were invalid: Type mismatch for Index Key " + attr.name +
          " Expected: " + std::string(ScalarTypeName(attr.type)) +
          " Actual: " + std::string(model::TypeName(v->type())) + " IndexName: " + index.name)
          .WithCause(ErrorCause::kIndexKeyMismatch);
    }
    bool empty = (v->type() == model::Type::kS && std::get<std::string>(v->v).empty()) ||
                 (v->type() == model::Type::kB && std::get<model::Binary>(v->v).bytes.empty());
    if (empty) {
      return Error::Validation(
          "One or more parameter values are not valid. A value specified for a secondary index "
          "key is not supported. The AttributeValue for a key attribute cannot contain an empty " +
          std::string(v->type() == model::Type::kS ? "string" : "binary") +
          " value. IndexName: " + index.name + ", IndexKey: " + attr.name);
    }
    return Status();
  };
  for (const auto* list : {&table.local_indexes, &table.global_indexes}) {
    for (const SecondaryIndex& index : *list) {
      if (!IndexIsMaintained(index)) continue;
      FDYNO_RETURN_IF_ERROR(check(index, index.key_schema.hash));
      if (index.key_schema.range) FDYNO_RETURN_IF_ERROR(check(index, *index.key_schema.range));
    }
  }
  return Status();
}

void UpdateIndex(kv::Transaction& tx, const TableInfo& table, const SecondaryIndex& index,
                 const Item* old_item, const Item* new_item) {
  std::optional<IndexEntry> before, after;
  if (old_item != nullptr) before = ComputeIndexEntry(table, index, *old_item);
  if (new_item != nullptr) after = ComputeIndexEntry(table, index, *new_item);
  std::string before_image;
  if (before) before_image = model::EncodeStoredItem(before->image);
  if (before && (!after || after->key != before->key)) {
    DeleteItem(tx, before->key, OldItem{true, ChunksOf(before_image.size()), false});
  }
  if (after) {
    std::string image = model::EncodeStoredItem(after->image);
    if (before && before->key == after->key) {
      if (image == before_image) return;
      WriteItem(tx, after->key, image, OldItem{true, ChunksOf(before_image.size()), false});
    } else {
      WriteItem(tx, after->key, image, OldItem{});
    }
  }
}

void UpdateIndexes(kv::Transaction& tx, const TableInfo& table, const Item* old_item,
                   const Item* new_item) {
  // The table's and the indexes' item counts change in the same transaction.
  RecordItemCountChange(tx, table, old_item, new_item);
  for (const auto* list : {&table.local_indexes, &table.global_indexes}) {
    for (const SecondaryIndex& index : *list) {
      if (IndexIsMaintained(index)) UpdateIndex(tx, table, index, old_item, new_item);
    }
  }
}

std::pair<std::string, std::string> IndexPartitionRange(int64_t table_id, int64_t index_id,
                                                        const AttributeValue& hash_value) {
  std::string begin = layout::Index(table_id, index_id).Pack(PartitionTuple(hash_value));
  std::string end = begin + '\xff';
  return {std::move(begin), std::move(end)};
}

std::string IndexSortPrefix(int64_t table_id, int64_t index_id, const AttributeValue& hash_value,
                            const AttributeValue& range_value) {
  kv::Tuple t = PartitionTuple(hash_value);
  t.AddBytes(model::EncodeKeyValue(range_value));
  return layout::Index(table_id, index_id).Pack(t);
}

}  // namespace fdyno::store
