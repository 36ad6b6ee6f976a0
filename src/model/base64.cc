#include "model/base64.h"

#include <array>
#include <cstdint>

namespace fdyno::model {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<int8_t, 256> MakeReverse() {
  std::array<int8_t, 256> r{};
  for (auto& x : r) x = -1;
  for (int i = 0; i < 64; ++i) r[static_cast<uint8_t>(kAlphabet[i])] = static_cast<int8_t>(i);
  return r;
}
constexpr std::array<int8_t, 256> kReverse = MakeReverse();

}  // namespace

void Base64EncodeTo(std::string_view bytes, std::string* out) {
  const size_t n = bytes.size();
  out->reserve(out->size() + (n + 2) / 3 * 4);
  size_t i = 0;
  auto b = [&](size_t k) { return static_cast<uint8_t>(bytes[k]); };
  for (; i + 3 <= n; i += 3) {
    uint32_t v = (b(i) << 16) | (b(i + 1) << 8) | b(i + 2);
    out->push_back(kAlphabet[(v >> 18) & 63]);
    out->push_back(kAlphabet[(v >> 12) & 63]);
    out->push_back(kAlphabet[(v >> 6) & 63]);
    out->push_back(kAlphabet[v & 63]);
  }
  if (n - i == 1) {
    uint32_t v = b(i) << 16;
    out->push_back(kAlphabet[(v >> 18) & 63]);
    out->push_back(kAlphabet[(v >> 12) & 63]);
    out->append("==");
  } else if (n - i == 2) {
    uint32_t v = (b(i) << 16) | (b(i + 1) << 8);
    out->push_back(kAlphabet[(v >> 18) & 63]);
    out->push_back(kAlphabet[(v >> 12) & 63]);
    out->push_back(kAlphabet[(v >> 6) & 63]);
    out->push_back('=');
  }
}

std::string Base64Encode(std::string_view bytes) {
  std::string out;
  Base64EncodeTo(bytes, &out);
  return out;
}

std::optional<std::string> Base64Decode(std::string_view text) {
  const size_t n = text.size();
  if (n % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(n / 4 * 3);
  for (size_t i = 0; i < n; i += 4) {
    const bool last = i + 4 == n;
    int pad = 0;
    if (last) {
      if (text[i + 3] == '=') ++pad;
      if (pad == 1 && text[i + 2] == '=') ++pad;
    }
    int s[4] = {0, 0, 0, 0};
    for (int k = 0; k < 4 - pad; ++k) {
      s[k] = kReverse[static_cast<uint8_t>(text[i + static_cast<size_t>(k)])];
      if (s[k] < 0) return std::nullopt;
    }
    uint32_t v = (static_cast<uint32_t>(s[0]) << 18) | (static_cast<uint32_t>(s[1]) << 12) |
                 (static_cast<uint32_t>(s[2]) << 6) | static_cast<uint32_t>(s[3]);
    out.push_back(static_cast<char>((v >> 16) & 0xff));
    if (pad == 2) {
      if ((v & 0xffff) != 0) return std::nullopt;  // non-zero pad bits: not canonical
      break;
    }
    out.push_back(static_cast<char>((v >> 8) & 0xff));
    if (pad == 1) {
      if ((v & 0xff) != 0) return std::nullopt;
      break;
    }
    out.push_back(static_cast<char>(v & 0xff));
  }
  return out;
}

}  // namespace fdyno::model
