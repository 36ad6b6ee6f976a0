// The prefix an fdb Database puts before every key it stores, so that several fdyno
// deployments (or other applications) can share one FoundationDB cluster: the engine's users
// see keys without it, and every key, range, conflict range and versionstamp offset they give
// is moved under it. Ordering is kept: prefix+a < prefix+b exactly when a < b.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace fdyno::kv::fdb {

// The longest prefix (client.h lets keys be this much longer than 10,000 bytes).
inline constexpr size_t kMaxPrefixBytes = 256;

// The prefix bytes of `text` as given on a command line: the characters themselves, with
// "\xNN" (two hex digits) for any byte and "\\" for a backslash. Errors (Validation,
// naming the flag): a malformed escape, more than kMaxPrefixBytes bytes, or a first byte
// 0xff (FoundationDB's system keys).
Result<std::string> ParsePrefix(std::string_view text);

// `bytes` as ParsePrefix reads it back: printable ASCII as is, "\\" and "\xNN" otherwise.
std::string PrintablePrefix(std::string_view bytes);

// prefix + key.
std::string WithPrefix(std::string_view prefix, std::string_view key);

// A SetVersionstampedKey parameter (key bytes, then the 4-byte little-endian offset of the
// 10-byte placeholder within them) moved under the prefix: prefix + key bytes, then the offset
// plus the prefix's length. Nullopt when `param` is malformed (shorter than 4 bytes, or the
// placeholder does not fit in the key bytes).
std::optional<std::string> WithPrefixVersionstamped(std::string_view prefix,
                                                    std::string_view param);

}  // namespace fdyno::kv::fdb
