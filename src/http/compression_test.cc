#include "http/compression.h"

#include <gtest/gtest.h>

namespace fdyno::http {
namespace {

TEST(CompressionTest, ParsesEncodings) {
  EXPECT_EQ(ParseContentEncoding(""), ContentEncoding::kIdentity);
  EXPECT_EQ(ParseContentEncoding(" GZIP "), ContentEncoding::kGzip);
  EXPECT_EQ(ParseContentEncoding("x-gzip"), ContentEncoding::kGzip);
  EXPECT_EQ(ParseContentEncoding("Deflate"), ContentEncoding::kDeflate);
  EXPECT_EQ(ParseContentEncoding("identity"), ContentEncoding::kIdentity);
  EXPECT_FALSE(ParseContentEncoding("br").has_value());
  EXPECT_FALSE(ParseContentEncoding("gzip, deflate").has_value());
}

TEST(CompressionTest, RoundTrips) {
  std::string body =
      "{\"TableName\":\"t\",\"Key\":{\"pk\":{\"S\":\"" + std::string(100000, 'x') + "\"}}}";
  for (auto e : {ContentEncoding::kGzip, ContentEncoding::kDeflate, ContentEncoding::kIdentity}) {
    auto out = Decompress(Compress(body, e), e, 1 << 20);
    ASSERT_TRUE(out.ok()) << out.error().message;
    EXPECT_EQ(*out, body);
  }
}

TEST(CompressionTest, RawDeflateAccepted) {
  // Raw deflate (no zlib header): strip the 2-byte header and 4-byte Adler-32 trailer.
  std::string body = "hello hello hello hello";
  std::string zlib = Compress(body, ContentEncoding::kDeflate);
  std::string raw = zlib.substr(2, zlib.size() - 6);
  auto out = Decompress(raw, ContentEncoding::kDeflate, 1000);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(*out, body);
}

TEST(CompressionTest, ExactBoundAcceptedOneMoreRejected) {
  std::string body(5000, 'a');
  std::string gz = Compress(body, ContentEncoding::kGzip);
  EXPECT_TRUE(Decompress(gz, ContentEncoding::kGzip, 5000).ok());
  auto over = Decompress(gz, ContentEncoding::kGzip, 4999);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.error().type, ErrorType::kRequestEntityTooLarge);
  EXPECT_FALSE(Decompress(body, ContentEncoding::kIdentity, 4999).ok());
}

TEST(CompressionTest, BombRejected) {
  // 64 MiB of zeros compress to about 64 KiB; the bound stops inflation at 16 MiB + 1.
  std::string zeros(64 << 20, '\0');
  std::string gz = Compress(zeros, ContentEncoding::kGzip);
  ASSERT_LT(gz.size(), 1u << 20);
  auto out = Decompress(gz, ContentEncoding::kGzip, 16 << 20);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().type, ErrorType::kRequestEntityTooLarge);
}

// A body that fails to decompress is DynamoDB's HTTP 500.
TEST(CompressionTest, CorruptTruncatedAndEmptyRejected) {
  std::string gz = Compress(std::string(1000, 'q'), ContentEncoding::kGzip);
  auto truncated = Decompress(gz.substr(0, gz.size() / 2), ContentEncoding::kGzip, 1 << 20);
  ASSERT_FALSE(truncated.ok());
  EXPECT_EQ(truncated.error().type, ErrorType::kInternalServerError);
  EXPECT_EQ(HttpStatus(truncated.error().type), 500);
  auto garbage = Decompress("not gzip at all", ContentEncoding::kGzip, 1 << 20);
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.error().type, ErrorType::kInternalServerError);
  auto trailing = Decompress(gz + "junk", ContentEncoding::kGzip, 1 << 20);
  EXPECT_FALSE(trailing.ok());
  for (ContentEncoding e : {ContentEncoding::kGzip, ContentEncoding::kDeflate}) {
    auto empty = Decompress("", e, 10);
    ASSERT_FALSE(empty.ok());
    EXPECT_EQ(empty.error().type, ErrorType::kInternalServerError);
  }
}

TEST(CompressionTest, ConcatenatedGzipMembersDecodeInOrder) {
  std::string two =
      Compress("{\"a\":", ContentEncoding::kGzip) + Compress("1}", ContentEncoding::kGzip);
  auto out = Decompress(two, ContentEncoding::kGzip, 1 << 20);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(*out, "{\"a\":1}");
  // The bound covers every member together.
  auto bounded = Decompress(two, ContentEncoding::kGzip, 6);
  ASSERT_FALSE(bounded.ok());
  EXPECT_EQ(bounded.error().type, ErrorType::kRequestEntityTooLarge);
}

}  // namespace
}  // namespace fdyno::http

namespace fdyno::http {
namespace {

// Accept-Encoding values with the coding DynamoDB answers with (observed against DynamoDB by
// ScyllaDB's Alternator test suite, test_compressed_response.py).
TEST(CompressionTest, ChoosesTheResponseEncodingAsDynamoDBDoes) {
  const std::optional<ContentEncoding> none, gzip = ContentEncoding::kGzip,
                                             deflate = ContentEncoding::kDeflate;
  const std::pair<const char*, std::optional<ContentEncoding>> cases[] = {
      {"", none},
      {"identity", none},
      {"br", none},
      {"zstd", none},
      {"compress", none},
      {"x-gzip", none},
      {"gzip", gzip},
      {"deflate", deflate},
      {"gzip, deflate", gzip},
      {"br, identity, deflate, gzip", deflate},
      {"GZIP, identity", gzip},
      {"dog, gzip ,, cat", gzip},
      {"gzip;q=0.8, deflate;q=0.5", gzip},
      {"br, gzip;q=0, deflate; q = 0.5 , identity;q=0", deflate},
      {"*", gzip},
      {"*, deflate;q=0.5", gzip},
      {"*, deflate", deflate},
      {"*, identity", gzip},
      {"*, gzip;q=0.5", deflate},
      {"gzip ;q=0", none},
      {"identity;q=0", none},
      {"*;q=0", none},
      {"*;q=0.5,identity", gzip},
      {"gzip;q=0.5,identity;q=0.8", gzip},
      {"br;q=0.8,identity;q=0.5,*;q=0", none},
      {"\"gzip\"", none},
      {"gzip br", none},
      {"gzip:q=1", none},
      {"deflate;q=0.5, gzip;q=31", gzip},
      {"gzip;q=31,deflate;q=51", gzip},
      {"deflate;q=0.5, gzip;q=0.2", deflate},
      {"deflate;q=0.5, gzip;q=1;q=0.2", gzip},
      {"deflate;q=0.5,gzip;q=0.", deflate},
      {"deflate;q=0.5,gzip;q=0.x", gzip},
      {"deflate;q=0.5,gzip;q=0. x", gzip},
      {"deflate;q=-0.5,gzip;q=0.2", gzip},
      {"gzip;q= 0;q=1", none},
      {"gzip;q =0;q=1", gzip},
      {"gzip; q=0;q=1", none},
      {"gzip;q=0, gzip;q=1, gzip;q=0", gzip},
      {"br,identity;q=0.5,gzip;q=0.0001", gzip},
  };
  for (const auto& [header, expected] : cases) {
    EXPECT_EQ(ChooseResponseEncoding(header), expected) << header;
  }
}

TEST(CompressionTest, FastLevelRoundTrips) {
  std::string body(300'000, 'x');
  for (size_t i = 0; i < body.size(); i += 7) body[i] = static_cast<char>('a' + i % 26);
  for (ContentEncoding e : {ContentEncoding::kGzip, ContentEncoding::kDeflate}) {
    std::string packed = Compress(body, e, 1);
    EXPECT_LT(packed.size(), body.size() / 3);
    Result<std::string> back = Decompress(packed, e, body.size());
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, body);
  }
}

}  // namespace
}  // namespace fdyno::http
