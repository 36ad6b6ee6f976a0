// Number parser fuzzer: any text either parses or fails with a ValidationException; a parsed
// number's canonical text parses back to itself; arithmetic is exact (a + b - b == a) and
// consistent with comparison.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "model/number.h"

using fdyno::ErrorType;
using fdyno::model::Number;

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

void CheckCanonical(const Number& n) {
  const std::string text = n.ToString();
  auto again = Number::Parse(text);
  Check(again.ok());
  Check(again->ToString() == text);
  Check(again->Compare(n) == 0);
  // Canonical text: no exponent, no '+', no "-0", no leading zeros, no trailing fraction zeros.
  Check(text.find_first_of("eE+") == std::string::npos);
  Check(text != "-0");
  std::string_view body = text;
  if (!body.empty() && body[0] == '-') body.remove_prefix(1);
  Check(!body.empty());
  Check(body.size() == 1 || body[0] != '0' || body[1] == '.');
  if (body.find('.') != std::string_view::npos) Check(body.back() != '0' && body.back() != '.');
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  // One input may hold two numbers separated by '|'.
  const size_t bar = input.find('|');
  std::string_view first = input.substr(0, bar);
  auto a = Number::Parse(first);
  if (!a.ok()) {
    Check(a.error().type == ErrorType::kValidation);
    return 0;
  }
  CheckCanonical(*a);
  if (bar == std::string_view::npos) return 0;
  auto b = Number::Parse(input.substr(bar + 1));
  if (!b.ok()) return 0;
  CheckCanonical(*b);
  const int cmp = a->Compare(*b);
  Check(b->Compare(*a) == -cmp);
  auto sum = Number::Add(*a, *b);
  if (sum.ok()) {
    CheckCanonical(*sum);
    auto sum2 = Number::Add(*b, *a);
    Check(sum2.ok() && sum2->Compare(*sum) == 0);
    auto back = Number::Subtract(*sum, *b);
    // a + b - b is exact whenever both steps fit.
    if (back.ok()) Check(back->Compare(*a) == 0);
    // Adding a positive number increases the value.
    if (!b->is_zero()) Check(sum->Compare(*a) == (b->negative() ? -1 : 1));
  } else {
    Check(sum.error().type == ErrorType::kValidation);
  }
  auto diff = Number::Subtract(*a, *b);
  if (diff.ok()) {
    CheckCanonical(*diff);
    Check((diff->is_zero() ? 0 : diff->negative() ? -1 : 1) == cmp);
  }
  return 0;
}
