#include "http/wire.h"

#include <gtest/gtest.h>

#include <boost/beast/http.hpp>
#include <set>
#include <sstream>

namespace fdyno::http {
namespace {

TEST(WireTest, ErrorBodies) {
  EXPECT_EQ(RenderErrorBody(Error::Validation("bad")),
            R"({"__type":"com.amazon.coral.validate#ValidationException","message":"bad"})");
  EXPECT_EQ(RenderErrorBody(Error::ResourceNotFound("Requested resource not found")),
            R"({"__type":"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException",)"
            R"("message":"Requested resource not found"})");
  EXPECT_EQ(RenderErrorBody(Error::Serialization("")),
            R"({"__type":"com.amazon.coral.service#SerializationException"})");
  EXPECT_EQ(RenderErrorBody(Error::Serialization("Start of list found where not expected")),
            R"({"__type":"com.amazon.coral.service#SerializationException",)"
            R"("Message":"Start of list found where not expected"})");
  EXPECT_EQ(RenderErrorBody(Error::Make(ErrorType::kThrottling, "Rate")),
            R"({"__type":"com.amazon.coral.availability#ThrottlingException","message":"Rate"})");
  // Engine errors are internal server errors; their details stay in the server.
  EXPECT_EQ(RenderErrorBody(Error::Kv(1020, "not_committed")),
            R"({"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError",)"
            R"("message":"Internal server error"})");
  // A message quoting invalid bytes stays valid UTF-8 on the wire.
  EXPECT_EQ(RenderErrorBody(Error::Validation("name a\xFF"
                                              "b")),
            "{\"__type\":\"com.amazon.coral.validate#ValidationException\",\"message\":\"name "
            "a\xEF\xBF\xBD"
            "b\"}");
  Error ccf = Error::ConditionalCheckFailed();
  ccf.item_json = R"({"pk":{"S":"a"}})";
  EXPECT_EQ(RenderErrorBody(ccf),
            R"({"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException",)"
            R"("message":"The conditional request failed","Item":{"pk":{"S":"a"}}})");
  EXPECT_EQ(
      RenderErrorBody(Error::Validation("quote \" and \n")),
      R"({"__type":"com.amazon.coral.validate#ValidationException","message":"quote \" and \n"})");
}

TEST(WireTest, CancellationReasons) {
  Error e = Error::Make(ErrorType::kTransactionCanceled,
                        "Transaction cancelled, please refer cancellation reasons for specific "
                        "reasons [None, ConditionalCheckFailed]");
  e.cancellation_reasons_json =
      R"([{"Code":"None"},{"Code":"ConditionalCheckFailed","Message":"m"}])";
  EXPECT_EQ(RenderErrorBody(e),
            R"({"__type":"com.amazonaws.dynamodb.v20120810#TransactionCanceledException",)"
            R"("message":"Transaction cancelled, please refer cancellation reasons for specific )"
            R"(reasons [None, ConditionalCheckFailed]","CancellationReasons":[{"Code":"None"},)"
            R"({"Code":"ConditionalCheckFailed","Message":"m"}]})");
}

TEST(WireTest, RequestIds) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    std::string id = NewRequestId();
    ASSERT_EQ(id.size(), 52u);
    for (char c : id) ASSERT_TRUE((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) << id;
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

TEST(WireTest, HttpDateIsRfc9110) {
  std::string date(HttpDate());
  ASSERT_EQ(date.size(), 29u) << date;
  EXPECT_EQ(date.substr(3, 2), ", ");
  EXPECT_EQ(date.substr(25), " GMT");
}

TEST(WireTest, Crc32) {
  EXPECT_EQ(Crc32(""), 0u);
  EXPECT_EQ(Crc32("123456789"), 0xCBF43926u);  // the CRC-32 check value
  EXPECT_EQ(Crc32("{}"), 2745614147u);
}

// The hand-written head is what Beast's serializer writes for the same response, for every
// status the server sends, both HTTP versions, keep-alive or not, and a HEAD (empty body).
TEST(WireTest, ResponseHeadIsBeastsSerialization) {
  namespace bhttp = boost::beast::http;
  const std::string body = R"({"Count":0})";
  for (unsigned status : {200u, 400u, 403u, 404u, 405u, 413u, 500u, 503u}) {
    for (unsigned version : {10u, 11u}) {
      for (bool keep : {true, false}) {
        for (bool head_only : {false, true}) {
          const bool gzip = status == 200;
          const std::string extra = status == 200 ? "Access-Control-Allow-Origin: *\r\n" : "";
          bhttp::response<bhttp::string_body> res(static_cast<bhttp::status>(status), version);
          res.set(bhttp::field::server, "fdyno");
          res.set(bhttp::field::date, "Tue, 01 Dec 2026 15:03:32 GMT");
          res.set(bhttp::field::content_type, "application/x-amz-json-1.0");
          if (gzip) res.set(bhttp::field::content_encoding, "gzip");
          res.set("x-amzn-RequestId", "REQ1");
          res.set("x-amz-crc32", std::to_string(Crc32(body)));
          if (!extra.empty()) res.set("Access-Control-Allow-Origin", "*");
          res.body() = body;
          res.keep_alive(keep);
          res.prepare_payload();
          if (head_only) res.body().clear();
          std::ostringstream beast;
          beast << res;

          std::string ours;
          AppendResponseHead(
              {status, version, "Tue, 01 Dec 2026 15:03:32 GMT", "application/x-amz-json-1.0",
               gzip ? "gzip" : "", "REQ1", Crc32(body), extra, body.size(), keep},
              &ours);
          if (!head_only) ours += body;
          EXPECT_EQ(ours, beast.str()) << status << " " << version << " " << keep;
        }
      }
    }
  }
}

}  // namespace
}  // namespace fdyno::http
