// libFuzzer target for request-body Content-Encoding (http/compression.h). The first byte picks
// the encoding (bits 0-1: identity, gzip, deflate, or the header parsers), whether the rest is
// decoded as sent or first encoded with Compress at a level (bit 2), and the output bound
// (bits 3-5, 0 bytes to 1 MiB). Invariants: no crash, no sanitizer report; Decompress fails
// only with RequestEntityTooLarge or the InternalServerError of a corrupt body; its output never
// exceeds the bound, and the bound is exact: the same input decodes to the same output with a
// bound of exactly its size, and is too large with one byte less; identity is the input itself
// when it fits; what Compress encodes decodes back to the input. ParseContentEncoding accepts
// what EncodingName names; ChooseResponseEncoding picks nothing for a header that names neither
// coding nor "*".
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "http/ascii.h"
#include "http/compression.h"

namespace {

using fdyno::ErrorType;
using fdyno::Result;
using fdyno::http::ContentEncoding;

void Require(bool ok) {
  if (!ok) std::abort();
}

constexpr size_t kBounds[] = {0, 1, 7, 64, 1000, 4096, 65536, 1 << 20};

// Decompress with bound `max_bytes`, checked against the contract.
Result<std::string> Decode(std::string_view input, ContentEncoding encoding, size_t max_bytes) {
  Result<std::string> out = fdyno::http::Decompress(input, encoding, max_bytes);
  if (out.ok()) {
    Require(out->size() <= max_bytes);
    if (encoding == ContentEncoding::kIdentity) Require(*out == input);
    if (encoding != ContentEncoding::kIdentity) Require(!input.empty());
  } else {
    const ErrorType type = out.error().type;
    Require(type == ErrorType::kRequestEntityTooLarge ||
            (type == ErrorType::kInternalServerError && encoding != ContentEncoding::kIdentity));
    if (encoding == ContentEncoding::kIdentity) Require(input.size() > max_bytes);
  }
  return out;
}

void CheckExactBound(std::string_view input, ContentEncoding encoding, const std::string& out) {
  Result<std::string> exact = Decode(input, encoding, out.size());
  Require(exact.ok() && *exact == out);
  if (out.empty()) return;
  Result<std::string> under = Decode(input, encoding, out.size() - 1);
  Require(!under.ok() && under.error().type == ErrorType::kRequestEntityTooLarge);
}

bool MentionsCoding(std::string_view header) {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == '*') return true;
    for (std::string_view name : {"gzip", "deflate"}) {
      if (fdyno::http::AsciiIEquals(header.substr(i, name.size()), name)) return true;
    }
  }
  return false;
}

void FuzzHeaders(std::string_view text) {
  std::optional<ContentEncoding> parsed = fdyno::http::ParseContentEncoding(text);
  if (parsed && *parsed != ContentEncoding::kIdentity) {
    Require(fdyno::http::ParseContentEncoding(fdyno::http::EncodingName(*parsed)) == parsed);
  }
  std::optional<ContentEncoding> chosen = fdyno::http::ChooseResponseEncoding(text);
  if (chosen) {
    Require(*chosen != ContentEncoding::kIdentity);
    Require(MentionsCoding(text));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t control = data[0];
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  static constexpr ContentEncoding kEncodings[] = {
      ContentEncoding::kIdentity, ContentEncoding::kGzip, ContentEncoding::kDeflate};
  if ((control & 3) == 3) {
    FuzzHeaders(rest);
    return 0;
  }
  const ContentEncoding encoding = kEncodings[control & 3];
  const size_t max_bytes = kBounds[(control >> 3) & 7];
  if ((control & 4) != 0) {
    // Encoded by Compress, at a level from the top two bits: decodes back to the input.
    const std::string packed = fdyno::http::Compress(rest, encoding, 1 + 4 * (control >> 6));
    Result<std::string> out = Decode(packed, encoding, max_bytes);
    if (rest.size() <= max_bytes) {
      Require(out.ok() && *out == rest);
    } else {
      Require(!out.ok() && out.error().type == ErrorType::kRequestEntityTooLarge);
    }
    return 0;
  }
  Result<std::string> out = Decode(rest, encoding, max_bytes);
  if (out.ok()) CheckExactBound(rest, encoding, *out);
  return 0;
}
