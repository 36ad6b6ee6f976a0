// The vector indexes of a table record (docs/format/catalog.md, "vector_indexes"): their JSON
// form inside the record that store/catalog.cc writes and reads. Internal to the store layer.
//
// Decoding fails closed (InternalServerError "corrupt catalog record: ...") on a malformed
// member, like the rest of the record. Pure functions; thread-safe.
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <vector>

#include "base/result.h"
#include "store/catalog.h"

namespace fdyno::store {

// Writes the JSON array of `indexes` (the value of the record's "vector_indexes" member).
void WriteVectorIndexes(rapidjson::Writer<rapidjson::StringBuffer>& w,
                        const std::vector<VectorIndex>& indexes);

// Reads the array WriteVectorIndexes wrote.
Result<std::vector<VectorIndex>> ReadVectorIndexes(const rapidjson::Value& list);

}  // namespace fdyno::store
