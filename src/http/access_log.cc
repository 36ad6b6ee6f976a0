#include "http/access_log.h"

#include <cstdio>
#include <ctime>

#include "base/json_text.h"

namespace fdyno::http {
namespace {

std::string Timestamp(std::chrono::system_clock::time_point t) {
  const auto since_epoch = t.time_since_epoch();
  const std::time_t seconds = std::chrono::duration_cast<std::chrono::seconds>(since_epoch).count();
  const int millis = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch).count() % 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char buf[40];
  const size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(buf + n, sizeof buf - n, ".%03dZ", millis);
  return buf;
}

std::string Millis(int64_t us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(us) / 1000.0);
  return buf;
}

// A text field: "-" when empty; bytes that could break the line or the key=value form (space,
// control, '=', non-ASCII) as %XX, so a hostile table name cannot forge a field or a line.
void AppendTextField(std::string& out, std::string_view key, std::string_view value) {
  out += ' ';
  out += key;
  out += '=';
  if (value.empty()) {
    out += '-';
    return;
  }
  for (char ch : value) {
    const auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c >= 0x7F || c == '=' || c == '%' || c == '"') {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    } else {
      out.push_back(ch);
    }
  }
}

void AppendJsonField(std::string& out, std::string_view key, std::string_view value) {
  out += ",\"";
  out += key;
  out += "\":";
  if (value.empty()) {
    out += "null";
  } else {
    AppendJsonString(out, value);
  }
}

}  // namespace

std::string FormatAccessRecord(const AccessRecord& r, bool json) {
  struct Field {
    std::string_view json_key;
    std::string_view text_key;
    std::string value;
    bool number;
  };
  const Field fields[] = {
      {"request_id", "request", std::string(r.request_id), false},
      {"account", "account", std::string(r.account), false},
      {"operation", "operation", std::string(r.operation), false},
      {"table", "table", std::string(r.table), false},
      {"status", "status", std::to_string(r.status), true},
      {"error_type", "error", std::string(r.error_type), false},
      {"latency_ms", "latency_ms", Millis(r.latency_us), true},
      {"bytes_in", "in", std::to_string(r.bytes_in), true},
      {"bytes_out", "out", std::to_string(r.bytes_out), true},
  };
  std::string out;
  out.reserve(256);
  if (json) out += "{\"time\":\"";
  out += Timestamp(r.time);
  if (json) out += '"';
  for (const Field& f : fields) {
    if (!json) {
      AppendTextField(out, f.text_key, f.value);
    } else if (f.number) {
      out.append(",\"").append(f.json_key).append("\":").append(f.value);
    } else {
      AppendJsonField(out, f.json_key, f.value);
    }
  }
  if (json) out += '}';
  return out;
}

}  // namespace fdyno::http
