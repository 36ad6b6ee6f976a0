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

// Encodes a body: "gzip" (RFC 1952) or "deflate" (the zlib format, RFC 1950, as HTTP means
// it). `level`: zlib's 1 (fastest) to 9 (smallest); tests and the load generator use 9.
std::string Compress(std::string_view input, ContentEncoding encoding, int level = 9);

// The response encoding an Accept-Encoding header asks for (RFC 9110 section 12.5.3), as
// DynamoDB chooses it: gzip or deflate, whichever has the higher quality value; at equal
// quality one named explicitly wins over "*", and of two named ones the first; "*" alone means
// gzip. A coding with q=0 is refused; "identity", unknown codings ("br", "x-gzip") and
// malformed entries are ignored. nullopt: send the body unencoded.
std::optional<ContentEncoding> ChooseResponseEncoding(std::string_view accept_encoding);

// "gzip" or "deflate" (static strings); empty for kIdentity.
std::string_view EncodingName(ContentEncoding encoding);

}  // namespace fdyno::http
