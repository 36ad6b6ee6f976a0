// The stored item format's primitive reader (docs/format/item.md), shared by the decoder
// (item_codec.cc) and the JSON transcoder (stored_json.cc), so both accept exactly the same
// bytes. Internal to the model layer.
//
// Thread-safety: a reader is used by one thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"
#include "model/item_codec.h"

namespace fdyno::model {

// Deeper than any value DynamoDB accepts (32 levels), so every valid item decodes; the bound
// keeps corrupt input from recursing without limit.
inline constexpr int kMaxDecodeDepth = 64;
inline constexpr size_t kMaxNumberDigits = 38;

inline Error Corrupt(std::string_view what) {
  return Error::Internal("corrupt stored item: " + std::string(what));
}

// A stored number, checked to be canonical: 0.digits x 10^exponent; count 0 is zero.
struct NumberParts {
  bool negative = false;
  int exponent = 0;
  uint8_t count = 0;
  char digits[kMaxNumberDigits];
  std::string_view digits_view() const { return std::string_view(digits, count); }
};

class StoredReader {
 public:
  explicit StoredReader(std::string_view in) : in_(in) {}

  bool done() const { return pos_ == in_.size(); }
  size_t remaining() const { return in_.size() - pos_; }
  size_t pos() const { return pos_; }
  std::string_view input() const { return in_; }

  Result<uint8_t> Byte() {
    if (pos_ >= in_.size()) return Corrupt("truncated");
    return static_cast<uint8_t>(in_[pos_++]);
  }

  Result<uint64_t> Varint() {
    // Reads bytes directly (no Result per byte): this is the decoder's hottest path.
    const size_t n = in_.size();
    if (pos_ < n && static_cast<uint8_t>(in_[pos_]) < 0x80)
      return static_cast<uint8_t>(in_[pos_++]);
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ >= n) return Corrupt("truncated");
      const uint8_t b = static_cast<uint8_t>(in_[pos_++]);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) {
        // Reject overlong encodings so each value has exactly one encoding.
        if (b == 0 && shift > 0) return Corrupt("overlong varint");
        return v;
      }
    }
    return Corrupt("varint too long");
  }

  // A count of elements each taking at least `min_bytes`: bounded by what is left, so corrupt
  // counts cannot cause huge allocations.
  Result<size_t> Count(size_t min_bytes) {
    FDYNO_ASSIGN_OR_RETURN(uint64_t n, Varint());
    if (n > remaining() / min_bytes) return Corrupt("count exceeds the data");
    return static_cast<size_t>(n);
  }

  Result<std::string_view> Bytes() {
    FDYNO_ASSIGN_OR_RETURN(uint64_t n, Varint());
    if (n > remaining()) return Corrupt("length exceeds the data");
    std::string_view s = in_.substr(pos_, static_cast<size_t>(n));
    pos_ += static_cast<size_t>(n);
    return s;
  }

  // Number: flags byte (bit 0 negative), zigzag exponent, digit count, digits two per byte
  // (high nibble first; an odd count leaves the last low nibble 0). Only the canonical
  // encoding is accepted.
  Status ReadNumberParts(NumberParts* out) {
    FDYNO_ASSIGN_OR_RETURN(uint8_t flags, Byte());
    if (flags > 1) return Corrupt("number flags");
    FDYNO_ASSIGN_OR_RETURN(uint64_t zz, Varint());
    const int64_t e = static_cast<int64_t>(zz >> 1) ^ -static_cast<int64_t>(zz & 1);
    FDYNO_ASSIGN_OR_RETURN(uint8_t count, Byte());
    if (count > kMaxNumberDigits) return Corrupt("too many digits");
    if (count == 0) {
      if (flags != 0 || e != 0) return Corrupt("non-canonical zero");
      *out = NumberParts{};
      return Status::Ok();
    }
    if (e < -129 || e > 126) return Corrupt("number exponent out of range");
    for (size_t i = 0; i < count; i += 2) {
      FDYNO_ASSIGN_OR_RETURN(uint8_t b, Byte());
      const int hi = b >> 4, lo = b & 0xf;
      if (hi > 9 || lo > 9) return Corrupt("digit out of range");
      out->digits[i] = static_cast<char>('0' + hi);
      if (i + 1 < count) {
        out->digits[i + 1] = static_cast<char>('0' + lo);
      } else if (lo != 0) {
        return Corrupt("padding digit");
      }
    }
    if (out->digits[0] == '0' || out->digits[count - 1] == '0') {
      return Corrupt("non-canonical digits");
    }
    out->negative = flags == 1;
    out->exponent = static_cast<int>(e);
    out->count = count;
    return Status::Ok();
  }

  // The format version byte that starts every encoding.
  Status CheckVersion() {
    FDYNO_ASSIGN_OR_RETURN(uint8_t version, Byte());
    if (version != kItemFormatV1) {
      return Error::Internal("unsupported stored item format version " + std::to_string(version));
    }
    return Status::Ok();
  }

 private:
  std::string_view in_;
  size_t pos_ = 0;
};

}  // namespace fdyno::model
