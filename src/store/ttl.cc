#include "store/ttl.h"

#include <algorithm>
#include <limits>

#include "kv/tuple.h"
#include "model/item_codec.h"
#include "model/number.h"
#include "store/layout.h"

namespace fdyno::store {
namespace {

// The integer part of a non-negative number, saturated at int64's maximum.
int64_t FloorSeconds(const model::Number& n) {
  if (n.is_zero() || n.exponent() <= 0) return 0;
  if (n.exponent() > 18) return std::numeric_limits<int64_t>::max();
  int64_t v = 0;
  const std::string& digits = n.digits();
  for (int i = 0; i < n.exponent(); ++i) {
    v = v * 10 + (i < static_cast<int>(digits.size()) ? digits[static_cast<size_t>(i)] - '0' : 0);
  }
  return v;
}

}  // namespace

bool TtlIsMaintained(const TableInfo& table) {
  return table.ttl.status == TtlStatus::kEnabling || table.ttl.status == TtlStatus::kEnabled;
}

std::optional<int64_t> ExpirySeconds(const TtlSettings& ttl, const model::Item& item) {
  if (ttl.status != TtlStatus::kEnabling && ttl.status != TtlStatus::kEnabled) return std::nullopt;
  auto it = item.find(ttl.attribute);
  if (it == item.end() || it->second.type() != model::Type::kN) return std::nullopt;
  const model::Number& n = std::get<model::Number>(it->second.v);
  if (n.negative()) return std::nullopt;
  return FloorSeconds(n);
}

bool ExpiredAt(int64_t expiry_s, int64_t now_ms) {
  const int64_t now_s = now_ms / 1000;
  return expiry_s < now_s && now_s - expiry_s <= kTtlIgnoreOlderThanSeconds;
}

bool ItemExpired(const TableInfo& table, const model::Item& item, int64_t now_ms) {
  if (table.ttl.status != TtlStatus::kEnabled) return false;
  std::optional<int64_t> expiry = ExpirySeconds(table.ttl, item);
  return expiry && ExpiredAt(*expiry, now_ms);
}

Result<bool> StoredItemExpired(const TableInfo& table, std::string_view image, int64_t now_ms) {
  if (table.ttl.status != TtlStatus::kEnabled) return false;
  FDYNO_ASSIGN_OR_RETURN(model::Item item, model::DecodeStoredItem(image));
  return ItemExpired(table, item, now_ms);
}

bool IndexCarriesTtl(const TableInfo& table, const SecondaryIndex& index) {
  const std::string& a = table.ttl.attribute;
  if (index.projection.type == ProjectionType::kAll) return true;
  const auto is = [&a](const model::KeyAttribute& k) { return k.name == a; };
  if (is(table.key_schema.hash) || (table.key_schema.range && is(*table.key_schema.range))) {
    return true;
  }
  for (const model::KeyAttribute& k : index.key_schema.Attributes()) {
    if (is(k)) return true;
  }
  const auto& include = index.projection.non_key_attributes;
  return index.projection.type == ProjectionType::kInclude &&
         std::find(include.begin(), include.end(), a) != include.end();
}

std::string ExpiryKey(int64_t table_id, int64_t expiry_s, std::string_view item_key) {
  return layout::Ttl(table_id).Pack(kv::Tuple{expiry_s, kv::Bytes{std::string(item_key)}});
}

void UpdateExpiryIndex(kv::Transaction& tx, const TableInfo& table, std::string_view item_key,
                       const model::Item* old_item, const model::Item* new_item) {
  if (!TtlIsMaintained(table)) return;
  std::optional<int64_t> before = old_item ? ExpirySeconds(table.ttl, *old_item) : std::nullopt;
  std::optional<int64_t> after = new_item ? ExpirySeconds(table.ttl, *new_item) : std::nullopt;
  if (before == after) return;
  if (before) tx.Clear(ExpiryKey(table.id, *before, item_key));
  if (after) tx.Set(ExpiryKey(table.id, *after, item_key), "");
}

std::pair<std::string, std::string> ExpiryRangeBefore(int64_t table_id, int64_t before_s) {
  kv::Subspace ttl = layout::Ttl(table_id);
  return {ttl.Range().first, ttl.Pack(kv::Tuple{before_s})};
}

std::pair<std::string, std::string> ExpiredRange(int64_t table_id, int64_t now_ms) {
  const int64_t now_s = now_ms / 1000;
  kv::Subspace ttl = layout::Ttl(table_id);
  return {ttl.Pack(kv::Tuple{std::max<int64_t>(0, now_s - kTtlIgnoreOlderThanSeconds)}),
          ttl.Pack(kv::Tuple{now_s})};
}

std::pair<std::string, std::string> ExpiryIndexRange(int64_t table_id) {
  return layout::Ttl(table_id).Range();
}

Result<ExpiryEntry> DecodeExpiryKey(int64_t table_id, std::string_view key) {
  kv::Subspace ttl = layout::Ttl(table_id);
  Result<kv::Tuple> t = ttl.Unpack(key);
  if (!t.ok() || t->size() != 2) return Error::Internal("malformed expiry index key");
  Result<int64_t> expiry = t->GetInt(0);
  Result<std::string> item_key = t->GetBytes(1);
  if (!expiry.ok() || !item_key.ok()) return Error::Internal("malformed expiry index key");
  return ExpiryEntry{*expiry, std::move(item_key).value()};
}

}  // namespace fdyno::store
