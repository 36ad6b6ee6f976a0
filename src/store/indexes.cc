#include "store/indexes.h"

#include <algorithm>
#include <utility>
#include <vector>

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

// (PartitionHash, bytes h1, ..., bytes hn): the partition of the index key values `hash`. A
// one-attribute partition hashes its value's encoding (the layout before multi-attribute keys);
// a multi-attribute one hashes the packed tuple of its values' encodings.
kv::Tuple PartitionTuple(const std::vector<AttributeValue>& hash) {
  kv::Tuple values;
  std::vector<std::string> encs;
  for (const AttributeValue& v : hash) encs.push_back(model::EncodeKeyValue(v));
  std::string hashed;
  if (encs.size() == 1) {
    hashed = encs[0];
  } else {
    for (const std::string& e : encs) values.AddBytes(e);
    hashed = values.Pack();
  }
  kv::Tuple t;
  t.AddInt(static_cast<int64_t>(PartitionHash(hashed)));
  for (std::string& e : encs) t.AddBytes(std::move(e));
  return t;
}

// The values of `attrs` in `item`, all present with their types; nullopt otherwise.
std::optional<std::vector<AttributeValue>> ValuesOf(const Item& item,
                                                    const std::vector<model::KeyAttribute>& attrs) {
  std::vector<AttributeValue> out;
  for (const model::KeyAttribute& a : attrs) {
    const AttributeValue* v = Find(item, a.name);
    if (v == nullptr || !HasType(*v, a.type)) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

}  // namespace

bool IndexIsMaintained(const SecondaryIndex& index) {
  return index.status != IndexStatus::kDeleting;
}

bool ProjectsAttribute(const TableInfo& table, const SecondaryIndex& index,
                       const std::string& name) {
  if (index.projection.type == ProjectionType::kAll) return true;
  for (const auto* schema : {&table.key_schema, &index.key_schema}) {
    for (const model::KeyAttribute& a : schema->Attributes()) {
      if (a.name == name) return true;
    }
  }
  const auto& include = index.projection.non_key_attributes;
  return index.projection.type == ProjectionType::kInclude &&
         std::find(include.begin(), include.end(), name) != include.end();
}

Item ProjectForIndex(const TableInfo& table, const SecondaryIndex& index, const Item& item) {
  if (index.projection.type == ProjectionType::kAll) return item;
  Item out;
  auto keep = [&](const std::string& name) {
    if (const AttributeValue* v = Find(item, name)) out.emplace(name, *v);
  };
  keep(table.key_schema.hash.name);
  if (table.key_schema.range) keep(table.key_schema.range->name);
  for (const model::KeyAttribute& a : index.key_schema.Attributes()) keep(a.name);
  if (index.projection.type == ProjectionType::kInclude) {
    for (const std::string& name : index.projection.non_key_attributes) keep(name);
  }
  return out;
}

std::string IndexEntryKey(int64_t table_id, const SecondaryIndex& index,
                          const KeySchema& table_schema, const Item& keys) {
  std::vector<AttributeValue> hash;
  for (const model::KeyAttribute& a : index.key_schema.HashAttributes()) {
    hash.push_back(keys.at(a.name));
  }
  kv::Tuple t = PartitionTuple(hash);
  for (const model::KeyAttribute& a : index.key_schema.RangeAttributes()) {
    t.AddBytes(model::EncodeKeyValue(keys.at(a.name)));
  }
  t.AddBytes(model::EncodeKeyValue(keys.at(table_schema.hash.name)));
  if (table_schema.range) t.AddBytes(model::EncodeKeyValue(keys.at(table_schema.range->name)));
  return layout::Index(table_id, index.id).Pack(t);
}

std::optional<IndexEntry> ComputeIndexEntry(const TableInfo& table, const SecondaryIndex& index,
                                            const Item& item) {
  if (!ValuesOf(item, index.key_schema.Attributes())) return std::nullopt;
  IndexEntry e;
  e.key = IndexEntryKey(table.id, index, table.key_schema, item);
  e.image = ProjectForIndex(table, index, item);
  return e;
}

Status ValidateIndexKeys(const TableInfo& table, const Item& item, const Item* before) {
  // Every maintained index is checked; the error names the alphabetically first index with a
  // bad key attribute, as DynamoDB does.
  const SecondaryIndex* worst_index = nullptr;
  model::KeyAttribute worst_attr;
  const AttributeValue* worst_value = nullptr;
  for (const auto* list : {&table.local_indexes, &table.global_indexes}) {
    for (const SecondaryIndex& index : *list) {
      if (!IndexIsMaintained(index)) continue;
      if (worst_index != nullptr && worst_index->name <= index.name) continue;
      for (const model::KeyAttribute& a : index.key_schema.Attributes()) {
        const AttributeValue* v = Find(item, a.name);
        if (v == nullptr) continue;
        // An update is checked only on the key attributes it changed.
        if (before != nullptr) {
          const AttributeValue* old = Find(*before, a.name);
          if (old != nullptr && *old == *v) continue;
        }
        // A mistyped attribute of a multi-attribute key only keeps the item out of the index.
        const bool mistyped = !HasType(*v, a.type) && !index.key_schema.multi_attribute();
        const bool empty =
            HasType(*v, a.type) &&
            ((v->type() == model::Type::kS && std::get<std::string>(v->v).empty()) ||
             (v->type() == model::Type::kB && std::get<model::Binary>(v->v).bytes.empty()));
        if (mistyped || empty) {
          worst_index = &index;
          worst_attr = a;
          worst_value = v;
          break;
        }
      }
    }
  }
  if (worst_index == nullptr) return Status();
  const model::KeyAttribute& attr = worst_attr;
  const AttributeValue& v = *worst_value;
  if (!HasType(v, attr.type)) {
    return Error::Validation(
               "One or more parameter values were invalid: Type mismatch for Index Key " +
               attr.name + " Expected: " + std::string(ScalarTypeName(attr.type)) + " Actual: " +
               std::string(model::TypeName(v.type())) + " IndexName: " + worst_index->name)
        .WithCause(ErrorCause::kIndexKeyMismatch);
  }
  const std::string kind = v.type() == model::Type::kS ? "string" : "binary";
  if (before != nullptr) {
    return Error::Validation(
               "One or more parameter values are not valid. The update expression attempted to "
               "update a secondary index key to a value that is not supported. The "
               "AttributeValue for a key attribute cannot contain an empty " +
               kind + " value.")
        .WithCause(ErrorCause::kIndexKeyEmpty);
  }
  return Error::Validation(
             "One or more parameter values are not valid. A value specified for a secondary index "
             "key is not supported. The AttributeValue for a key attribute cannot contain an "
             "empty " +
             kind + " value. IndexName: " + worst_index->name + ", IndexKey: " + attr.name)
      .WithCause(ErrorCause::kIndexKeyEmpty);
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

std::pair<std::string, std::string> IndexPartitionRange(
    int64_t table_id, int64_t index_id, const std::vector<AttributeValue>& hash_values) {
  std::string begin = layout::Index(table_id, index_id).Pack(PartitionTuple(hash_values));
  std::string end = begin + '\xff';
  return {std::move(begin), std::move(end)};
}

std::string IndexSortPrefix(int64_t table_id, int64_t index_id,
                            const std::vector<AttributeValue>& hash_values,
                            const std::vector<AttributeValue>& range_values) {
  kv::Tuple t = PartitionTuple(hash_values);
  for (const AttributeValue& v : range_values) t.AddBytes(model::EncodeKeyValue(v));
  return layout::Index(table_id, index_id).Pack(t);
}

}  // namespace fdyno::store
