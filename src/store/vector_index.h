// Vector index entries: what a base item contributes to each vector index of its table, their
// validation, and their maintenance in the transaction that writes the base item
// (store/mutation.h). Format: docs/format/vector_indexes.md.
//
// Layout (store/layout.h, one subspace per vector index):
//   layout::VectorIndex(table, index) + [bytes hash] + item key suffix  -> entry
// where `hash` is the key-codec encoding of the item's HASH search-schema attribute (only when
// the index has one, so one partition of the index is one key range) and the suffix is the
// base item's key after its table's items prefix ((PartitionHash(pk), pk, [sk]), store/items.h).
// The entry holds what a search reads for every candidate, and nothing else:
//   [version 1][u32 LE dimensions][dimensions x f32 LE][INLINE_FILTER attributes, item codec]
// The other projected attributes are read from the base item, for the TopK results only.
//
// Which items have an entry (DynamoDB's rules; sparse like a GSI): an item whose vector
// attribute is a valid vector (a list of exactly Dimensions numbers, each within the float32
// range) and, when the index has a HASH element, whose HASH attribute is present with its
// type. Writes that would store an invalid vector attribute, or a search-schema attribute of
// the wrong type (an empty string or binary for HASH), are rejected before any write
// (ValidateVectorAttributes). An index added to a table holding such items leaves them out.
//
// Thread-safety: pure functions and functions over a Transaction used by one thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "kv/kv.h"
#include "model/attribute_value.h"
#include "store/catalog.h"

namespace fdyno::store {

// Entry format version (first byte of an entry). Persisted.
inline constexpr uint8_t kVectorEntryVersion = 1;

// Whether `index` receives writes (every state but DELETING).
bool VectorIndexIsMaintained(const VectorIndex& index);

// The float32 values of `value` as a vector of `dimensions`, or nullopt when it is not one
// (another type, a non-number element, another length, a value beyond the float32 range).
std::optional<std::vector<float>> ParseVector(const model::AttributeValue& value,
                                              int64_t dimensions);

// ValidationException when `item` holds, for a maintained vector index of `table`, a vector
// attribute that is not a valid vector or a search-schema attribute of the wrong type (cause
// kIndexKeyMismatch) or a HASH attribute that is an empty string or binary (kIndexKeyEmpty),
// naming the alphabetically first such index. With `before` (the item an update started from),
// only the attributes the update changed are checked.
Status ValidateVectorAttributes(const TableInfo& table, const model::Item& item,
                                const model::Item* before = nullptr);

// Whether `item` has an entry in `index` (header comment).
bool HasVectorEntry(const VectorIndex& index, const model::Item& item);

// Buffers the vector index changes of replacing `old_item` (null: absent) by `new_item` (null:
// deleted), stored at base item key `item_key`, in every maintained vector index; unchanged
// entries are not rewritten. Item counts are store::RecordItemCountChange's.
void UpdateVectorIndexes(kv::Transaction& tx, const TableInfo& table, std::string_view item_key,
                         const model::Item* old_item, const model::Item* new_item);
// The same for one index (the backfill worker).
void UpdateVectorIndex(kv::Transaction& tx, const TableInfo& table, const VectorIndex& index,
                       std::string_view item_key, const model::Item* old_item,
                       const model::Item* new_item);

// The kv key range of the entries of `index`, or of its partition `hash` (non-null only for an
// index with a HASH element).
std::pair<std::string, std::string> VectorIndexRange(const TableInfo& table,
                                                     const VectorIndex& index,
                                                     const model::AttributeValue* hash);

// One stored entry, decoded without copying.
struct VectorEntryView {
  const char* floats = nullptr;  // dimensions x f32 LE, unaligned
  uint32_t dimensions = 0;
  std::string_view filters;  // item codec image of the INLINE_FILTER attributes
};
// InternalServerError on a malformed entry or an unknown version (fail closed).
Result<VectorEntryView> ParseVectorEntry(std::string_view value);

// The base item key of the entry stored at `entry_key` of `index`.
Result<std::string> ItemKeyOfEntry(const TableInfo& table, const VectorIndex& index,
                                   std::string_view entry_key);

// Whether `index` holds attribute `name` of its items: the table's key attributes, the vector
// attribute, the search-schema attributes, and the projection's.
bool VectorIndexProjects(const TableInfo& table, const VectorIndex& index, const std::string& name);
// The attributes of `item` that `index` holds.
model::Item ProjectForVectorIndex(const TableInfo& table, const VectorIndex& index,
                                  const model::Item& item);

// VectorWriteRequestBytes: the bytes replacing `old_item` (null: absent) by `new_item` (null:
// deleted) replicates to `index`. nullopt when the index holds the item before and after with the
// same projected attributes, or holds it at neither (the write consumes no vector write
// capacity). Otherwise, for an entry written, the vector at 4 bytes a dimension plus the size
// (model/item_size.h) of the entry's other projected attributes; for an entry removed, the size of
// the removed item's key attributes.
std::optional<uint64_t> VectorWriteBytes(const TableInfo& table, const VectorIndex& index,
                                         const model::Item* old_item, const model::Item* new_item);

}  // namespace fdyno::store
