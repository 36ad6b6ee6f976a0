// Writes a stored item (item_codec's bytes) straight as DynamoDB JSON, without building an
// Item: the read path's short way from storage to the wire, for reads that return whole items
// (Query, Scan and GetItem without a projection or filter). Building the Item's maps and
// strings only to walk them again for the JSON was the largest cost of a Query page.
//
// The output and the size are exactly ItemToJson(DecodeStoredItem(b)) and ItemSize(...): the
// transcoder reads with the decoder's reader (item_reader.h) and accepts exactly the bytes
// DecodeStoredItem accepts. Bytes it rejects give DecodeStoredItem's InternalServerError;
// the caller then discards what was written. The JSON is appended to a RapidJSON buffer
// directly, without a Writer's per-value bookkeeping, escaping strings exactly as RapidJSON's
// Writer does (the tests compare byte for byte).
//
// Thread-safety: pure functions.
#pragma once

#include <rapidjson/stringbuffer.h>

#include <cstdint>
#include <string_view>

#include "base/result.h"

namespace fdyno::model {

// Appends the item to `out` as a JSON object and returns its DynamoDB size (model::ItemSize).
Result<uint64_t> WriteStoredItemJson(std::string_view stored, rapidjson::StringBuffer& out);

// The stored item's DynamoDB size (model::ItemSize), walking its bytes without building an
// Item or writing anything; rejects exactly what WriteStoredItemJson rejects.
Result<uint64_t> StoredItemSize(std::string_view stored);

}  // namespace fdyno::model
