// Request-body Content-Encoding: gzip and deflate, decoded with a hard bound on the output so
// a compression bomb is rejected while it inflates, never allocating past the bound.
// Thread-safety: stateless functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace fdyno::http {

enum class ContentEncoding { kIdentity, kGzip, kDeflate };

// Parses a Content-Encoding header value ("gzip", "x-gzip", "deflate", "identity", empty;
// case-insensitive). nullopt for anything else, including chained encodings.
std::optional<ContentEncoding> ParseContentEncoding(std::string_view header);

// Decodes a body. Output larger than max_bytes fails with RequestEntityTooLarge as soon as the
// inflater produces byte max_bytes + 1; corrupt, truncated or empty input fails with
// InternalServerError (HTTP 500, DynamoDB's answer). "gzip" accepts several concatenated
// members (RFC 1952). "deflate" accepts the zlib format (RFC 1950, as HTTP specifies) and, as
// many clients send it, raw deflate (RFC 1951).
Result<std::string> Decompress(std::string_view input, ContentEncoding encoding, size_t max_bytes);

// Encodes a body (for tests and the load generator).
std::string Compress(std::string_view input, ContentEncoding encoding);

}  // namespace fdyno::http
