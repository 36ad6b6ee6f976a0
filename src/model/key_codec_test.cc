#include "model/key_codec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>

#include "base/test_seed.h"
#include "model/key_schema.h"

namespace fdyno::model {
namespace {

using test::Seed;

// DynamoDB's order for key values of one type.
int DynamoCompare(const AttributeValue& a, const AttributeValue& b) {
  EXPECT_EQ(a.type(), b.type());
  switch (a.type()) {
    case Type::kS: {
      int c = std::get<std::string>(a.v).compare(std::get<std::string>(b.v));
      return c < 0 ? -1 : c > 0;
    }
    case Type::kB: {
      int c = std::get<Binary>(a.v).bytes.compare(std::get<Binary>(b.v).bytes);
      return c < 0 ? -1 : c > 0;
    }
    case Type::kN:
      return std::get<Number>(a.v).Compare(std::get<Number>(b.v));
    default:
      ADD_FAILURE();
      return 0;
  }
}

int ByteCompare(const std::string& a, const std::string& b) {
  int c = a.compare(b);  // char_traits<char> compares as unsigned char
  return c < 0 ? -1 : c > 0;
}

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}
  int Int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  std::string Bytes() {
    static const char kAlphabet[] = {'\0', '\x01', 'a', 'b', '\x7f', '\x80', '\xfe', '\xff'};
    std::string s;
    const int n = Int(0, 6);
    for (int i = 0; i < n; ++i) s.push_back(kAlphabet[Int(0, 7)]);
    return s;
  }

  Number Num() {
    if (Int(0, 15) == 0) return Number();
    // Digits drawn from a few shared prefixes so that near-equal values are common.
    static const char* kPrefixes[] = {"1", "12", "123", "9", "99", "5", "10", "100"};
    std::string d = Int(0, 1) ? kPrefixes[Int(0, 7)] : "";
    const int extra = Int(0, 1) ? Int(0, 3) : Int(0, 38);
    for (int i = 0; i < extra; ++i) d.push_back(static_cast<char>('0' + Int(0, 9)));
    if (d.size() > 38) d.resize(38);
    while (!d.empty() && d.back() == '0') d.pop_back();
    while (!d.empty() && d.front() == '0') d.erase(d.begin());
    if (d.empty()) d = "7";
    const int e = Int(0, 3) == 0 ? Int(-129, 126) : Int(-3, 4);
    return Number::FromParts(Int(0, 1) == 1, d, e);
  }

  AttributeValue Value(Type t) {
    switch (t) {
      case Type::kS:
        return AttributeValue::S(Bytes());
      case Type::kB:
        return AttributeValue::B(Bytes());
      default:
        return AttributeValue::N(Num());
    }
  }

 private:
  std::mt19937_64 rng_;
};

TEST(KeyCodecTest, ByteOrderIsDynamoOrderForRandomValues) {
  const uint64_t seed = Seed();
  SCOPED_TRACE("replay with FDYNO_SEED=" + std::to_string(seed));
  Gen gen(seed);
  for (Type t : {Type::kS, Type::kN, Type::kB}) {
    std::vector<AttributeValue> values;
    for (int i = 0; i < 3000; ++i) values.push_back(gen.Value(t));
    for (int i = 0; i < 20000; ++i) {
      const auto& a = values[static_cast<size_t>(gen.Int(0, 2999))];
      const auto& b = values[static_cast<size_t>(gen.Int(0, 2999))];
      const std::string ea = EncodeKeyValue(a), eb = EncodeKeyValue(b);
      ASSERT_EQ(ByteCompare(ea, eb), DynamoCompare(a, b)) << "type " << static_cast<int>(t);
    }
    // Sorting by bytes and by value give the same sequence.
    std::vector<std::pair<std::string, size_t>> enc;
    for (size_t i = 0; i < values.size(); ++i) enc.emplace_back(EncodeKeyValue(values[i]), i);
    std::sort(enc.begin(), enc.end());
    for (size_t i = 1; i < enc.size(); ++i) {
      ASSERT_LE(DynamoCompare(values[enc[i - 1].second], values[enc[i].second]), 0);
    }
    // Round trip.
    for (const auto& v : values) {
      std::string e = EncodeKeyValue(v);
      std::string_view in = e;
      auto d = DecodeKeyValue(&in);
      ASSERT_TRUE(d.ok()) << d.error().message;
      EXPECT_TRUE(in.empty());
      EXPECT_TRUE(*d == v);
      EXPECT_EQ(EncodeKeyValue(*d), e);
    }
  }
}

TEST(KeyCodecTest, CompositeKeysSortByHashThenRange) {
  const uint64_t seed = Seed();
  SCOPED_TRACE("replay with FDYNO_SEED=" + std::to_string(seed));
  Gen gen(seed);
  const Type types[] = {Type::kS, Type::kN, Type::kB};
  for (Type ht : types) {
    for (Type rt : types) {
      for (int i = 0; i < 3000; ++i) {
        AttributeValue h1 = gen.Value(ht), h2 = gen.Int(0, 2) ? gen.Value(ht) : h1;
        AttributeValue r1 = gen.Value(rt), r2 = gen.Value(rt);
        int expected = DynamoCompare(h1, h2);
        if (expected == 0) expected = DynamoCompare(r1, r2);
        std::string k1 = EncodeKey(h1, &r1), k2 = EncodeKey(h2, &r2);
        ASSERT_EQ(ByteCompare(k1, k2), expected);
        auto d = DecodeKey(k1, true);
        ASSERT_TRUE(d.ok());
        EXPECT_TRUE(d->hash == h1);
        EXPECT_TRUE(*d->range == r1);
      }
    }
  }
}

TEST(KeyCodecTest, KnownEncodings) {
  auto n = [](std::string_view s) { return AttributeValue::N(Number::Parse(s).value()); };
  EXPECT_EQ(EncodeKeyValue(n("0")), std::string("\x31", 1));
  // 1 = 0.1 x 10^1: exponent 1 + 129 = 130; digit pair "10" -> 11; terminator 0.
  EXPECT_EQ(EncodeKeyValue(n("1")), std::string("\x32\x82\x0b\x00", 4));
  // -1: complemented exponent 255 - 130 = 125, digit byte 101 - 11 = 90, terminator 0xff.
  EXPECT_EQ(EncodeKeyValue(n("-1")), std::string("\x30\x7d\x5a\xff", 4));
  EXPECT_EQ(EncodeKeyValue(AttributeValue::S(std::string("a\0b", 3))), std::string("\x10"
                                                                                   "a\x00\xff"
                                                                                   "b\x00",
                                                                                   6));
  EXPECT_EQ(EncodeKeyValue(AttributeValue::B("")), std::string("\x20\x00", 2));
  // Extremes sort correctly.
  EXPECT_LT(EncodeKeyValue(n("-9.9999999999999999999999999999999999999E+125")),
            EncodeKeyValue(n("-1E-130")));
  EXPECT_LT(EncodeKeyValue(n("-1E-130")), EncodeKeyValue(n("0")));
  EXPECT_LT(EncodeKeyValue(n("0")), EncodeKeyValue(n("1E-130")));
  EXPECT_LT(EncodeKeyValue(n("1E-130")),
            EncodeKeyValue(n("9.9999999999999999999999999999999999999E+125")));
}

TEST(KeyCodecTest, CorruptInputFailsClosed) {
  for (std::string bad :
       {std::string(""),
        std::string("\x10"
                    "abc",
                    4),
        std::string("\x07", 1), std::string("\x32\x82\x0b", 3), std::string("\x32\x82\x65\x00", 4),
        std::string("\x32\x82\x01\x00", 4), std::string("\x32\x82\x00", 3),
        std::string("\x30\x7d\x5a", 3), std::string("\x32", 1)}) {
    std::string_view in = bad;
    auto r = DecodeKeyValue(&in);
    EXPECT_FALSE(r.ok()) << "accepted corrupt key of size " << bad.size();
    if (!r.ok()) {
      EXPECT_EQ(r.error().type, ErrorType::kInternalServerError);
    }
  }
  auto trailing = DecodeKey(std::string("\x31\x31", 2), false);
  EXPECT_FALSE(trailing.ok());
}

TEST(KeyCodecTest, RandomBytesNeverDecodeToANonCanonicalValue) {
  const uint64_t seed = Seed();
  SCOPED_TRACE("replay with FDYNO_SEED=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 200000; ++i) {
    std::string s;
    const int len = static_cast<int>(rng() % 8);
    static const uint8_t kFirst[] = {0x10, 0x20, 0x30, 0x31, 0x32};
    s.push_back(static_cast<char>(kFirst[rng() % 5]));
    for (int k = 0; k < len; ++k) s.push_back(static_cast<char>(rng() % 256));
    std::string_view in = s;
    auto r = DecodeKeyValue(&in);
    if (!r.ok()) continue;
    // Whatever decodes must re-encode to exactly the bytes consumed.
    EXPECT_EQ(EncodeKeyValue(*r), s.substr(0, s.size() - in.size()));
  }
}

TEST(KeySchemaTest, Names) {
  EXPECT_EQ(ScalarTypeName(ScalarType::kN), "N");
  EXPECT_TRUE(ParseScalarType("B") == ScalarType::kB);
  EXPECT_FALSE(ParseScalarType("BOOL").has_value());
  EXPECT_TRUE(ToType(ScalarType::kS) == Type::kS);
  EXPECT_FALSE(ToScalarType(Type::kM).has_value());
  EXPECT_TRUE(ToScalarType(Type::kN) == ScalarType::kN);
}

}  // namespace
}  // namespace fdyno::model
