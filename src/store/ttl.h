// Time to Live: which items have expired, and the expiry index that lets the sweeper read only
// those. Format: docs/format/ttl.md.
//
// An item of a table whose TTL is ENABLING or ENABLED expires at the value of its TTL attribute
// when that attribute is a Number: the time in seconds since the Unix epoch (fractions are
// dropped). It counts as expired once that time has passed, unless it lies more than five years
// in the past (DynamoDB ignores such values, which are almost always a unit mistake). Any other
// type, or no attribute, never expires.
//
// Expiry index: one key per item that has an expiry, in the table's subspace,
//   layout::TablePartSubspace(table, kTtl) + (int expiry_seconds, bytes item_key) -> ""
// kept exact by the mutation path (store/mutation.h) in the transaction of every item write
// while TTL is ENABLING or ENABLED, and filled for the items that existed before by a backfill
// while it is ENABLING. The sweeper reads the keys below "now" in order and deletes each item
// in its own transaction, after reading it again and checking that it has still expired.
//
// Thread-safety: pure functions, and functions over a Transaction used by one thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "kv/kv.h"
#include "model/attribute_value.h"
#include "store/catalog.h"

namespace fdyno::store {

// Items whose expiry lies further in the past than this are never expired.
inline constexpr int64_t kTtlIgnoreOlderThanSeconds = int64_t{5} * 365 * 24 * 3600;

// Whether item writes maintain the expiry index of `table` (TTL ENABLING or ENABLED).
bool TtlIsMaintained(const TableInfo& table);

// The expiry (epoch seconds) of `item` under `ttl`, or nullopt when it has none: TTL not
// maintained, no attribute, not a Number, or negative.
std::optional<int64_t> ExpirySeconds(const TtlSettings& ttl, const model::Item& item);

// Whether an item with expiry `expiry_s` has expired at `now_ms` (see the header comment).
bool ExpiredAt(int64_t expiry_s, int64_t now_ms);

// Whether `item` of `table` has expired at `now_ms`: what reads hide and the sweeper deletes.
bool ItemExpired(const TableInfo& table, const model::Item& item, int64_t now_ms);

// Whether a stored image (model item codec) is an item of `table` that has expired at now_ms;
// decodes it only when the table's TTL is ENABLED.
Result<bool> StoredItemExpired(const TableInfo& table, std::string_view image, int64_t now_ms);

// Whether the entries of `index` carry the TTL attribute of `table` (so that reads of the index
// can tell an expired item without reading its base item).
bool IndexCarriesTtl(const TableInfo& table, const SecondaryIndex& index);

// The expiry index key of the item stored at `item_key` (store::ItemKey) expiring at expiry_s.
std::string ExpiryKey(int64_t table_id, int64_t expiry_s, std::string_view item_key);

// Buffers the expiry index change of replacing `old_item` by `new_item` (either null) in the
// item at `item_key`: nothing when TTL is not maintained or the expiry did not change.
void UpdateExpiryIndex(kv::Transaction& tx, const TableInfo& table, std::string_view item_key,
                       const model::Item* old_item, const model::Item* new_item);

// One expiry index entry read back.
struct ExpiryEntry {
  int64_t expiry_s = 0;
  std::string item_key;
};

// The range of expiry keys of items expiring before `before_s`, from the earliest:
// [first, second). Entries more than five years before it are included; the sweeper skips them.
std::pair<std::string, std::string> ExpiryRangeBefore(int64_t table_id, int64_t before_s);
// The range of expiry keys of the items that have expired at `now_ms` (expiries from five
// years before it up to it): what the sweeper reads.
std::pair<std::string, std::string> ExpiredRange(int64_t table_id, int64_t now_ms);
// The whole expiry index of a table (cleared when TTL is disabled).
std::pair<std::string, std::string> ExpiryIndexRange(int64_t table_id);
// Decodes an expiry index key; InternalServerError when it is not one (fail closed).
Result<ExpiryEntry> DecodeExpiryKey(int64_t table_id, std::string_view key);

}  // namespace fdyno::store
