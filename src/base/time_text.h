// Times as text in the forms the protocols fdyno speaks use, always in UTC.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

namespace fdyno {

// "2026-12-06T23:30:00.123Z" (ISO 8601 with milliseconds: S3's listings, export manifests).
std::string Iso8601Millis(int64_t epoch_ms);

// "Sun, 06 Dec 2026 23:30:00 GMT" (HTTP's date: the Date and Last-Modified headers).
std::string HttpDateText(int64_t epoch_s);

// "Friday, October 9, 2026 at 12:21:34 AM Coordinated Universal Time" (the long form Java's
// US locale gives, which DynamoDB's throughput decrease quota message carries).
std::string LongDateTimeText(int64_t epoch_ms);

}  // namespace fdyno
