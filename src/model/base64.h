// Base64 (RFC 4648, standard alphabet, padded) for B and BS values on the DynamoDB wire.
// Decoding is strict, as DynamoDB's is: the length must be a multiple of 4 and the text must
// be the canonical encoding of its bytes (no stray characters, no non-zero pad bits).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace fdyno::model {

std::string Base64Encode(std::string_view bytes);
void Base64EncodeTo(std::string_view bytes, std::string* out);  // appends

// The decoded bytes, or nullopt when `text` is not canonical padded base64.
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace fdyno::model
