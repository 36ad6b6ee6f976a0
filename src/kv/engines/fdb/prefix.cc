#include "kv/engines/fdb/prefix.h"

#include <cstdint>

namespace fdyno::kv::fdb {
namespace {

constexpr size_t kVersionstampBytes = 10;
constexpr size_t kOffsetBytes = 4;
constexpr char kHex[] = "0123456789abcdef";

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Error BadPrefix(std::string_view text, const std::string& why) {
  return Error::Validation("--fdb-prefix '" + std::string(text) + "': " + why);
}

// The escape at text[i] ('\\'), decoded into *out; the characters it took, or 0 if malformed.
size_t DecodeEscape(std::string_view text, size_t i, std::string* out) {
  if (i + 1 < text.size() && text[i + 1] == '\\') {
    out->push_back('\\');
    return 2;
  }
  if (i + 3 < text.size() && text[i + 1] == 'x') {
    int hi = HexDigit(text[i + 2]), lo = HexDigit(text[i + 3]);
    if (hi < 0 || lo < 0) return 0;
    out->push_back(static_cast<char>(hi * 16 + lo));
    return 4;
  }
  return 0;
}

}  // namespace

Result<std::string> ParsePrefix(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (text[i] != '\\') {
      out.push_back(text[i++]);
      continue;
    }
    size_t used = DecodeEscape(text, i, &out);
    if (used == 0) return BadPrefix(text, "a backslash must start \\xNN or \\\\");
    i += used;
  }
  if (out.size() > kMaxPrefixBytes) {
    return BadPrefix(text, "longer than " + std::to_string(kMaxPrefixBytes) + " bytes");
  }
  if (!out.empty() && static_cast<uint8_t>(out[0]) == 0xff) {
    return BadPrefix(text, "keys starting with \\xff are FoundationDB's system keys");
  }
  return out;
}

std::string PrintablePrefix(std::string_view bytes) {
  std::string out;
  for (char c : bytes) {
    const auto u = static_cast<uint8_t>(c);
    if (c == '\\') {
      out += "\\\\";
    } else if (u >= 0x20 && u < 0x7f) {
      out.push_back(c);
    } else {
      out += {'\\', 'x', kHex[u >> 4], kHex[u & 15]};
    }
  }
  return out;
}

std::string WithPrefix(std::string_view prefix, std::string_view key) {
  std::string out;
  out.reserve(prefix.size() + key.size());
  out.append(prefix);
  out.append(key);
  return out;
}

std::optional<std::string> WithPrefixVersionstamped(std::string_view prefix,
                                                    std::string_view param) {
  if (param.size() < kOffsetBytes) return std::nullopt;
  const std::string_view key = param.substr(0, param.size() - kOffsetBytes);
  uint32_t offset = 0;
  for (size_t i = 0; i < kOffsetBytes; ++i) {
    offset |= static_cast<uint32_t>(static_cast<uint8_t>(param[key.size() + i])) << (8 * i);
  }
  if (offset > key.size() || key.size() - offset < kVersionstampBytes) return std::nullopt;
  const uint32_t moved = offset + static_cast<uint32_t>(prefix.size());
  std::string out = WithPrefix(prefix, key);
  for (size_t i = 0; i < kOffsetBytes; ++i)
    out.push_back(static_cast<char>((moved >> (8 * i)) & 0xff));
  return out;
}

}  // namespace fdyno::kv::fdb
