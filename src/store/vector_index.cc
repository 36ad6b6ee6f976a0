#include "store/vector_index.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "kv/tuple.h"
#include "model/item_codec.h"
#include "model/item_size.h"
#include "model/key_codec.h"
#include "store/layout.h"
#include "store/vector_journal.h"

namespace fdyno::store {
namespace {

using model::AttributeValue;
using model::Item;

constexpr size_t kEntryHeaderBytes = 1 + 4;
constexpr std::string_view kInvalid = "One or more parameter values were invalid: ";

const AttributeValue* Find(const Item& item, const std::string& name) {
  auto it = item.find(name);
  return it == item.end() ? nullptr : &it->second;
}

bool HasType(const AttributeValue& v, ScalarType type) { return v.type() == model::ToType(type); }

bool IsEmptyScalar(const AttributeValue& v) {
  return (v.type() == model::Type::kS && std::get<std::string>(v.v).empty()) ||
         (v.type() == model::Type::kB && std::get<model::Binary>(v.v).bytes.empty());
}

// The float32 nearest to number `n`; nullopt beyond the float32 range (values below its
// smallest magnitude round to zero, as any float32 conversion does). Every write of a vector
// converts its numbers once, so the common case reads the digits in place (std::from_chars is
// correctly rounded, as strtof is) and only what it declines goes through strtof.
std::optional<float> ToFloat(const model::Number& n) {
  if (n.is_zero()) return 0.0f;
  // digits x 10^(exponent - digits): at most 38 digits, a sign, 'e' and a 4-digit exponent.
  char text[64];
  char* end = text;
  if (n.negative()) *end++ = '-';
  end = std::copy(n.digits().begin(), n.digits().end(), end);
  *end++ = 'e';
  end = std::to_chars(end, text + sizeof text, n.exponent() - static_cast<int>(n.digits().size()))
            .ptr;
  float f = 0;
  if (auto [ptr, ec] = std::from_chars(text, end, f); ec == std::errc() && ptr == end) return f;
  const std::string canonical = n.ToString();
  f = std::strtof(canonical.c_str(), nullptr);
  if (std::isinf(f)) return std::nullopt;
  return f;
}

// Whether number `n` is within the float32 range (ToFloat has a value), mostly without
// converting it: |n| < 10^38 < FLT_MAX, and |n| >= 10^39 > FLT_MAX rounded up.
bool InFloatRange(const model::Number& n) {
  if (n.is_zero() || n.exponent() <= 38) return true;
  if (n.exponent() >= 40) return false;
  return ToFloat(n).has_value();
}

// Whether `value` is a valid vector of `dimensions` (ParseVector has a value), without
// converting its numbers.
bool IsVector(const AttributeValue& value, int64_t dimensions) {
  if (value.type() != model::Type::kL) return false;
  const model::List& list = std::get<model::List>(value.v);
  if (static_cast<int64_t>(list.size()) != dimensions) return false;
  return std::all_of(list.begin(), list.end(), [](const AttributeValue& e) {
    return e.type() == model::Type::kN && InFloatRange(std::get<model::Number>(e.v));
  });
}

// Why `value` is not a valid vector of `index`, or nullopt when it is one (messages:
// docs/compatibility.md).
std::optional<std::string> VectorProblem(const VectorIndex& index, const AttributeValue& value) {
  const std::string& attr = index.attribute;
  // The messages are built only for the invalid vector (this runs on every write of one).
  auto suffix = [&] { return " IndexName: " + index.name; };
  auto element = [&](size_t i) { return attr + "[" + std::to_string(i) + "]"; };
  if (value.type() != model::Type::kL) {
    return std::string(kInvalid) + "Type mismatch for vector attribute " + attr +
           " Expected: L Actual: " + std::string(model::TypeName(value.type())) + suffix();
  }
  const model::List& list = std::get<model::List>(value.v);
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i].type() != model::Type::kN) {
      return std::string(kInvalid) + "Type mismatch for vector attribute " + element(i) +
             " Expected: N Actual: " + std::string(model::TypeName(list[i].type())) + suffix();
    }
    if (!InFloatRange(std::get<model::Number>(list[i].v))) {
      return std::string(kInvalid) + "Vector attribute " + element(i) + " value " +
             std::get<model::Number>(list[i].v).ToString() +
             " is out of range for a 32-bit float." + suffix();
    }
  }
  if (static_cast<int64_t>(list.size()) != index.dimensions) {
    return std::string(kInvalid) + "Vector attribute " + attr + " has " +
           std::to_string(list.size()) + " dimensions, but the index requires " +
           std::to_string(index.dimensions) + "." + suffix();
  }
  return std::nullopt;
}

// Whether attribute `name` differs between `item` and `before` (always, without `before`).
bool Changed(const Item& item, const Item* before, const std::string& name) {
  if (before == nullptr) return true;
  const AttributeValue* now = Find(item, name);
  const AttributeValue* old = Find(*before, name);
  return now != nullptr && (old == nullptr || !(*old == *now));
}

// The first problem of `item` in `index`, as the error to return, or nullopt.
std::optional<Error> ProblemIn(const VectorIndex& index, const Item& item, const Item* before) {
  if (const AttributeValue* v = Find(item, index.attribute);
      v != nullptr && Changed(item, before, index.attribute)) {
    if (std::optional<std::string> p = VectorProblem(index, *v)) {
      return Error::Validation(*p).WithCause(ErrorCause::kIndexKeyMismatch);
    }
  }
  for (const SearchSchemaElement& e : index.search_schema) {
    const AttributeValue* v = Find(item, e.attribute.name);
    if (v == nullptr || !Changed(item, before, e.attribute.name)) continue;
    if (!HasType(*v, e.attribute.type)) {
      return Error::Validation(std::string(kInvalid) + "Type mismatch for Index Key " +
                               e.attribute.name +
                               " Expected: " + std::string(ScalarTypeName(e.attribute.type)) +
                               " Actual: " + std::string(model::TypeName(v->type())) +
                               " IndexName: " + index.name)
          .WithCause(ErrorCause::kIndexKeyMismatch);
    }
    if (e.role == SearchRole::kHash && IsEmptyScalar(*v)) {
      const std::string kind = v->type() == model::Type::kS ? "string" : "binary";
      return Error::Validation(
                 "One or more parameter values are not valid. A value specified for a secondary "
                 "index key is not supported. The AttributeValue for a key attribute cannot "
                 "contain an empty " +
                 kind + " value. IndexName: " + index.name + ", IndexKey: " + e.attribute.name)
          .WithCause(ErrorCause::kIndexKeyEmpty);
    }
  }
  return std::nullopt;
}

std::string ItemKeySuffix(int64_t table_id, std::string_view item_key) {
  const std::string prefix = layout::Items(table_id).key();
  return std::string(item_key.substr(std::min(prefix.size(), item_key.size())));
}

std::string HashElement(const AttributeValue& hash) {
  return kv::Tuple().AddBytes(model::EncodeKeyValue(hash)).Pack();
}

// The packed length of the bytes element at the start of `packed` (0x01, escaped bytes, 0x00);
// 0 when it is not one.
size_t BytesElementLength(std::string_view packed) {
  if (packed.empty() || packed[0] != '\x01') return 0;
  for (size_t i = 1; i < packed.size(); ++i) {
    if (packed[i] != '\0') continue;
    if (i + 1 < packed.size() && packed[i + 1] == '\xff') {
      ++i;  // an escaped zero byte
      continue;
    }
    return i + 1;
  }
  return 0;
}

// Where an item's entry is and what it holds but the float32 values: its key, its INLINE_FILTER
// attributes, and its vector attribute (a valid vector, not yet converted).
struct EntryPlace {
  std::string key;
  Item filters;
  const model::List* vector = nullptr;
};

std::optional<EntryPlace> PlaceOf(const TableInfo& table, const VectorIndex& index,
                                  std::string_view item_key, const Item& item) {
  const AttributeValue* v = Find(item, index.attribute);
  if (v == nullptr || !IsVector(*v, index.dimensions)) return std::nullopt;
  EntryPlace e;
  e.key = layout::VectorIndex(table.id, index.id).key();
  for (const SearchSchemaElement& s : index.search_schema) {
    const AttributeValue* a = Find(item, s.attribute.name);
    const bool typed = a != nullptr && HasType(*a, s.attribute.type);
    if (s.role == SearchRole::kHash) {
      if (!typed) return std::nullopt;
      e.key += HashElement(*a);
    } else if (typed) {
      e.filters.emplace(s.attribute.name, *a);
    }
  }
  e.key += ItemKeySuffix(table.id, item_key);
  e.vector = &std::get<model::List>(v->v);
  return e;
}

// The float32 values of a list IsVector accepted.
std::vector<float> Floats(const model::List& vector) {
  std::vector<float> out;
  out.reserve(vector.size());
  for (const AttributeValue& e : vector) {
    out.push_back(ToFloat(std::get<model::Number>(e.v)).value_or(0.0f));
  }
  return out;
}

std::string EntryValue(const std::vector<float>& vec, const Item& filters) {
  const uint32_t dims = static_cast<uint32_t>(vec.size());
  std::string value;
  value.reserve(kEntryHeaderBytes + dims * sizeof(float) + 16);
  value.push_back(static_cast<char>(kVectorEntryVersion));
  for (int i = 0; i < 4; ++i) value.push_back(static_cast<char>((dims >> (8 * i)) & 0xFF));
  // Little-endian float32 (the host order of every platform fdyno builds on).
  value.append(reinterpret_cast<const char*>(vec.data()), dims * sizeof(float));
  value += model::EncodeStoredItem(filters);
  return value;
}

// Whether `old_vector` has the float32 values `now` (bit for bit, as the stored entries are
// compared). A number equal to the new one has its value; the others are converted only up to
// the first that differs, so a replaced vector costs one conversion, not Dimensions.
bool SameFloats(const model::List& old_vector, const model::List& new_vector,
                const std::vector<float>& now) {
  for (size_t i = 0; i < now.size(); ++i) {
    const model::Number& was = std::get<model::Number>(old_vector[i].v);
    if (was == std::get<model::Number>(new_vector[i].v)) continue;
    const float f = ToFloat(was).value_or(0.0f);
    if (std::memcmp(&f, &now[i], sizeof f) != 0) return false;
  }
  return true;
}

}  // namespace

bool VectorIndexIsMaintained(const VectorIndex& index) {
  return index.status != IndexStatus::kDeleting;
}

std::optional<std::vector<float>> ParseVector(const AttributeValue& value, int64_t dimensions) {
  if (!IsVector(value, dimensions)) return std::nullopt;
  return Floats(std::get<model::List>(value.v));
}

Status ValidateVectorAttributes(const TableInfo& table, const Item& item, const Item* before) {
  const VectorIndex* worst = nullptr;
  std::optional<Error> error;
  for (const VectorIndex& index : table.vector_indexes) {
    if (!VectorIndexIsMaintained(index)) continue;
    if (worst != nullptr && worst->name <= index.name) continue;
    if (std::optional<Error> e = ProblemIn(index, item, before)) {
      worst = &index;
      error = std::move(e);
    }
  }
  if (error) return std::move(*error);
  return Status::Ok();
}

bool HasVectorEntry(const VectorIndex& index, const Item& item) {
  const AttributeValue* v = Find(item, index.attribute);
  if (v == nullptr || !IsVector(*v, index.dimensions)) return false;
  const SearchSchemaElement* hash = index.Hash();
  if (hash == nullptr) return true;
  const AttributeValue* h = Find(item, hash->attribute.name);
  return h != nullptr && HasType(*h, hash->attribute.type);
}

void UpdateVectorIndex(kv::Transaction& tx, const TableInfo& table, const VectorIndex& index,
                       std::string_view item_key, const Item* old_item, const Item* new_item) {
  std::optional<EntryPlace> before, after;
  if (old_item != nullptr) before = PlaceOf(table, index, item_key, *old_item);
  if (new_item != nullptr) after = PlaceOf(table, index, item_key, *new_item);
  // Every entry set or cleared is journaled in the same transaction (store/vector_journal.h).
  if (before && (!after || after->key != before->key)) {
    tx.Clear(before->key);
    JournalVectorEntryChange(tx, table, index, before->key);
  }
  if (!after) return;
  const std::vector<float> vec = Floats(*after->vector);
  // An unchanged entry (same key, filters and float32 values) is not rewritten.
  if (before && before->key == after->key && before->filters == after->filters &&
      SameFloats(*before->vector, *after->vector, vec)) {
    return;
  }
  tx.Set(after->key, EntryValue(vec, after->filters));
  JournalVectorEntryChange(tx, table, index, after->key);
}

void UpdateVectorIndexes(kv::Transaction& tx, const TableInfo& table, std::string_view item_key,
                         const Item* old_item, const Item* new_item) {
  for (const VectorIndex& index : table.vector_indexes) {
    if (VectorIndexIsMaintained(index)) {
      UpdateVectorIndex(tx, table, index, item_key, old_item, new_item);
    }
  }
}

std::pair<std::string, std::string> VectorIndexRange(const TableInfo& table,
                                                     const VectorIndex& index,
                                                     const AttributeValue* hash) {
  kv::Subspace space = layout::VectorIndex(table.id, index.id);
  if (hash == nullptr) return space.Range();
  std::string begin = space.key() + HashElement(*hash);
  std::string end = begin + '\xff';
  return {std::move(begin), std::move(end)};
}

Result<VectorEntryView> ParseVectorEntry(std::string_view value) {
  if (value.size() < kEntryHeaderBytes || static_cast<uint8_t>(value[0]) != kVectorEntryVersion) {
    return Error::Internal("vector index entry of an unknown format");
  }
  VectorEntryView out;
  for (int i = 0; i < 4; ++i) {
    out.dimensions |= static_cast<uint32_t>(static_cast<uint8_t>(value[1 + i])) << (8 * i);
  }
  const size_t floats = static_cast<size_t>(out.dimensions) * sizeof(float);
  if (value.size() < kEntryHeaderBytes + floats) {
    return Error::Internal("vector index entry is truncated");
  }
  out.floats = value.data() + kEntryHeaderBytes;
  out.filters = value.substr(kEntryHeaderBytes + floats);
  return out;
}

Result<std::string> ItemKeyOfEntry(const TableInfo& table, const VectorIndex& index,
                                   std::string_view entry_key) {
  const std::string prefix = layout::VectorIndex(table.id, index.id).key();
  if (entry_key.substr(0, prefix.size()) != prefix) {
    return Error::Internal("vector index entry key outside its index");
  }
  std::string_view rest = entry_key.substr(prefix.size());
  if (index.Hash() != nullptr) {
    const size_t n = BytesElementLength(rest);
    if (n == 0) return Error::Internal("vector index entry key without its partition");
    rest.remove_prefix(n);
  }
  return layout::Items(table.id).key() + std::string(rest);
}

bool VectorIndexProjects(const TableInfo& table, const VectorIndex& index,
                         const std::string& name) {
  if (index.projection.type == ProjectionType::kAll || name == index.attribute) return true;
  for (const model::KeyAttribute& a : table.key_schema.Attributes()) {
    if (a.name == name) return true;
  }
  for (const SearchSchemaElement& e : index.search_schema) {
    if (e.attribute.name == name) return true;
  }
  const auto& include = index.projection.non_key_attributes;
  return index.projection.type == ProjectionType::kInclude &&
         std::find(include.begin(), include.end(), name) != include.end();
}

Item ProjectForVectorIndex(const TableInfo& table, const VectorIndex& index, const Item& item) {
  if (index.projection.type == ProjectionType::kAll) return item;
  Item out;
  for (const auto& [name, value] : item) {
    if (VectorIndexProjects(table, index, name)) out.emplace(name, value);
  }
  return out;
}

std::optional<uint64_t> VectorWriteBytes(const TableInfo& table, const VectorIndex& index,
                                         const Item* old_item, const Item* new_item) {
  std::optional<Item> before, after;
  if (old_item != nullptr && HasVectorEntry(index, *old_item)) {
    before = ProjectForVectorIndex(table, index, *old_item);
  }
  if (new_item != nullptr && HasVectorEntry(index, *new_item)) {
    after = ProjectForVectorIndex(table, index, *new_item);
  }
  if (!before && !after) return std::nullopt;
  if (before && after && *before == *after) return std::nullopt;
  if (!after) {
    uint64_t bytes = 0;
    for (const model::KeyAttribute& a : table.key_schema.Attributes()) {
      bytes += model::AttributeSize(a.name, before->at(a.name));
    }
    return bytes;
  }
  after->erase(index.attribute);
  return static_cast<uint64_t>(index.dimensions) * sizeof(float) + model::ItemSize(*after);
}

}  // namespace fdyno::store
