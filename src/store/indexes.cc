#include "store/indexes.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "kv/tuple.h"
#include "model/item_codec.h"
#include "model/item_size.h"
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

// What keeps an index key value out of an index.
enum class KeyProblem { kNone, kMissing, kMistyped, kEmpty, kTooLong };

uint64_t MaxKeyBytes(bool partition) {
  return partition ? kMaxIndexPartitionKeyBytes : kMaxIndexSortKeyBytes;
}

KeyProblem ProblemOf(const AttributeValue* v, const model::KeyAttribute& a, bool partition) {
  if (v == nullptr) return KeyProblem::kMissing;
  if (!HasType(*v, a.type)) return KeyProblem::kMistyped;
  if ((v->type() == model::Type::kS && std::get<std::string>(v->v).empty()) ||
      (v->type() == model::Type::kB && std::get<model::Binary>(v->v).bytes.empty())) {
    return KeyProblem::kEmpty;
  }
  if (model::ValueSize(*v) > MaxKeyBytes(partition)) return KeyProblem::kTooLong;
  return KeyProblem::kNone;
}

// Calls fn(attribute, is_partition_attribute) for each key attribute of `index` in order.
template <typename Fn>
void ForEachKeyAttribute(const SecondaryIndex& index, Fn fn) {
  for (const model::KeyAttribute& a : index.key_schema.HashAttributes()) fn(a, true);
  for (const model::KeyAttribute& a : index.key_schema.RangeAttributes()) fn(a, false);
}

// Whether every key attribute of `index` is present in `item` with its type (an entry an older
// backfill may have stored even when the value was empty or too long).
bool HasTypedKey(const SecondaryIndex& index, const Item& item) {
  for (const model::KeyAttribute& a : index.key_schema.Attributes()) {
    const AttributeValue* v = Find(item, a.name);
    if (v == nullptr || !HasType(*v, a.type)) return false;
  }
  return true;
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

bool IndexKeyIsStorable(const SecondaryIndex& index, const Item& item) {
  bool storable = true;
  ForEachKeyAttribute(index, [&](const model::KeyAttribute& a, bool partition) {
    storable = storable && ProblemOf(Find(item, a.name), a, partition) == KeyProblem::kNone;
  });
  return storable;
}

std::optional<IndexEntry> ComputeIndexEntry(const TableInfo& table, const SecondaryIndex& index,
                                            const Item& item) {
  if (!IndexKeyIsStorable(index, item)) return std::nullopt;
  IndexEntry e;
  e.key = IndexEntryKey(table.id, index, table.key_schema, item);
  e.image = ProjectForIndex(table, index, item);
  return e;
}

namespace {

// The first key attribute of `index` whose value in `item` a write may not store, with its
// problem; only attributes the write changed from `before` (when given) count.
struct BadKey {
  const SecondaryIndex* index = nullptr;
  model::KeyAttribute attr;
  const AttributeValue* value = nullptr;
  KeyProblem problem = KeyProblem::kNone;
  bool partition = false;
};

BadKey FirstBadKey(const SecondaryIndex& index, const Item& item, const Item* before) {
  BadKey bad;
  ForEachKeyAttribute(index, [&](const model::KeyAttribute& a, bool partition) {
    if (bad.index != nullptr) return;
    const AttributeValue* v = Find(item, a.name);
    if (v == nullptr) return;
    if (before != nullptr) {
      const AttributeValue* old = Find(*before, a.name);
      if (old != nullptr && *old == *v) return;
    }
    KeyProblem p = ProblemOf(v, a, partition);
    // A mistyped attribute of a multi-attribute key only keeps the item out of the index.
    if (p == KeyProblem::kMistyped && index.key_schema.multi_attribute()) return;
    if (p != KeyProblem::kNone) bad = BadKey{&index, a, v, p, partition};
  });
  return bad;
}

Error BadKeyError(const BadKey& bad, bool update) {
  const model::KeyAttribute& attr = bad.attr;
  const AttributeValue& v = *bad.value;
  const std::string& index = bad.index->name;
  if (bad.problem == KeyProblem::kMistyped) {
    return Error::Validation(
               "One or more parameter values were invalid: Type mismatch for Index Key " +
               attr.name + " Expected: " + std::string(ScalarTypeName(attr.type)) +
               " Actual: " + std::string(model::TypeName(v.type())) + " IndexName: " + index)
        .WithCause(ErrorCause::kIndexKeyMismatch);
  }
  if (bad.problem == KeyProblem::kTooLong) {
    return Error::Validation(
               "One or more parameter values were invalid: Size limit exceeded for Index Key " +
               attr.name + " Actual Size: " + std::to_string(model::ValueSize(v)) +
               " bytes Max Size: " + std::to_string(MaxKeyBytes(bad.partition)) +
               " bytes IndexName: " + index)
        .WithCause(ErrorCause::kIndexKeyTooLong);
  }
  const std::string kind = v.type() == model::Type::kS ? "string" : "binary";
  if (update) {
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
             kind + " value. IndexName: " + index + ", IndexKey: " + attr.name)
      .WithCause(ErrorCause::kIndexKeyEmpty);
}

}  // namespace

Status ValidateIndexKeys(const TableInfo& table, const Item& item, const Item* before) {
  // Every maintained index is checked; the error names the alphabetically first index with a
  // bad key attribute, as DynamoDB does.
  BadKey worst;
  for (const auto* list : {&table.local_indexes, &table.global_indexes}) {
    for (const SecondaryIndex& index : *list) {
      if (!IndexIsMaintained(index)) continue;
      if (worst.index != nullptr && worst.index->name <= index.name) continue;
      BadKey bad = FirstBadKey(index, item, before);
      if (bad.index != nullptr) worst = bad;
    }
  }
  if (worst.index == nullptr) return Status();
  return BadKeyError(worst, before != nullptr);
}

void UpdateIndex(kv::Transaction& tx, const TableInfo& table, const SecondaryIndex& index,
                 const Item* old_item, const Item* new_item) {
  std::optional<IndexEntry> before, after;
  if (old_item != nullptr) before = ComputeIndexEntry(table, index, *old_item);
  if (new_item != nullptr) after = ComputeIndexEntry(table, index, *new_item);
  if (old_item != nullptr && !before && HasTypedKey(index, *old_item)) {
    // An entry an older backfill may have stored for a value no longer indexed (empty or too
    // long): removed with the old image, whatever its size.
    DeleteItem(tx, IndexEntryKey(table.id, index, table.key_schema, *old_item),
               OldItem{true, 0, true});
  }
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
