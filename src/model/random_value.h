// Seeded random AttributeValues for tests and fuzzers: every type, nesting, edge-case strings
// and numbers. Values are always valid by DynamoDB's rules (non-empty sets without duplicates,
// numbers within limits). Header-only; not for production code.
#pragma once

#include <random>
#include <set>
#include <string>

#include "model/attribute_value.h"

namespace fdyno::model {

class RandomValues {
 public:
  explicit RandomValues(uint64_t seed) : rng_(seed) {}

  int Int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  std::string Bytes(int max_len = 8) {
    static const char kAlphabet[] = {'\0',   '\x01', 'a',    'b',    'Z',    '\x7f',
                                     '\x80', '\xc3', '\xa9', '\xfe', '\xff', ' '};
    std::string s;
    const int n = Int(0, max_len);
    for (int i = 0; i < n; ++i) s.push_back(kAlphabet[Int(0, sizeof(kAlphabet) - 1)]);
    return s;
  }

  Number Num() {
    if (Int(0, 10) == 0) return Number();
    std::string d;
    const int len = Int(0, 3) == 0 ? Int(1, 38) : Int(1, 4);
    for (int i = 0; i < len; ++i) d.push_back(static_cast<char>('0' + Int(0, 9)));
    while (!d.empty() && d.back() == '0') d.pop_back();
    while (!d.empty() && d.front() == '0') d.erase(d.begin());
    if (d.empty()) d = "3";
    const int e = Int(0, 4) == 0 ? Int(-129, 126) : Int(-4, 6);
    return Number::FromParts(Int(0, 1) == 1, d, e);
  }

  AttributeValue Value(int depth = 0) {
    const int max_type = depth >= 4 ? 4 : 9;
    int t = Int(0, max_type);
    if (depth >= 4 && t >= 5) t = 0;
    switch (t) {
      case 0:
        return AttributeValue::S(Bytes());
      case 1:
        return AttributeValue::N(Num());
      case 2:
        return AttributeValue::B(Bytes());
      case 3:
        return AttributeValue::Bool(Int(0, 1) == 1);
      case 4:
        return AttributeValue::MakeNull();
      case 5: {
        Map m;
        const int n = Int(0, 4);
        for (int i = 0; i < n; ++i) m[Bytes(4)] = Value(depth + 1);
        return AttributeValue::M(std::move(m));
      }
      case 6: {
        List l;
        const int n = Int(0, 4);
        for (int i = 0; i < n; ++i) l.push_back(Value(depth + 1));
        return AttributeValue::L(std::move(l));
      }
      case 7:
      case 9: {
        std::set<std::string> seen;
        std::vector<std::string> members;
        const int n = Int(1, 5);
        for (int i = 0; i < n; ++i) {
          std::string s = Bytes();
          if (seen.insert(s).second) members.push_back(std::move(s));
        }
        if (t == 7) return {StringSet{std::move(members)}};
        return {BinarySet{std::move(members)}};
      }
      default: {
        std::vector<Number> members;
        const int n = Int(1, 5);
        for (int i = 0; i < n; ++i) {
          Number x = Num();
          bool dup = false;
          for (const auto& m : members) dup = dup || m == x;
          if (!dup) members.push_back(std::move(x));
        }
        return {NumberSet{std::move(members)}};
      }
    }
  }

  Item RandomItem() {
    Item item;
    const int n = Int(0, 8);
    for (int i = 0; i < n; ++i) item[Bytes(6)] = Value();
    return item;
  }

 private:
  std::mt19937_64 rng_;
};

}  // namespace fdyno::model
