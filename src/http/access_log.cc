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
  std::string out;
  out.reserve(256);
  if (json) {
    out += "{\"time\":\"" + Timestamp(r.time) + "\"";
    AppendJsonField(out, "request_id", r.request_id);
    AppendJsonField(out, "account", r.account);
    AppendJsonField(out, "operation", r.operation);
    AppendJsonField(out, "table", r.table);
    out += ",\"status\":" + std::to_string(r.status);
    AppendJsonField(out, "error_type", r.error_type);
    out += ",\"latency_ms\":" + Millis(r.latency_us);
    out += ",\"bytes_in\":" + std::to_string(r.bytes_in);
    out += ",\"bytes_out\":" + std::to_string(r.bytes_out) + "}";
    return out;
  }
  out += Timestamp(r.time);
  AppendTextField(out, "request", r.request_id);
  AppendTextField(out, "account", r.account);
  AppendTextField(out, "operation", r.operation);
  AppendTextField(out, "table", r.table);
  out += " status=" + std::to_string(r.status);
  AppendTextField(out, "error", r.error_type);
  out += " latency_ms=" + Millis(r.latency_us);
  out += " in=" + std::to_string(r.bytes_in);
  out += " out=" + std::to_string(r.bytes_out);
  return out;
}

}  // namespace fdyno::http
