// DynamoDB's consumed-capacity arithmetic for single-item operations, and its rendering.
//
// Reads: one unit per 4 KB (rounded up) of the item read, at least one unit even when no item
// is found; eventually consistent reads cost half. Writes: one unit per 1 KB (rounded up) of
// the larger of the old and the new image, at least one unit; a write whose condition fails
// still consumes the units of the existing item (one when there is none). Writes also consume
// units for each secondary index entry they write (AddIndexWriteUnits).
// Pure functions; thread-safe.
#pragma once

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "model/attribute_value.h"
#include "store/catalog.h"

namespace fdyno::api {

enum class ReturnConsumedCapacity { kNone, kTotal, kIndexes };

// Parses the ReturnConsumedCapacity parameter (absent -> kNone). An unknown value gets
// DynamoDB's enum validation message.
Result<ReturnConsumedCapacity> ParseReturnConsumedCapacity(std::optional<std::string_view> value);

inline constexpr uint64_t kReadUnitBytes = 4096;
inline constexpr uint64_t kWriteUnitBytes = 1024;

// Units for reading an item of size_bytes (0 when absent).
double ReadUnits(uint64_t size_bytes, bool consistent_read);
// Units for writing: max(old, new) rounded up to 1 KB, at least 1.
double WriteUnits(uint64_t old_size_bytes, uint64_t new_size_bytes);

// What one request consumed, per table and per index.
struct ConsumedCapacity {
  std::string table_name;
  double table_units = 0;
  bool is_write = false;
  std::vector<std::pair<std::string, double>> global_indexes;  // index name -> units
  std::vector<std::pair<std::string, double>> local_indexes;
  // Vector index name -> VectorWriteRequestBytes (writes; not capacity units, so not in total).
  std::vector<std::pair<std::string, double>> vector_indexes;

  double total() const;
  // Adds the index units (and vector write bytes) of `other` (same table) to this one's.
  void AddIndexUnits(const ConsumedCapacity& other);
};

// Adds to `c` the write units each secondary index of `table` consumes when `old_item`
// (null: absent) is replaced by `new_item` (null: deleted), by DynamoDB's rules on the
// projected index entries: nothing when the entry is absent before and after or unchanged; the
// entry's units (1 KB each, rounded up) when it appears or disappears; the larger of the two
// when it changes in place; both when its index key moves. An index whose entry does not
// change is not listed. With `vector_write_bytes` (ReturnConsumedCapacity INDEXES: only it shows
// them, and they cost a parse of each vector), the same for the VectorWriteRequestBytes of each
// vector index (store::VectorWriteBytes).
void AddIndexWriteUnits(const store::TableInfo& table, const model::Item* old_item,
                        const model::Item* new_item, ConsumedCapacity& c, bool vector_write_bytes);

// Writes "ConsumedCapacity": {...} (key and value) into an open JSON object when mode is
// not kNone; writes nothing otherwise. With kIndexes, the table's and each index's figures too
// (vector indexes as "VectorIndexes": {name: {"VectorWriteRequestBytes": n}}).
void WriteConsumedCapacity(rapidjson::Writer<rapidjson::StringBuffer>& w,
                           ReturnConsumedCapacity mode, const ConsumedCapacity& c);
// Only the {...} object (for operations that render a list of them).
void WriteConsumedCapacityObject(rapidjson::Writer<rapidjson::StringBuffer>& w,
                                 ReturnConsumedCapacity mode, const ConsumedCapacity& c);

}  // namespace fdyno::api
