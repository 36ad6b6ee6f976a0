// ASCII case folding for HTTP tokens (header names, media types, content codings, hex digests).
// Locale-free and inline: std::tolower is a library call per character, and header lookups fold
// every header name of every request.
#pragma once

#include <string>
#include <string_view>

namespace fdyno::http {

inline char AsciiLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }

inline bool AsciiIEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (AsciiLower(a[i]) != AsciiLower(b[i])) return false;
  }
  return true;
}

inline std::string AsciiLowered(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = AsciiLower(c);
  return out;
}

}  // namespace fdyno::http
