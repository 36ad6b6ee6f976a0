#include "model/stored_json.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>

#include "base/test_seed.h"
#include "model/item_codec.h"
#include "model/item_size.h"
#include "model/json.h"
#include "model/random_value.h"

namespace fdyno::model {
namespace {

using test::Seed;

Result<std::pair<std::string, uint64_t>> Transcode(std::string_view stored) {
  rapidjson::StringBuffer buffer;
  FDYNO_ASSIGN_OR_RETURN(uint64_t size, WriteStoredItemJson(stored, buffer));
  return std::make_pair(std::string(buffer.GetString(), buffer.GetSize()), size);
}

// Corrupt and truncated inputs: item_codec_test.cc checks the transcoder against the decoder
// on each of its corrupt cases.
TEST(StoredJsonTest, RandomItemsMatchTheDecoder) {
  const uint64_t seed = Seed();
  SCOPED_TRACE("replay with FDYNO_SEED=" + std::to_string(seed));
  RandomValues gen(seed);
  for (int i = 0; i < 5000; ++i) {
    Item item = gen.RandomItem();
    const std::string stored = EncodeStoredItem(item);
    auto written = Transcode(stored);
    ASSERT_TRUE(written.ok()) << written.error().message;
    ASSERT_EQ(written->first, ItemToJson(item));
    ASSERT_EQ(written->second, ItemSize(item));
    auto size = StoredItemSize(stored);
    ASSERT_TRUE(size.ok()) << size.error().message;
    ASSERT_EQ(*size, ItemSize(item));
  }
}

// Strings are escaped as RapidJSON's Writer escapes them, at every position of a long string
// (the transcoder checks 8 bytes at a time) and for every byte value, in names, values and
// set members.
TEST(StoredJsonTest, EveryByteIsEscapedLikeRapidJson) {
  for (int c = 0; c < 256; ++c) {
    for (size_t pos : {0, 3, 7, 8, 9, 15, 16, 20}) {
      std::string s(21, 'x');
      s[pos] = static_cast<char>(c);
      Item item{{s, AttributeValue::S(s)},
                {"set", AttributeValue{StringSet{{s, "y"}}}},
                {"short", AttributeValue::S(std::string(1, static_cast<char>(c)))}};
      auto written = Transcode(EncodeStoredItem(item));
      ASSERT_TRUE(written.ok()) << c;
      ASSERT_EQ(written->first, ItemToJson(item)) << "byte " << c << " at " << pos;
    }
  }
}

TEST(StoredJsonTest, NumbersAndSizes) {
  // Canonical text and DynamoDB's number sizes, through the stored parts.
  for (const char* n : {"0", "1", "-1", "100", "0.001", "-12.5", "1E+125", "1E-130",
                        "99999999999999999999999999999999999999", "12.34", "123.4"}) {
    Item item{{"n", AttributeValue::N(Number::Parse(n).value())}};
    auto written = Transcode(EncodeStoredItem(item));
    ASSERT_TRUE(written.ok()) << n;
    EXPECT_EQ(written->first, ItemToJson(item)) << n;
    EXPECT_EQ(written->second, ItemSize(item)) << n;
    EXPECT_EQ(StoredItemSize(EncodeStoredItem(item)).value(), ItemSize(item)) << n;
  }
}

}  // namespace
}  // namespace fdyno::model
