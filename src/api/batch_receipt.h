// The payload a BatchWriteItem group leaves in its receipt (docs/format/receipts.md, `extra`
// of kind BatchWrite): the capacity units the group consumed per table of the request, so
// that a retry that finds the receipt reports what the committed attempt consumed.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace fdyno::api {

// One line per table, in request order: the units as decimal text ("%f"), then "\n".
std::string EncodeUnits(const std::vector<double>& units);

// Reads EncodeUnits' text for `n` tables. Anything else (another number of lines, a value
// that is not a finite non-negative decimal, bytes after the last line) is a corrupt receipt:
// InternalServerError, so the operation fails closed as for every other stored format.
Result<std::vector<double>> DecodeUnits(std::string_view text, size_t n);

}  // namespace fdyno::api
