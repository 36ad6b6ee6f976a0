#include "kv/engines/embedded/atomic.h"

#include <cassert>

namespace fdyno::kv::embedded {

std::string ApplyAdd(const std::optional<std::string>& existing, std::string_view param) {
  if (!existing) return std::string(param);
  std::string out(param.size(), '\0');
  unsigned carry = 0;
  for (size_t i = 0; i < param.size(); ++i) {
    unsigned a = i < existing->size() ? static_cast<unsigned char>((*existing)[i]) : 0;
    unsigned b = static_cast<unsigned char>(param[i]);
    unsigned sum = a + b + carry;
    out[i] = static_cast<char>(sum & 0xff);
    carry = sum >> 8;
  }
  return out;
}

std::string MakeVersionstamp(int64_t version, uint16_t batch_order) {
  std::string s(kVersionstampBytes, '\0');
  uint64_t v = static_cast<uint64_t>(version);
  for (int i = 7; i >= 0; --i) {
    s[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
  s[8] = static_cast<char>(batch_order >> 8);
  s[9] = static_cast<char>(batch_order & 0xff);
  return s;
}

std::optional<uint32_t> VersionstampOffset(std::string_view param) {
  if (param.size() < 4) return std::nullopt;
  size_t n = param.size() - 4;
  uint32_t offset = 0;
  for (int i = 3; i >= 0; --i) {
    offset = (offset << 8) | static_cast<unsigned char>(param[n + i]);
  }
  if (static_cast<uint64_t>(offset) + kVersionstampBytes > n) return std::nullopt;
  return offset;
}

std::string SubstituteVersionstamp(std::string_view param, std::string_view stamp) {
  std::optional<uint32_t> offset = VersionstampOffset(param);
  assert(offset && stamp.size() == kVersionstampBytes);
  std::string out(param.substr(0, param.size() - 4));
  out.replace(*offset, kVersionstampBytes, stamp);
  return out;
}

}  // namespace fdyno::kv::embedded
