// Canonical bytes for request fingerprints (idempotency tokens): a deterministic, injective
// serialization in which values that mean the same request serialize identically:
//   * map keys (M values, items, JSON objects) in bytewise order;
//   * numbers as DynamoDB's canonical text ("1.50E1" and "15" are the same);
//   * set members sorted (SS and BS bytewise, NS numerically): a set has no order;
//   * list and array elements in their order.
// Every value is tagged and length-prefixed, so different values never share an encoding.
//
// Version 1 of the algorithm. The bytes are an input to stored digests, so this function's
// output must never change: any change to what is canonicalized or how is a new algorithm id
// and a new function beside this one (keep every version a live record may name).
//
// Thread-safety: pure functions.
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "model/attribute_value.h"

namespace fdyno::model {

// The id of this canonicalization, as recorded with a fingerprint. Immutable.
inline constexpr uint32_t kCanonicalAlgorithmV1 = 1;

void AppendCanonicalV1(const AttributeValue& value, std::string* out);
void AppendCanonicalItemV1(const Item& item, std::string* out);
// Any JSON value: objects with sorted keys, arrays in order, numbers as canonical decimal
// text (integers and doubles that are equal serialize equally), strings, booleans, null.
// Use it for the request fields that are not AttributeValues.
void AppendCanonicalJsonV1(const rapidjson::Value& value, std::string* out);
// Primitives for a fingerprint built field by field. A field name is a string.
void AppendCanonicalStringV1(std::string_view s, std::string* out);
void AppendCanonicalIntV1(int64_t v, std::string* out);
void AppendCanonicalBoolV1(bool v, std::string* out);
void AppendCanonicalNullV1(std::string* out);

std::string CanonicalV1(const AttributeValue& value);
std::string CanonicalItemV1(const Item& item);

}  // namespace fdyno::model
