// Lengths of UTF-8 text as DynamoDB's request validation counts them.
//
// DynamoDB checks a string's length constraint (a ClientRequestToken of at most 36, a tag key
// of at most 128) in characters, as UTF-16 code units: a character outside the Basic
// Multilingual Plane counts two, every other character one, whatever its UTF-8 byte count.
#pragma once

#include <cstddef>
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

}  // namespace fdyno
