// JSON string literals for text that is written, not parsed: log lines in --log-format json and
// access log records. Whatever the input bytes, the output is valid JSON in valid UTF-8, so a
// log shipper never rejects a line because a client sent invalid UTF-8 in a table name.
#pragma once

#include <string>
#include <string_view>

namespace fdyno {

// Appends `text` as a quoted JSON string: '"' and '\\' escaped, control characters as \n, \t
// or \u00XX, and every byte that is not part of well-formed UTF-8 as U+FFFD.
void AppendJsonString(std::string& out, std::string_view text);

}  // namespace fdyno
