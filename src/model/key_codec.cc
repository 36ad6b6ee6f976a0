#include "model/key_codec.h"

#include <cassert>

namespace fdyno::model {
namespace {

// Numbers: 0.d1d2... x 10^e with e in [-129, 126], so e + 129 fits one byte exactly.
constexpr int kExponentBias = 129;
constexpr int kMaxKeyDigits = 38;

void AppendEscaped(uint8_t tag, std::string_view bytes, std::string* out) {
  out->push_back(static_cast<char>(tag));
  size_t start = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] == '\0') {
      out->append(bytes.data() + start, i - start + 1);
      out->push_back('\xff');
      start = i + 1;
    }
  }
  out->append(bytes.data() + start, bytes.size() - start);
  out->push_back('\0');
}

Error Corrupt(std::string_view what) {
  return Error::Internal("corrupt key encoding: " + std::string(what));
}

Result<std::string> DecodeEscaped(std::string_view* in) {
  std::string out;
  size_t i = 0;
  const std::string_view s = *in;
  while (true) {
    if (i >= s.size()) return Corrupt("unterminated string");
    if (s[i] == '\0') {
      if (i + 1 < s.size() && static_cast<uint8_t>(s[i + 1]) == 0xff) {
        out.push_back('\0');
        i += 2;
        continue;
      }
      in->remove_prefix(i + 1);
      return out;
    }
    out.push_back(s[i]);
    ++i;
  }
}

}  // namespace

void AppendKeyString(std::string_view utf8, std::string* out) {
  AppendEscaped(kKeyTagString, utf8, out);
}

void AppendKeyBinary(std::string_view bytes, std::string* out) {
  AppendEscaped(kKeyTagBinary, bytes, out);
}

void AppendKeyNumber(const Number& number, std::string* out) {
  if (number.is_zero()) {
    out->push_back(static_cast<char>(kKeyTagZero));
    return;
  }
  const bool neg = number.negative();
  const std::string& d = number.digits();
  const int biased = number.exponent() + kExponentBias;
  assert(biased >= 0 && biased <= 255);
  out->push_back(static_cast<char>(neg ? kKeyTagNegative : kKeyTagPositive));
  // A larger exponent is a larger magnitude: for negatives, complement so it sorts first.
  out->push_back(static_cast<char>(neg ? 255 - biased : biased));
  // Two digits per byte as 1 + 10*hi + lo (1..100); an odd final digit pairs with 0. Digit
  // strings never end in 0, so the padding is unambiguous, and a shorter digit string that
  // is a prefix of a longer one ends first (its terminator sorts below any digit byte).
  for (size_t i = 0; i < d.size(); i += 2) {
    const int hi = d[i] - '0';
    const int lo = i + 1 < d.size() ? d[i + 1] - '0' : 0;
    const int b = 1 + 10 * hi + lo;
    out->push_back(static_cast<char>(neg ? 101 - b : b));
  }
  out->push_back(neg ? '\xff' : '\0');
}

void AppendKeyValue(const AttributeValue& value, std::string* out) {
  switch (value.type()) {
    case Type::kS:
      AppendKeyString(std::get<std::string>(value.v), out);
      return;
    case Type::kN:
      AppendKeyNumber(std::get<Number>(value.v), out);
      return;
    case Type::kB:
      AppendKeyBinary(std::get<Binary>(value.v).bytes, out);
      return;
    default:
      assert(false && "key values are S, N or B");
  }
}

std::string EncodeKeyValue(const AttributeValue& value) {
  std::string out;
  AppendKeyValue(value, &out);
  return out;
}

Result<AttributeValue> DecodeKeyValue(std::string_view* in) {
  if (in->empty()) return Corrupt("empty");
  const uint8_t tag = static_cast<uint8_t>((*in)[0]);
  in->remove_prefix(1);
  switch (tag) {
    case kKeyTagString: {
      FDYNO_ASSIGN_OR_RETURN(std::string s, DecodeEscaped(in));
      return AttributeValue::S(std::move(s));
    }
    case kKeyTagBinary: {
      FDYNO_ASSIGN_OR_RETURN(std::string b, DecodeEscaped(in));
      return AttributeValue::B(std::move(b));
    }
    case kKeyTagZero:
      return AttributeValue::N(Number());
    case kKeyTagNegative:
    case kKeyTagPositive: {
      const bool neg = tag == kKeyTagNegative;
      if (in->empty()) return Corrupt("missing exponent");
      const int e = static_cast<uint8_t>((*in)[0]);
      const int biased = neg ? 255 - e : e;
      in->remove_prefix(1);
      std::string digits;
      const char terminator = neg ? '\xff' : '\0';
      size_t i = 0;
      while (true) {
        if (i >= in->size()) return Corrupt("unterminated number");
        if ((*in)[i] == terminator) break;
        int b = static_cast<uint8_t>((*in)[i]);
        if (neg) b = 101 - b;
        if (b < 1 || b > 100) return Corrupt("digit byte out of range");
        digits.push_back(static_cast<char>('0' + (b - 1) / 10));
        digits.push_back(static_cast<char>('0' + (b - 1) % 10));
        if (static_cast<int>(digits.size()) > kMaxKeyDigits + 1) return Corrupt("too many digits");
        ++i;
      }
      in->remove_prefix(i + 1);
      if (digits.empty()) return Corrupt("no digits");
      // An odd final digit was padded with 0; canonical digits never end in 0.
      if (digits.back() == '0') digits.pop_back();
      if (digits.empty() || digits.front() == '0' || digits.back() == '0' ||
          static_cast<int>(digits.size()) > kMaxKeyDigits) {
        return Corrupt("non-canonical digits");
      }
      return AttributeValue::N(Number::FromParts(neg, std::move(digits), biased - kExponentBias));
    }
    default:
      return Corrupt("unknown tag");
  }
}

std::string EncodeKey(const AttributeValue& hash, const AttributeValue* range) {
  std::string out;
  AppendKeyValue(hash, &out);
  if (range != nullptr) AppendKeyValue(*range, &out);
  return out;
}

Result<DecodedKey> DecodeKey(std::string_view encoded, bool has_range) {
  DecodedKey key;
  FDYNO_ASSIGN_OR_RETURN(key.hash, DecodeKeyValue(&encoded));
  if (has_range) {
    FDYNO_ASSIGN_OR_RETURN(AttributeValue range, DecodeKeyValue(&encoded));
    key.range = std::move(range);
  }
  if (!encoded.empty()) return Corrupt("trailing bytes");
  return key;
}

}  // namespace fdyno::model
