// Number: a DynamoDB number. Up to 38 significant decimal digits, magnitude from 1E-130 to
// 9.9999999999999999999999999999999999999E+125, or zero. Exact: stored as sign, significant
// digits and a decimal exponent, never as binary floating point.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace fdyno::model {

class Number {
 public:
  Number() = default;  // zero

  // Parses DynamoDB's number syntax ("-12.5e3", "0.001"), with DynamoDB's errors (type
  // ValidationException and DynamoDB's exact messages) for bad syntax, more than 38
  // significant digits, overflow and underflow.
  static Result<Number> Parse(std::string_view text);

  // The canonical text DynamoDB returns for this number (e.g. "1E+2" stored is returned as
  // "100"; trailing fractional zeros dropped; "-0" is "0").
  std::string ToString() const;
  // The same text for a number given by its parts (see digits() and exponent()), appended.
  static void AppendText(bool negative, std::string_view digits, int exponent, std::string* out);

  // Exact arithmetic with DynamoDB's overflow / underflow / precision errors.
  static Result<Number> Add(const Number& a, const Number& b);
  static Result<Number> Subtract(const Number& a, const Number& b);

  // <0, 0, >0 by numeric value.
  int Compare(const Number& other) const;
  bool operator==(const Number& other) const { return Compare(other) == 0; }
  bool operator<(const Number& other) const { return Compare(other) < 0; }

  bool is_zero() const { return digits_.empty(); }
  bool negative() const { return negative_; }
  // Significant digits without leading or trailing zeros ("" for zero).
  const std::string& digits() const { return digits_; }
  // Value = 0.d1d2d3... x 10^exponent (normalized; meaningless for zero).
  int exponent() const { return exponent_; }

  // Builds from parts. REQUIRES: digits has no leading/trailing '0' and is within limits.
  static Number FromParts(bool negative, std::string digits, int exponent);

 private:
  bool negative_ = false;
  std::string digits_;
  int exponent_ = 0;
};

}  // namespace fdyno::model
