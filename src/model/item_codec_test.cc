#include "model/item_codec.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>

#include "base/test_seed.h"
#include "model/item_size.h"
#include "model/json.h"
#include "model/random_value.h"
#include "model/stored_json.h"

namespace fdyno::model {
namespace {

using test::Seed;

// Strict equality: same types, same members in the same order (stored order matters).
bool Identical(const AttributeValue& a, const AttributeValue& b) {
  return AttributeValueToJson(a) == AttributeValueToJson(b);
}

// The JSON transcoder (stored_json.h) agrees with the decoder on every input: the same JSON
// and size when the bytes decode, the same error when they do not.
void ExpectTranscoderAgrees(std::string_view stored) {
  auto decoded = DecodeStoredItem(stored);
  rapidjson::StringBuffer buffer;
  auto written = WriteStoredItemJson(stored, buffer);
  ASSERT_EQ(decoded.ok(), written.ok())
      << (decoded.ok() ? written.error().message : decoded.error().message);
  auto size = StoredItemSize(stored);
  ASSERT_EQ(decoded.ok(), size.ok());
  if (decoded.ok()) {
    EXPECT_EQ(std::string_view(buffer.GetString(), buffer.GetSize()), ItemToJson(*decoded));
    EXPECT_EQ(*written, ItemSize(*decoded));
    EXPECT_EQ(*size, ItemSize(*decoded));
  } else {
    EXPECT_EQ(written.error().type, ErrorType::kInternalServerError);
    EXPECT_EQ(written.error().message, decoded.error().message);
    EXPECT_EQ(size.error().message, decoded.error().message);
  }
}

TEST(ItemCodecTest, RandomItemsRoundTrip) {
  const uint64_t seed = Seed();
  SCOPED_TRACE("replay with FDYNO_SEED=" + std::to_string(seed));
  RandomValues gen(seed);
  for (int i = 0; i < 5000; ++i) {
    Item item = gen.RandomItem();
    std::string enc = EncodeStoredItem(item);
    ASSERT_EQ(static_cast<uint8_t>(enc[0]), kItemFormatV1);
    auto dec = DecodeStoredItem(enc);
    ASSERT_TRUE(dec.ok()) << dec.error().message;
    ASSERT_EQ(ItemToJson(*dec), ItemToJson(item));
    ASSERT_EQ(EncodeStoredItem(*dec), enc);

    AttributeValue v = gen.Value();
    auto dv = DecodeStoredValue(EncodeStoredValue(v));
    ASSERT_TRUE(dv.ok()) << dv.error().message;
    ASSERT_TRUE(Identical(*dv, v));
  }
}

TEST(ItemCodecTest, TruncationsAndTrailingBytesFail) {
  const uint64_t seed = Seed();
  SCOPED_TRACE("replay with FDYNO_SEED=" + std::to_string(seed));
  RandomValues gen(seed);
  for (int i = 0; i < 300; ++i) {
    Item item = gen.RandomItem();
    std::string enc = EncodeStoredItem(item);
    for (size_t cut = 0; cut < enc.size(); ++cut) {
      auto r = DecodeStoredItem(std::string_view(enc).substr(0, cut));
      ASSERT_FALSE(r.ok()) << "decoded a truncated item at " << cut;
      ASSERT_EQ(r.error().type, ErrorType::kInternalServerError);
      ASSERT_NO_FATAL_FAILURE(ExpectTranscoderAgrees(std::string_view(enc).substr(0, cut)));
    }
    ASSERT_FALSE(DecodeStoredItem(enc + "x").ok());
    ExpectTranscoderAgrees(enc + "x");
  }
}

TEST(ItemCodecTest, UnknownVersionFailsClosed) {
  std::string enc = EncodeStoredItem(Item{{"a", AttributeValue::S("x")}});
  for (int v : {0, 2, 0x7f, 0xff}) {
    enc[0] = static_cast<char>(v);
    auto r = DecodeStoredItem(enc);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().type, ErrorType::kInternalServerError);
    EXPECT_NE(r.error().message.find("unsupported stored item format version"), std::string::npos);
    ExpectTranscoderAgrees(enc);
  }
  EXPECT_FALSE(DecodeStoredItem("").ok());
  ExpectTranscoderAgrees("");
  EXPECT_FALSE(DecodeStoredValue("").ok());
}

TEST(ItemCodecTest, MutatedBytesNeverDecodeToSomethingElseSilently) {
  const uint64_t seed = Seed();
  SCOPED_TRACE("replay with FDYNO_SEED=" + std::to_string(seed));
  RandomValues gen(seed);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 20000; ++i) {
    std::string enc = EncodeStoredItem(gen.RandomItem());
    if (enc.size() < 2) continue;
    const size_t pos = 1 + rng() % (enc.size() - 1);
    enc[pos] = static_cast<char>(rng() % 256);
    auto r = DecodeStoredItem(enc);
    // A mutation may yield another valid encoding; then it must be canonical.
    if (r.ok()) {
      ASSERT_EQ(EncodeStoredItem(*r), enc);
    }
    ASSERT_NO_FATAL_FAILURE(ExpectTranscoderAgrees(enc)) << i;
  }
}

TEST(ItemCodecTest, RepeatedSetMembersFailClosed) {
  // Found by fuzz/item_codec_fuzz.cc: a set whose members repeat is not an encoding we write.
  for (const char* json : {R"({"s":{"SS":["a","b"]}})", R"({"s":{"BS":["YQ==","Yg=="]}})",
                           R"({"s":{"NS":["1","2"]}})"}) {
    std::string enc = EncodeStoredItem(ItemFromJson(json).value());
    ASSERT_TRUE(DecodeStoredItem(enc).ok());
    // The last member's final byte: 'b' -> 'a', or digit pair 0x20 -> 0x10 for "2" -> "1".
    char& last = enc.back();
    last = last == 'b' ? 'a' : static_cast<char>(0x10);
    auto r = DecodeStoredItem(enc);
    ASSERT_FALSE(r.ok()) << json;
    EXPECT_EQ(r.error().message, "corrupt stored item: duplicate set member");
    ExpectTranscoderAgrees(enc);
  }
}

TEST(ItemCodecTest, DeepCorruptNestingIsBounded) {
  // Thousands of nested list headers: rejected, not a stack overflow.
  std::string enc(1, static_cast<char>(kItemFormatV1));
  enc += '\x01';  // one attribute
  enc += '\x01';
  enc += 'a';
  for (int i = 0; i < 100000; ++i) {
    enc += static_cast<char>(Type::kL);
    enc += '\x01';
  }
  auto r = DecodeStoredItem(enc);
  ASSERT_FALSE(r.ok());
  ExpectTranscoderAgrees(enc);
}

// Speed is item_bench's (bench/README.md); this pins the size.
TEST(ItemCodecTest, ATypicalItemEncodesInUnderSixTenthsOfItsJson) {
  // A typical 100-byte item.
  auto item = ItemFromJson(R"({"pk":{"S":"user#000123"},"sk":{"N":"1700000000"},
    "name":{"S":"Alice Example"},"email":{"S":"alice@example.com"},"age":{"N":"42"},
    "active":{"BOOL":true},"tags":{"SS":["a","b"]}})");
  ASSERT_TRUE(item.ok());
  std::string enc = EncodeStoredItem(*item);
  const std::string json = ItemToJson(*item);
  EXPECT_LT(enc.size() * 10, json.size() * 6) << enc.size() << " vs json " << json.size();
  EXPECT_EQ(*DecodeStoredItem(enc), *item);
}

}  // namespace
}  // namespace fdyno::model
