#include "base/time_text.h"

#include <cstdio>
#include <ctime>

namespace fdyno {

std::string Iso8601Millis(int64_t epoch_ms) {
  const std::time_t s = static_cast<std::time_t>(epoch_ms / 1000);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[80];  // room for any int the format could print (-Wformat-truncation)
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(epoch_ms % 1000));
  return buf;
}

std::string HttpDateText(int64_t epoch_s) {
  const std::time_t s = static_cast<std::time_t>(epoch_s);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[64];
  const size_t n = std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return std::string(buf, n);
}

std::string LongDateTimeText(int64_t epoch_ms) {
  const std::time_t s = static_cast<std::time_t>(epoch_ms / 1000);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char date[64];
  const size_t n = std::strftime(date, sizeof date, "%A, %B ", &tm);
  const int hour12 = tm.tm_hour % 12 == 0 ? 12 : tm.tm_hour % 12;
  char buf[160];
  std::snprintf(buf, sizeof buf, "%.*s%d, %d at %d:%02d:%02d %s Coordinated Universal Time",
                static_cast<int>(n), date, tm.tm_mday, tm.tm_year + 1900, hour12, tm.tm_min,
                tm.tm_sec, tm.tm_hour < 12 ? "AM" : "PM");
  return buf;
}

}  // namespace fdyno
