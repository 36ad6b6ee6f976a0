#include "http/access_log.h"

#include <gtest/gtest.h>

namespace fdyno::http {
namespace {

AccessRecord Sample() {
  AccessRecord r;
  r.time = std::chrono::system_clock::time_point(std::chrono::milliseconds(1'767'323'045'678));
  r.request_id = "REQ1";
  r.account = "123456789012";
  r.operation = "PutItem";
  r.table = "orders";
  r.status = 400;
  r.error_type = "ValidationException";
  r.latency_us = 1234;
  r.bytes_in = 321;
  r.bytes_out = 87;
  return r;
}

TEST(AccessLogTest, TextLine) {
  EXPECT_EQ(FormatAccessRecord(Sample(), false),
            "2026-01-02T03:04:05.678Z request=REQ1 account=123456789012 operation=PutItem "
            "table=orders status=400 error=ValidationException latency_ms=1.234 in=321 out=87");
  AccessRecord ok = Sample();
  ok.status = 200;
  ok.error_type = {};
  ok.account = {};
  ok.table = {};
  EXPECT_EQ(FormatAccessRecord(ok, false),
            "2026-01-02T03:04:05.678Z request=REQ1 account=- operation=PutItem table=- "
            "status=200 error=- latency_ms=1.234 in=321 out=87");
}

TEST(AccessLogTest, TextFieldsCannotForgeFieldsOrLines) {
  AccessRecord r = Sample();
  r.table = "t status=200\nfake line\xff";
  EXPECT_EQ(FormatAccessRecord(r, false),
            "2026-01-02T03:04:05.678Z request=REQ1 account=123456789012 operation=PutItem "
            "table=t%20status%3D200%0Afake%20line%FF status=400 error=ValidationException "
            "latency_ms=1.234 in=321 out=87");
}

TEST(AccessLogTest, JsonLine) {
  EXPECT_EQ(FormatAccessRecord(Sample(), true),
            "{\"time\":\"2026-01-02T03:04:05.678Z\",\"request_id\":\"REQ1\",\"account\":"
            "\"123456789012\",\"operation\":\"PutItem\",\"table\":\"orders\",\"status\":400,"
            "\"error_type\":\"ValidationException\",\"latency_ms\":1.234,\"bytes_in\":321,"
            "\"bytes_out\":87}");
  AccessRecord r = Sample();
  r.error_type = {};
  r.table = "a\"b";
  EXPECT_NE(FormatAccessRecord(r, true).find("\"table\":\"a\\\"b\",\"status\":400,"
                                             "\"error_type\":null"),
            std::string::npos);
}

}  // namespace
}  // namespace fdyno::http
