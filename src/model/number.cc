#include "model/number.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <vector>

namespace fdyno::model {
namespace {

// Normalized exponent bounds: value = 0.d1d2... x 10^exponent.
// 1E-130 = 0.1 x 10^-129 and 9.99..E+125 = 0.999.. x 10^126.
constexpr int kMinExponent = -129;
constexpr int kMaxExponent = 126;
constexpr size_t kMaxDigits = 38;

constexpr std::string_view kInvalidMessage = "The parameter cannot be converted to a numeric value";
constexpr std::string_view kOverflowMessage =
    "Number overflow. Attempting to store a number with magnitude larger than supported range";
constexpr std::string_view kUnderflowMessage =
    "Number underflow. Attempting to store a number with magnitude smaller than supported range";
constexpr std::string_view kPrecisionMessage =
    "Attempting to store more than 38 significant digits in a Number";

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Checks the limits in DynamoDB's order: overflow, underflow, then precision.
Status CheckLimits(const std::string& digits, long long exponent) {
  if (digits.empty()) return Status::Ok();
  if (exponent > kMaxExponent) return Error::Validation(std::string(kOverflowMessage));
  if (exponent < kMinExponent) return Error::Validation(std::string(kUnderflowMessage));
  if (digits.size() > kMaxDigits) return Error::Validation(std::string(kPrecisionMessage));
  return Status::Ok();
}

// Exponent values are clamped here: anything beyond this is over/underflow regardless of
// the mantissa (mantissas are bounded by the request size, far below this).
constexpr long long kExponentClamp = 1'000'000'000'000LL;

}  // namespace

Result<Number> Number::Parse(std::string_view text) {
  if (text.empty()) return Error::Validation(std::string(kInvalidMessage));
  auto invalid = [&]() {
    return Error::Validation(std::string(kInvalidMessage) + ": " + std::string(text));
  };
  size_t i = 0;
  const size_t n = text.size();
  bool negative = false;
  // DynamoDB accepts an explicit sign on the mantissa, '+' included.
  if (text[i] == '-' || text[i] == '+') {
    negative = text[i] == '-';
    ++i;
  }
  // Mantissa: digits [. digits] or . digits.
  std::string digits;
  digits.reserve(std::min<size_t>(n, 64));
  long long int_digits = 0;              // digits before the point, after leading zeros are dropped
  long long leading_fraction_zeros = 0;  // zeros right after the point before any digit
  long long fraction_digits = 0;         // every digit after the point
  bool any_digit = false;
  bool seen_nonzero = false;
  for (; i < n && IsDigit(text[i]); ++i) {
    any_digit = true;
    if (!seen_nonzero && text[i] == '0') continue;
    seen_nonzero = true;
    digits.push_back(text[i]);
    ++int_digits;
  }
  if (i < n && text[i] == '.') {
    ++i;
    for (; i < n && IsDigit(text[i]); ++i) {
      any_digit = true;
      ++fraction_digits;
      if (!seen_nonzero && text[i] == '0') {
        ++leading_fraction_zeros;
        continue;
      }
      seen_nonzero = true;
      digits.push_back(text[i]);
    }
  }
  if (!any_digit) return invalid();
  long long exp10 = 0;
  if (i < n && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exp_negative = false;
    if (i < n && (text[i] == '+' || text[i] == '-')) {
      exp_negative = text[i] == '-';
      ++i;
    }
    if (i >= n || !IsDigit(text[i])) return invalid();
    for (; i < n && IsDigit(text[i]); ++i) {
      if (exp10 < kExponentClamp) exp10 = exp10 * 10 + (text[i] - '0');
    }
    if (exp_negative) exp10 = -exp10;
  }
  if (i != n) return invalid();
  // Strip trailing zeros (they are not significant).
  while (!digits.empty() && digits.back() == '0') digits.pop_back();
  if (digits.empty()) {
    // Zero, whatever its sign, within the range as written: its one digit at the exponent its
    // fraction digits and exponent give it (as a decimal's precision minus its scale).
    FDYNO_RETURN_IF_ERROR(CheckLimits("0", 1 - fraction_digits + exp10));
    return Number();
  }
  // 0.d1d2... x 10^exponent: integer digits shift the point right, leading fractional zeros
  // shift it left.
  long long exponent = (int_digits > 0 ? int_digits : -leading_fraction_zeros) + exp10;
  FDYNO_RETURN_IF_ERROR(CheckLimits(digits, exponent));
  return FromParts(negative, std::move(digits), static_cast<int>(exponent));
}

Number Number::FromParts(bool negative, std::string digits, int exponent) {
  Number n;
  assert(digits.empty() || (digits.front() != '0' && digits.back() != '0'));
  if (digits.empty()) return n;
  n.negative_ = negative;
  n.digits_ = std::move(digits);
  n.exponent_ = exponent;
  return n;
}

std::string Number::ToString() const {
  std::string out;
  AppendText(negative_, digits_, exponent_, &out);
  return out;
}

void Number::AppendText(bool negative, std::string_view digits, int exponent, std::string* out) {
  if (digits.empty()) {
    out->push_back('0');
    return;
  }
  const int len = static_cast<int>(digits.size());
  out->reserve(out->size() + static_cast<size_t>(len + std::abs(exponent) + 3));
  if (negative) out->push_back('-');
  if (exponent <= 0) {
    out->append("0.");
    out->append(static_cast<size_t>(-exponent), '0');
    out->append(digits);
  } else if (exponent >= len) {
    out->append(digits);
    out->append(static_cast<size_t>(exponent - len), '0');
  } else {
    out->append(digits.substr(0, static_cast<size_t>(exponent)));
    out->push_back('.');
    out->append(digits.substr(static_cast<size_t>(exponent)));
  }
}

namespace {

// Compares magnitudes of two nonzero normalized numbers.
int CompareMagnitude(const std::string& da, int ea, const std::string& db, int eb) {
  if (ea != eb) return ea < eb ? -1 : 1;
  // Digit strings have no trailing zeros, so plain lexicographic order is numeric order.
  int c = da.compare(db);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

}  // namespace

int Number::Compare(const Number& other) const {
  const bool za = is_zero(), zb = other.is_zero();
  if (za && zb) return 0;
  const int sa = za ? 0 : (negative_ ? -1 : 1);
  const int sb = zb ? 0 : (other.negative_ ? -1 : 1);
  if (sa != sb) return sa < sb ? -1 : 1;
  int m = CompareMagnitude(digits_, exponent_, other.digits_, other.exponent_);
  return sa < 0 ? -m : m;
}

Result<Number> Number::Add(const Number& a, const Number& b) {
  if (a.is_zero()) return b;
  if (b.is_zero()) return a;
  // Align both on a common grid of decimal positions from `high` (exclusive exponent) down
  // to `low`.
  const int len_a = static_cast<int>(a.digits_.size());
  const int len_b = static_cast<int>(b.digits_.size());
  const int high = std::max(a.exponent_, b.exponent_);
  const int low = std::min(a.exponent_ - len_a, b.exponent_ - len_b);
  const int width = high - low;
  // Position 0 is the least significant digit.
  std::vector<int> x(static_cast<size_t>(width) + 1, 0), y(static_cast<size_t>(width) + 1, 0);
  auto place = [&](std::vector<int>& v, const std::string& d, int exponent) {
    // Digit k (0-based from the left) has positional weight exponent - 1 - k.
    for (size_t k = 0; k < d.size(); ++k) {
      v[static_cast<size_t>(exponent - 1 - static_cast<int>(k) - low)] = d[k] - '0';
    }
  };
  place(x, a.digits_, a.exponent_);
  place(y, b.digits_, b.exponent_);
  bool negative;
  std::vector<int> r(static_cast<size_t>(width) + 1, 0);
  if (a.negative_ == b.negative_) {
    negative = a.negative_;
    int carry = 0;
    for (size_t k = 0; k < r.size(); ++k) {
      int s = x[k] + y[k] + carry;
      r[k] = s % 10;
      carry = s / 10;
    }
    assert(carry == 0);
  } else {
    int m = CompareMagnitude(a.digits_, a.exponent_, b.digits_, b.exponent_);
    if (m == 0) return Number();
    const std::vector<int>& big = m > 0 ? x : y;
    const std::vector<int>& small = m > 0 ? y : x;
    negative = m > 0 ? a.negative_ : b.negative_;
    int borrow = 0;
    for (size_t k = 0; k < r.size(); ++k) {
      int s = big[k] - small[k] - borrow;
      borrow = s < 0 ? 1 : 0;
      r[k] = s + 10 * borrow;
    }
    assert(borrow == 0);
  }
  // r[width] is the digit with weight `high`; the exponent of a digit at position p is
  // p + low + 1 in 0.d form.
  int top = width;
  while (top >= 0 && r[static_cast<size_t>(top)] == 0) --top;
  assert(top >= 0);
  int bottom = 0;
  while (r[static_cast<size_t>(bottom)] == 0) ++bottom;
  std::string digits;
  digits.reserve(static_cast<size_t>(top - bottom + 1));
  for (int p = top; p >= bottom; --p)
    digits.push_back(static_cast<char>('0' + r[static_cast<size_t>(p)]));
  const long long exponent = static_cast<long long>(top) + low + 1;
  FDYNO_RETURN_IF_ERROR(CheckLimits(digits, exponent));
  return FromParts(negative, std::move(digits), static_cast<int>(exponent));
}

Result<Number> Number::Subtract(const Number& a, const Number& b) {
  Number neg = b;
  if (!neg.is_zero()) neg.negative_ = !neg.negative_;
  return Add(a, neg);
}

}  // namespace fdyno::model
