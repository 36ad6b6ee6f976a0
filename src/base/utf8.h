// UTF-8 text: lengths as DynamoDB's request validation counts them, and validity.
//
// DynamoDB checks a string's length constraint (a ClientRequestToken of at most 36, a tag key
// of at most 128) in characters, as UTF-16 code units: a character outside the Basic
// Multilingual Plane counts two, every other character one, whatever its UTF-8 byte count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace fdyno {

// The UTF-16 length of UTF-8 `text`: each lead byte counts one (four-byte sequences two);
// continuation bytes count nothing. Text that is not valid UTF-8 is counted the same way.
inline size_t Utf16Length(std::string_view text) {
  size_t n = 0;
  for (unsigned char c : text) {
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte
    n += c >= 0xF0 ? 2 : 1;
  }
  return n;
}

// The length of the valid UTF-8 sequence at the start of `text` (1 to 4 bytes), or 0 when it
// does not start with one. Valid as RFC 3629 defines it: no overlong forms, no surrogates
// (U+D800..U+DFFF), nothing above U+10FFFF.
inline size_t Utf8SequenceLength(std::string_view text) {
  if (text.empty()) return 0;
  const auto b = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong below
    if (c == 0xED) hi = 0x9F;  // surrogates above
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;  // overlong below
    if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;  // a continuation byte, C0/C1 (overlong) or F5..FF
  }
  if (text.size() < n || b(1) < lo || b(1) > hi) return 0;
  for (size_t i = 2; i < n; ++i) {
    if ((b(i) & 0xC0) != 0x80) return 0;
  }
  return n;
}

// Whether `text` is entirely valid UTF-8. ASCII runs (most of a request body) are checked eight
// bytes at a time.
inline bool IsValidUtf8(std::string_view text) {
  while (!text.empty()) {
    if (text.size() >= 8) {
      uint64_t word;
      std::memcpy(&word, text.data(), 8);
      if ((word & 0x8080808080808080ull) == 0) {
        text.remove_prefix(8);
        continue;
      }
    }
    const size_t n = Utf8SequenceLength(text);
    if (n == 0) return false;
    text.remove_prefix(n);
  }
  return true;
}

// `text` with every byte that does not start a valid sequence replaced by U+FFFD: for text that
// is echoed back (an error message quoting a header) and must be valid UTF-8 on the wire.
inline std::string ToValidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const size_t n = Utf8SequenceLength(text);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      text.remove_prefix(1);
    } else {
      out.append(text.data(), n);
      text.remove_prefix(n);
    }
  }
  return out;
}

}  // namespace fdyno
