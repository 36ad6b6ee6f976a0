// Short constructors of AttributeValues for tests: S("x"), N(1), N("1.5"). Test-only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "model/attribute_value.h"
#include "model/number.h"

namespace fdyno::test {

inline model::AttributeValue S(std::string s) { return model::AttributeValue::S(std::move(s)); }
inline model::AttributeValue N(std::string_view text) {
  return model::AttributeValue::N(model::Number::Parse(text).value());
}
inline model::AttributeValue N(int64_t n) { return N(std::to_string(n)); }

}  // namespace fdyno::test
