// Test support for the expr case files: a small reader and writer of DynamoDB's JSON form of
// items and values ({"a": {"N": "1"}, "b": {"L": [{"S": "x"}]}}). Test-only: it accepts the
// well-formed subset the case files use and reports anything else as an error string.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "model/attribute_value.h"

namespace fdyno::expr::testing {

// Parses an item (a JSON object of attribute values). On failure returns nullopt and sets
// *error.
std::optional<model::Item> ParseItemJson(std::string_view text, std::string* error);

// Parses a JSON object of strings ({"#n": "name"}).
std::optional<std::map<std::string, std::string>> ParseStringMapJson(std::string_view text,
                                                                     std::string* error);

// Canonical JSON of an item or value (map keys sorted, numbers in canonical text).
std::string ItemToJson(const model::Item& item);
std::string ValueToJson(const model::AttributeValue& value);

}  // namespace fdyno::expr::testing
