#include "model/attribute_value.h"

#include <algorithm>

namespace fdyno::model {
namespace {

template <typename T, typename Less>
bool SameMembers(const std::vector<T>& a, const std::vector<T>& b, Less less) {
  if (a.size() != b.size()) return false;
  std::vector<const T*> x, y;
  x.reserve(a.size());
  y.reserve(b.size());
  for (const T& m : a) x.push_back(&m);
  for (const T& m : b) y.push_back(&m);
  auto by_value = [&](const T* p, const T* q) { return less(*p, *q); };
  std::sort(x.begin(), x.end(), by_value);
  std::sort(y.begin(), y.end(), by_value);
  for (size_t i = 0; i < x.size(); ++i) {
    if (less(*x[i], *y[i]) || less(*y[i], *x[i])) return false;
  }
  return true;
}

}  // namespace

bool operator==(const StringSet& a, const StringSet& b) {
  return SameMembers(a.members, b.members, std::less<std::string>());
}

bool operator==(const NumberSet& a, const NumberSet& b) {
  return SameMembers(a.members, b.members,
                     [](const Number& x, const Number& y) { return x.Compare(y) < 0; });
}

bool operator==(const BinarySet& a, const BinarySet& b) {
  // std::string compares as unsigned bytes (char_traits<char>::compare uses memcmp
  // semantics), which is the order DynamoDB uses for binaries.
  return SameMembers(a.members, b.members, std::less<std::string>());
}

bool operator==(const AttributeValue& a, const AttributeValue& b) {
  if (a.v.index() != b.v.index()) return false;
  return std::visit(
      [&](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        return x == std::get<T>(b.v);
      },
      a.v);
}

std::string_view TypeName(Type type) {
  switch (type) {
    case Type::kS:
      return "S";
    case Type::kN:
      return "N";
    case Type::kB:
      return "B";
    case Type::kBool:
      return "BOOL";
    case Type::kNull:
      return "NULL";
    case Type::kM:
      return "M";
    case Type::kL:
      return "L";
    case Type::kSS:
      return "SS";
    case Type::kNS:
      return "NS";
    case Type::kBS:
      return "BS";
  }
  return "?";
}

}  // namespace fdyno::model
