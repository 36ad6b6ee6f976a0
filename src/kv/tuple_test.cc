#include "kv/tuple.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>

#include "base/test_seed.h"

namespace fdyno::kv {
namespace {

using test::Seed;

std::string Hex(std::string_view s) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 0xF]);
  }
  return out;
}

// Byte strings from FoundationDB's tuple layer (bindings/python/fdb/tuple.py and the
// documented examples in design/tuple.md).
TEST(TupleTest, KnownEncodings) {
  EXPECT_EQ(Hex(Tuple{nullptr}.Pack()), "00");
  EXPECT_EQ(Hex(Tuple{Bytes{std::string("foo\x00"
                                        "bar",
                                        7)}}
                    .Pack()),
            "01666F6F00FF62617200");
  EXPECT_EQ(Hex(Tuple{"F\xd4\x8c"
                      "O"}
                    .Pack()),
            "0246D48C4F00");
  // design/tuple.md: pack(u"F\u00d4O\u0000bar") == b'\x02F\xc3\x94O\x00\xffbar\x00'
  EXPECT_EQ(Hex(Tuple{std::string("F\xc3\x94O\x00"
                                  "bar",
                                  8)}
                    .Pack()),
            "0246C3944F00FF62617200");
  EXPECT_EQ(Hex(Tuple{std::string("\x00", 1)}.Pack()), "0200FF00");
  // A nested tuple is a TupleElement: Tuple{Tuple{...}} is a copy in clang (CWG 1467), a
  // nesting in GCC.
  EXPECT_EQ(Hex(Tuple{TupleElement(Tuple{Bytes{std::string("foo\x00"
                                                           "bar",
                                                           7)},
                                         nullptr, TupleElement(Tuple{})})}
                    .Pack()),
            "0501666F6F00FF6261720000FF050000");
  EXPECT_EQ(Hex(Tuple{0}.Pack()), "14");
  EXPECT_EQ(Hex(Tuple{1}.Pack()), "1501");
  EXPECT_EQ(Hex(Tuple{-1}.Pack()), "13FE");
  EXPECT_EQ(Hex(Tuple{255}.Pack()), "15FF");
  EXPECT_EQ(Hex(Tuple{256}.Pack()), "160100");
  EXPECT_EQ(Hex(Tuple{-255}.Pack()), "1300");
  EXPECT_EQ(Hex(Tuple{-256}.Pack()), "12FEFF");
  EXPECT_EQ(Hex(Tuple{5551212}.Pack()), "1754B46C");
  EXPECT_EQ(Hex(Tuple{-5551212}.Pack()), "11AB4B93");
  EXPECT_EQ(Hex(Tuple{INT64_MAX}.Pack()), "1C7FFFFFFFFFFFFFFF");
  EXPECT_EQ(Hex(Tuple{INT64_MIN}.Pack()), "0C7FFFFFFFFFFFFFFF");
  EXPECT_EQ(Hex(Tuple{false, true}.Pack()), "2627");
  EXPECT_EQ(Hex(Tuple{"a", 1}.Pack()), "0261001501");
}

TEST(TupleTest, VersionstampEncodingAndOffset) {
  Versionstamp vs =
      Versionstamp::Complete(std::string("\x00\x00\x00\x00\x00\x00\x00\x07\x00\x01", 10), 3);
  EXPECT_TRUE(vs.complete());
  EXPECT_EQ(vs.commit_version(), 7);
  EXPECT_EQ(Hex(Tuple{vs}.Pack()),
            "3300000000000000070001"
            "0003");
  auto unpacked = Tuple::Unpack(Tuple{"x", vs}.Pack());
  ASSERT_TRUE(unpacked.ok());
  EXPECT_EQ(unpacked->GetVersionstamp(1).value(), vs);

  Tuple t{"log", Versionstamp::Incomplete(9)};
  auto packed = t.PackWithVersionstamp("P");
  ASSERT_TRUE(packed.ok());
  // "P" + 02 6C 6F 67 00 + 33 + 10 x FF + 00 09 + offset (LE) 7
  EXPECT_EQ(Hex(*packed),
            "50026C6F670033FFFFFFFFFFFFFFFFFFFF0009"
            "07000000");
  EXPECT_FALSE(Tuple{"no stamp"}.PackWithVersionstamp().ok());
  Tuple two{Versionstamp::Incomplete(), Versionstamp::Incomplete()};
  EXPECT_FALSE(two.PackWithVersionstamp().ok());
  // An incomplete versionstamp nested inside a tuple still gets its offset.
  auto nested = Tuple{TupleElement(Tuple{Versionstamp::Incomplete()})}.PackWithVersionstamp();
  ASSERT_TRUE(nested.ok());
  EXPECT_EQ(static_cast<uint8_t>((*nested)[nested->size() - 4]), 2);
}

TEST(TupleTest, UnpackRejectsMalformedInput) {
  const std::vector<std::string> bad = {
      std::string("\x01"
                  "abc",
                  4),                                          // unterminated bytes
      std::string("\x02", 1),                                  // unterminated string
      std::string("\x05\x15\x01", 3),                          // unterminated nested tuple
      std::string("\x16\x01", 2),                              // truncated integer
      std::string("\x15\x00", 2),                              // non-canonical integer
      std::string("\x13\xFF", 2),                              // non-canonical negative integer
      std::string("\x1C\x80\x00\x00\x00\x00\x00\x00\x00", 9),  // > INT64_MAX
      std::string("\x0C\x7F\xFF\xFF\xFF\xFF\xFF\xFF\xFE", 9),  // < INT64_MIN
      std::string("\x33\x00\x01", 3),                          // truncated versionstamp
      std::string("\x21", 1),                                  // double: not supported
      std::string("\x30", 1),                                  // uuid: not supported
      std::string("\x0B\x01", 2),  // big negative integer: not supported
  };
  std::string deep(100'000, '\x05');  // nesting beyond any sane depth fails, not crashes
  std::vector<std::string> all = bad;
  all.push_back(deep);
  Tuple nested;
  for (int i = 0; i < 99; ++i) nested = Tuple{nested};
  EXPECT_TRUE(Tuple::Unpack(nested.Pack()).ok());  // 99 levels inside the top level: fine
  for (const auto& b : all) {
    auto r = Tuple::Unpack(b);
    EXPECT_FALSE(r.ok()) << Hex(b);
    if (!r.ok()) {
      EXPECT_EQ(r.error().type, ErrorType::kInternalServerError);
      EXPECT_TRUE(r.error().message.starts_with("Malformed tuple: ")) << r.error().message;
    }
  }
}

TEST(TupleTest, TypedAccessors) {
  Tuple t{"s", Bytes{"b"}, 7, true, Tuple{1, 2}};
  EXPECT_EQ(t.GetString(0).value(), "s");
  EXPECT_EQ(t.GetBytes(1).value(), "b");
  EXPECT_EQ(t.GetInt(2).value(), 7);
  EXPECT_EQ(t.GetBool(3).value(), true);
  EXPECT_EQ(t.GetTuple(4).value(), (Tuple{1, 2}));
  EXPECT_FALSE(t.GetInt(0).ok());
  EXPECT_FALSE(t.GetString(1).ok());
  EXPECT_FALSE(t.GetInt(5).ok());
  EXPECT_EQ(t.ToString(), "(\"s\", b\"b\", 7, true, (1, 2))");
}

TEST(TupleTest, Subspace) {
  Subspace root(Tuple{"app"});
  Subspace items = root.Sub(Tuple{"items", 3});
  EXPECT_EQ(items.key(), root.Pack(Tuple{"items", 3}));
  std::string k = items.Pack(Tuple{"pk", 1});
  EXPECT_TRUE(items.Contains(k));
  EXPECT_TRUE(root.Contains(k));
  EXPECT_FALSE(root.Sub(Tuple{"other"}).Contains(k));
  auto t = items.Unpack(k);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t, (Tuple{"pk", 1}));
  EXPECT_FALSE(items.Unpack(root.Pack(Tuple{"x"})).ok());

  auto [begin, end] = items.Range();
  EXPECT_LT(begin, k);
  EXPECT_LT(k, end);
  EXPECT_FALSE(items.key() >= begin && items.key() < end);  // the prefix itself is outside
  auto [b2, e2] = items.Range(Tuple{"pk"});
  EXPECT_LT(b2, k);
  EXPECT_LT(k, e2);
  EXPECT_GE(items.Pack(Tuple{"pl"}), e2);

  Subspace raw = Subspace::FromRawPrefix(std::string("\xFE", 1));
  EXPECT_EQ(raw.Pack(Tuple{1}), std::string("\xFE\x15\x01", 3));
  auto vk = raw.PackWithVersionstamp(Tuple{Versionstamp::Incomplete()});
  ASSERT_TRUE(vk.ok());
  EXPECT_EQ(static_cast<uint8_t>((*vk)[vk->size() - 4]), 2);  // after 0xFE and 0x33
}

TEST(TupleTest, PrefixEnd) {
  EXPECT_EQ(PrefixEnd("abc"), "abd");
  EXPECT_EQ(PrefixEnd(std::string("a\xFF\xFF", 3)), "b");
  EXPECT_EQ(PrefixEnd(std::string("\x01\xFE", 2)), std::string("\x01\xFF", 2));
}

// Random tuples: the bytewise order of Pack() equals tuple order, and Unpack inverts Pack.
class RandomTuples {
 public:
  explicit RandomTuples(uint64_t seed) : rng_(seed) {}

  Tuple Make(int depth = 0) {
    Tuple t;
    int n = Uniform(0, depth == 0 ? 5 : 3);
    for (int i = 0; i < n; ++i) t.Add(Element(depth));
    return t;
  }

 private:
  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  std::string Str() {
    // Few distinct bytes (incl. 0x00 and 0xFF) so that prefixes and escapes collide often.
    static const char kAlphabet[] = {'\x00', '\x01', 'a', 'b', '\x7F', '\x80', '\xFE', '\xFF'};
    std::string s;
    int n = Uniform(0, 4);
    for (int i = 0; i < n; ++i) s.push_back(kAlphabet[Uniform(0, 7)]);
    return s;
  }

  int64_t Int() {
    switch (Uniform(0, 4)) {
      case 0:
        return Uniform(-3, 3);
      case 1:
        return std::uniform_int_distribution<int64_t>(-70000, 70000)(rng_);
      case 2:
        return std::uniform_int_distribution<int64_t>(INT64_MIN, INT64_MAX)(rng_);
      case 3: {
        // Around byte-length boundaries: +-2^k, +-(2^k - 1).
        int k = Uniform(0, 62);
        int64_t v = (int64_t{1} << k) - Uniform(0, 1);
        return Uniform(0, 1) ? v : -v;
      }
      default:
        return Uniform(0, 1) ? INT64_MIN : INT64_MAX;
    }
  }

  TupleElement Element(int depth) {
    switch (Uniform(0, depth < 2 ? 6 : 5)) {
      case 0:
        return TupleElement(nullptr);
      case 1:
        return TupleElement(Bytes{Str()});
      case 2:
        return TupleElement(Str());
      case 3:
        return TupleElement(Int());
      case 4:
        return TupleElement(Uniform(0, 1) == 1);
      case 5: {
        std::string c(10, '\0');
        for (auto& ch : c) ch = static_cast<char>(Uniform(0, 2) == 0 ? 0xFF : Uniform(0, 3));
        if (c == std::string(10, '\xFF')) c[0] = 0;  // keep it complete
        return TupleElement(Versionstamp::Complete(c, static_cast<uint16_t>(Uniform(0, 2))));
      }
      default:
        return TupleElement(Make(depth + 1));
    }
  }

  std::mt19937_64 rng_;
};

TEST(TupleTest, RandomOrderPreservationAndRoundTrip) {
  uint64_t seed = Seed();
  std::cout << "tuple order test seed: " << seed << " (replay: FDYNO_SEED=" << seed << ")\n";
  RandomTuples gen(seed);
  std::vector<Tuple> tuples;
  for (int i = 0; i < 3000; ++i) tuples.push_back(gen.Make());
  for (const auto& t : tuples) {
    auto back = Tuple::Unpack(t.Pack());
    ASSERT_TRUE(back.ok()) << t.ToString() << ": " << back.error().message;
    ASSERT_EQ(*back, t) << t.ToString() << " vs " << back->ToString();
    ASSERT_EQ(back->Pack(), t.Pack());
  }
  std::vector<std::string> packed;
  for (const auto& t : tuples) packed.push_back(t.Pack());
  // Compare random pairs and adjacent pairs in sorted order (the pairs that matter most).
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 50000; ++i) {
    size_t a = rng() % tuples.size(), b = rng() % tuples.size();
    auto model = tuples[a] <=> tuples[b];
    int bytes = packed[a].compare(packed[b]);
    ASSERT_EQ(model < 0, bytes < 0) << tuples[a].ToString() << " vs " << tuples[b].ToString();
    ASSERT_EQ(model == 0, bytes == 0) << tuples[a].ToString() << " vs " << tuples[b].ToString();
  }
  std::vector<size_t> order(tuples.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return (tuples[a] <=> tuples[b]) < 0; });
  for (size_t i = 1; i < order.size(); ++i) {
    const auto& pa = packed[order[i - 1]];
    const auto& pb = packed[order[i]];
    ASSERT_LE(pa, pb) << tuples[order[i - 1]].ToString() << " vs " << tuples[order[i]].ToString();
  }
}

}  // namespace
}  // namespace fdyno::kv
