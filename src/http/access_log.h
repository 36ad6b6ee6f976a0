// The access log: one line per answered request, for operators. It says who asked what of
// which table and how it went, and nothing of what was read or written: no item, key or
// attribute value, no expression, no header, no signature or secret (spec 000: "without
// logging item payloads or secrets").
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace fdyno::http {

struct AccessRecord {
  std::chrono::system_clock::time_point time;  // when the answer was ready
  std::string_view request_id;
  std::string_view account;    // empty: not authenticated (or not an API call)
  std::string_view operation;  // the metrics label ("PutItem", "unknown") or "GET /path"
  std::string_view table;      // the table(s) named by the request, comma-separated; may be empty
  unsigned status = 0;
  std::string_view error_type;  // "ValidationException"; empty on success
  int64_t latency_us = 0;
  uint64_t bytes_in = 0;   // request body as received
  uint64_t bytes_out = 0;  // response body as sent (after compression)
};

// Text: `2026-01-02T03:04:05.678Z request=ID account=A operation=PutItem table=T status=200
// error=- latency_ms=1.234 in=123 out=45`, "-" for an empty field.
// JSON: {"time":..,"request_id":..,"account":..,"operation":..,"table":..,"status":200,
// "error_type":null,"latency_ms":1.234,"bytes_in":123,"bytes_out":45}.
std::string FormatAccessRecord(const AccessRecord& record, bool json);

}  // namespace fdyno::http
