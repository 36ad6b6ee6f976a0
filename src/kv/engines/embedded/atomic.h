// Pure helpers for FoundationDB's atomic operations, shared by the transaction (read-your-
// writes) and the commit pipeline: little-endian Add and versionstamp placeholders.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fdyno::kv::embedded {

inline constexpr size_t kVersionstampBytes = 10;

// FoundationDB's ADD: treats existing and param as little-endian unsigned integers and
// returns their sum truncated to param.size() bytes. An absent existing value yields param;
// a shorter one is zero-extended, a longer one truncated.
std::string ApplyAdd(const std::optional<std::string>& existing, std::string_view param);

// The 10-byte versionstamp: 8-byte big-endian commit version, 2-byte big-endian batch order.
std::string MakeVersionstamp(int64_t version, uint16_t batch_order);

// A SetVersionstampedKey/Value parameter (API version >= 520): bytes followed by a 4-byte
// little-endian offset of a 10-byte placeholder inside those bytes. Returns the offset, or
// nullopt when the parameter is malformed (shorter than 4 bytes, or the placeholder does not
// fit).
std::optional<uint32_t> VersionstampOffset(std::string_view param);

// The parameter without its offset suffix, with the placeholder replaced by stamp.
// REQUIRES: VersionstampOffset(param) succeeded and stamp.size() == 10.
std::string SubstituteVersionstamp(std::string_view param, std::string_view stamp);

}  // namespace fdyno::kv::embedded
