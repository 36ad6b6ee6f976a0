#include "model/item_codec.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <tuple>
#include <vector>

#include "model/item_reader.h"

namespace fdyno::model {
namespace {

void PutVarint(uint64_t v, std::string* out) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void PutBytes(std::string_view s, std::string* out) {
  PutVarint(s.size(), out);
  out->append(s);
}

// Number: flags byte (bit 0 negative), zigzag exponent, digit count, digits two per byte
// (high nibble first; an odd count leaves the last low nibble 0). Zero is a digit count of 0.
void PutNumber(const Number& n, std::string* out) {
  const std::string& d = n.digits();
  out->push_back(static_cast<char>(n.negative() ? 1 : 0));
  const int64_t e = n.exponent();
  PutVarint(static_cast<uint64_t>((e << 1) ^ (e >> 63)), out);
  out->push_back(static_cast<char>(d.size()));
  for (size_t i = 0; i < d.size(); i += 2) {
    const int hi = d[i] - '0';
    const int lo = i + 1 < d.size() ? d[i + 1] - '0' : 0;
    out->push_back(static_cast<char>((hi << 4) | lo));
  }
}

void PutValue(const AttributeValue& v, std::string* out);

void PutMap(const Map& m, std::string* out) {
  PutVarint(m.size(), out);
  for (const auto& [name, value] : m) {
    PutBytes(name, out);
    PutValue(value, out);
  }
}

void PutValue(const AttributeValue& v, std::string* out) {
  out->push_back(static_cast<char>(v.type()));
  switch (v.type()) {
    case Type::kS:
      PutBytes(std::get<std::string>(v.v), out);
      break;
    case Type::kN:
      PutNumber(std::get<Number>(v.v), out);
      break;
    case Type::kB:
      PutBytes(std::get<Binary>(v.v).bytes, out);
      break;
    case Type::kBool:
      out->push_back(std::get<bool>(v.v) ? 1 : 0);
      break;
    case Type::kNull:
      break;
    case Type::kM:
      PutMap(std::get<Map>(v.v), out);
      break;
    case Type::kL: {
      const List& l = std::get<List>(v.v);
      PutVarint(l.size(), out);
      for (const auto& e : l) PutValue(e, out);
      break;
    }
    case Type::kSS: {
      const auto& m = std::get<StringSet>(v.v).members;
      PutVarint(m.size(), out);
      for (const auto& e : m) PutBytes(e, out);
      break;
    }
    case Type::kNS: {
      const auto& m = std::get<NumberSet>(v.v).members;
      PutVarint(m.size(), out);
      for (const auto& e : m) PutNumber(e, out);
      break;
    }
    case Type::kBS: {
      const auto& m = std::get<BinarySet>(v.v).members;
      PutVarint(m.size(), out);
      for (const auto& e : m) PutBytes(e, out);
      break;
    }
  }
}

// Whether a set's members repeat (sets are stored without duplicates; one that has them is
// not our encoding).
template <typename T, typename Less>
bool HasDuplicates(const std::vector<T>& members, Less less) {
  if (members.size() < 2) return false;
  std::vector<const T*> sorted;
  sorted.reserve(members.size());
  for (const T& m : members) sorted.push_back(&m);
  std::sort(sorted.begin(), sorted.end(), [&](const T* a, const T* b) { return less(*a, *b); });
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (!less(*sorted[i - 1], *sorted[i])) return true;
  }
  return false;
}

class Reader : public StoredReader {
 public:
  using StoredReader::StoredReader;

  Result<Number> ReadNumber() {
    NumberParts n;
    FDYNO_RETURN_IF_ERROR(ReadNumberParts(&n));
    if (n.count == 0) return Number();
    return Number::FromParts(n.negative, std::string(n.digits_view()), n.exponent);
  }

  // Reads a map into *m (empty on entry).
  Status ReadMap(int depth, Map* m) {
    FDYNO_ASSIGN_OR_RETURN(size_t n, Count(2));
    for (size_t i = 0; i < n; ++i) {
      FDYNO_ASSIGN_OR_RETURN(std::string_view name, Bytes());
      // Names are written in sorted order; anything else is not our encoding.
      if (!m->empty() && !(std::string_view(m->rbegin()->first) < name)) {
        return Corrupt("map names out of order");
      }
      auto it = m->emplace_hint(m->end(), std::piecewise_construct, std::forward_as_tuple(name),
                                std::forward_as_tuple());
      FDYNO_RETURN_IF_ERROR(ReadValue(depth, &it->second));
    }
    return Status::Ok();
  }

  // Reads one value into *out, decoding in place to avoid moving values around.
  Status ReadValue(int depth, AttributeValue* out) {
    if (depth > kMaxDecodeDepth) return Corrupt("nesting too deep");
    FDYNO_ASSIGN_OR_RETURN(uint8_t tag, Byte());
    switch (static_cast<Type>(tag)) {
      case Type::kS: {
        FDYNO_ASSIGN_OR_RETURN(std::string_view s, Bytes());
        out->v.emplace<std::string>(s);
        return Status::Ok();
      }
      case Type::kN: {
        FDYNO_ASSIGN_OR_RETURN(Number n, ReadNumber());
        out->v.emplace<Number>(std::move(n));
        return Status::Ok();
      }
      case Type::kB: {
        FDYNO_ASSIGN_OR_RETURN(std::string_view s, Bytes());
        out->v.emplace<Binary>(Binary{std::string(s)});
        return Status::Ok();
      }
      case Type::kBool: {
        FDYNO_ASSIGN_OR_RETURN(uint8_t b, Byte());
        if (b > 1) return Corrupt("bool");
        out->v.emplace<bool>(b == 1);
        return Status::Ok();
      }
      case Type::kNull:
        out->v.emplace<Null>();
        return Status::Ok();
      case Type::kM:
        return ReadMap(depth + 1, &out->v.emplace<Map>());
      case Type::kL: {
        FDYNO_ASSIGN_OR_RETURN(size_t n, Count(1));
        List& l = out->v.emplace<List>();
        l.resize(n);
        for (size_t i = 0; i < n; ++i) FDYNO_RETURN_IF_ERROR(ReadValue(depth + 1, &l[i]));
        return Status::Ok();
      }
      case Type::kSS:
      case Type::kBS: {
        FDYNO_ASSIGN_OR_RETURN(size_t n, Count(1));
        if (n == 0) return Corrupt("empty set");
        std::vector<std::string>& members = static_cast<Type>(tag) == Type::kSS
                                                ? out->v.emplace<StringSet>().members
                                                : out->v.emplace<BinarySet>().members;
        members.reserve(n);
        for (size_t i = 0; i < n; ++i) {
          FDYNO_ASSIGN_OR_RETURN(std::string_view s, Bytes());
          members.emplace_back(s);
        }
        if (HasDuplicates(members, std::less<>())) return Corrupt("duplicate set member");
        return Status::Ok();
      }
      case Type::kNS: {
        FDYNO_ASSIGN_OR_RETURN(size_t n, Count(3));
        if (n == 0) return Corrupt("empty set");
        std::vector<Number>& members = out->v.emplace<NumberSet>().members;
        members.reserve(n);
        for (size_t i = 0; i < n; ++i) {
          FDYNO_ASSIGN_OR_RETURN(Number num, ReadNumber());
          members.push_back(std::move(num));
        }
        if (HasDuplicates(members, [](const Number& a, const Number& b) { return a < b; })) {
          return Corrupt("duplicate set member");
        }
        return Status::Ok();
      }
    }
    return Corrupt("unknown type tag " + std::to_string(tag));
  }
};

}  // namespace

void AppendStoredItem(const Item& item, std::string* out) {
  out->push_back(static_cast<char>(kItemFormatCurrent));
  PutMap(item, out);
}

std::string EncodeStoredItem(const Item& item) {
  std::string out;
  AppendStoredItem(item, &out);
  return out;
}

Result<Item> DecodeStoredItem(std::string_view bytes) {
  Reader r(bytes);
  FDYNO_RETURN_IF_ERROR(r.CheckVersion());
  Item item;
  FDYNO_RETURN_IF_ERROR(r.ReadMap(0, &item));
  if (!r.done()) return Corrupt("trailing bytes");
  return item;
}

std::string EncodeStoredValue(const AttributeValue& value) {
  std::string out;
  out.push_back(static_cast<char>(kItemFormatCurrent));
  PutValue(value, &out);
  return out;
}

Result<AttributeValue> DecodeStoredValue(std::string_view bytes) {
  Reader r(bytes);
  FDYNO_RETURN_IF_ERROR(r.CheckVersion());
  AttributeValue v;
  FDYNO_RETURN_IF_ERROR(r.ReadValue(0, &v));
  if (!r.done()) return Corrupt("trailing bytes");
  return v;
}

}  // namespace fdyno::model
