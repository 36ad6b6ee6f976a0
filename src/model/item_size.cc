#include "model/item_size.h"

namespace fdyno::model {

uint64_t NumberSize(const Number& number) {
  return NumberSize(number.negative(), number.digits().size(), number.exponent());
}

uint64_t NumberSize(bool negative, size_t digit_count, int exponent) {
  if (digit_count == 0) return 1;
  const uint64_t n = digit_count;
  // exponent is for 0.d1d2.. x 10^e; with d1.d2.. x 10^(e-1) the leading digit's power is
  // e - 1. When it is even (e odd) and the digit count is even, base-100 pairs straddle the
  // point and one more byte is needed.
  const int leading_power = exponent - 1;
  const bool misaligned = n % 2 == 0 && leading_power % 2 == 0;
  return 1 + (n + 1) / 2 + (misaligned ? 1 : 0) + (negative ? 1 : 0);
}

uint64_t ValueSize(const AttributeValue& value) {
  switch (value.type()) {
    case Type::kS:
      return std::get<std::string>(value.v).size();
    case Type::kN:
      return NumberSize(std::get<Number>(value.v));
    case Type::kB:
      return std::get<Binary>(value.v).bytes.size();
    case Type::kBool:
    case Type::kNull:
      return 1;
    case Type::kM: {
      const Map& m = std::get<Map>(value.v);
      uint64_t size = 3 + m.size();
      for (const auto& [name, v] : m) size += name.size() + ValueSize(v);
      return size;
    }
    case Type::kL: {
      const List& l = std::get<List>(value.v);
      uint64_t size = 3 + l.size();
      for (const auto& v : l) size += ValueSize(v);
      return size;
    }
    case Type::kSS: {
      uint64_t size = 0;
      for (const auto& s : std::get<StringSet>(value.v).members) size += s.size();
      return size;
    }
    case Type::kNS: {
      uint64_t size = 0;
      for (const auto& n : std::get<NumberSet>(value.v).members) size += NumberSize(n);
      return size;
    }
    case Type::kBS: {
      uint64_t size = 0;
      for (const auto& b : std::get<BinarySet>(value.v).members) size += b.size();
      return size;
    }
  }
  return 0;
}

uint64_t AttributeSize(std::string_view name, const AttributeValue& value) {
  return name.size() + ValueSize(value);
}

uint64_t ItemSize(const Item& item) {
  uint64_t size = 0;
  for (const auto& [name, v] : item) size += AttributeSize(name, v);
  return size;
}

Status CheckItemSize(const Item& item) {
  if (ItemSize(item) > kMaxItemSizeBytes) {
    return Error::Validation("Item size has exceeded the maximum allowed size");
  }
  return Status::Ok();
}

Status CheckUpdatedItemSize(const Item& item) {
  if (ItemSize(item) > kMaxItemSizeBytes) {
    return Error::Validation("Item size to update has exceeded the maximum allowed size");
  }
  return Status::Ok();
}

double ReadCapacityUnits(uint64_t size_bytes, bool consistent_read) {
  uint64_t units = (size_bytes + 4095) / 4096;
  if (units == 0) units = 1;
  return consistent_read ? static_cast<double>(units) : static_cast<double>(units) / 2;
}

double WriteCapacityUnits(uint64_t size_bytes) {
  uint64_t units = (size_bytes + 1023) / 1024;
  if (units == 0) units = 1;
  return static_cast<double>(units);
}

}  // namespace fdyno::model
