// Big-endian fixed-width integers and length-prefixed bytes, for hand-written stored formats
// (receipts, token records, transaction results). ByteReader is bounds-checked: every read
// returns false instead of reading past the end, so a caller treats a short value as corrupt.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace fdyno {

inline void PutU32(std::string& out, uint32_t v) {
  for (int i = 3; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
inline void PutU64(std::string& out, uint64_t v) {
  for (int i = 7; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
// u32 length, then the bytes. REQUIRES: b.size() < 4 GiB.
inline void PutLengthPrefixed(std::string& out, std::string_view b) {
  PutU32(out, static_cast<uint32_t>(b.size()));
  out += b;
}

class ByteReader {
 public:
  explicit ByteReader(std::string_view data) : data_(data) {}

  // Not inlined: GCC 12's -Wmaybe-uninitialized misfires on callers' small-string buffers
  // when this is inlined.
  [[gnu::noinline]] bool U8(uint8_t& v) {
    if (data_.empty()) return false;
    v = static_cast<uint8_t>(data_[0]);
    data_.remove_prefix(1);
    return true;
  }
  bool U32(uint32_t& v) { return Fixed(4, v); }
  bool U64(uint64_t& v) { return Fixed(8, v); }
  // The next n bytes.
  bool Bytes(size_t n, std::string_view& v) {
    if (data_.size() < n) return false;
    v = data_.substr(0, n);
    data_.remove_prefix(n);
    return true;
  }
  // A u32 length, then that many bytes.
  bool LengthPrefixed(std::string_view& v) {
    uint32_t n = 0;
    return U32(n) && Bytes(n, v);
  }
  std::string_view rest() const { return data_; }
  bool done() const { return data_.empty(); }

 private:
  template <typename T>
  bool Fixed(int width, T& v) {
    if (data_.size() < static_cast<size_t>(width)) return false;
    v = 0;
    for (int i = 0; i < width; ++i) v = (v << 8) | static_cast<uint8_t>(data_[i]);
    data_.remove_prefix(width);
    return true;
  }

  std::string_view data_;
};

}  // namespace fdyno
