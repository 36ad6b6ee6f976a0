// The record codec: one field list encodes and decodes; anything else fails closed.
#include "store/record_codec.h"

#include <gtest/gtest.h>

namespace fdyno::store {
namespace {

enum class Color { kRed, kBlue };
constexpr std::string_view kColors[] = {"RED", "BLUE"};

struct Sample {
  std::string name;
  int64_t count = 0;
  bool on = false;
  std::vector<std::string> tags;
  Color color = Color::kRed;
  bool operator==(const Sample&) const = default;
};

template <typename Fields, typename S>
void SampleFields(Fields& f, S& s) {
  f.Str("name", s.name);
  f.Int("count", s.count);
  f.Bool("on", s.on);
  f.Strs("tags", s.tags);
  f.Enum("color", kColors, s.color);
}

std::string Encode(const Sample& s) {
  RecordWriter w;
  SampleFields(w, s);
  return w.Finish(3);
}

std::optional<Sample> Decode(std::string_view bytes) {
  RecordReader r(bytes, 3);
  Sample s;
  SampleFields(r, s);
  if (!r.ok()) return std::nullopt;
  return s;
}

// A record of version 3 holding `json`.
std::string Raw(std::string_view json) { return std::string(1, '\x03') + std::string(json); }

TEST(RecordCodecTest, OneFieldListEncodesAndDecodes) {
  const Sample s{"n", -7, true, {"a", "b"}, Color::kBlue};
  const std::string bytes = Encode(s);
  EXPECT_EQ(bytes, Raw(R"({"name":"n","count":-7,"on":true,"tags":["a","b"],"color":"BLUE"})"));
  EXPECT_EQ(Decode(bytes), s);
}

TEST(RecordCodecTest, AnythingElseFailsClosed) {
  const std::string good = R"("name":"n","count":1,"on":false,"tags":[],"color":"RED")";
  EXPECT_TRUE(Decode(Raw("{" + good + "}")));
  EXPECT_FALSE(Decode(std::string(1, '\x02') + "{" + good + "}"));  // another version
  EXPECT_FALSE(Decode(""));
  EXPECT_FALSE(Decode(Raw("[1]")));
  EXPECT_FALSE(Decode(Raw("{" + good + ",\"newer\":1}")));  // a member no field names
  EXPECT_FALSE(Decode(Raw(R"({"name":"n","count":1,"on":false,"tags":[]})")));  // one missing
  EXPECT_FALSE(Decode(Raw(R"({"name":"n","count":"1","on":false,"tags":[],"color":"RED"})")));
  EXPECT_FALSE(Decode(Raw(R"({"name":"n","count":1,"on":false,"tags":[1],"color":"RED"})")));
  EXPECT_FALSE(Decode(Raw(R"({"name":"n","count":1,"on":false,"tags":[],"color":"GREEN"})")));
}

struct Older {
  std::string owner = "shared";
  std::string key;
};

template <typename Fields, typename S>
void OlderFields(Fields& f, S& s) {
  f.OptStr("owner", s.owner);
  f.Hex("key", s.key);
}

TEST(RecordCodecTest, OptionalStringsAndHexBytes) {
  RecordWriter w;
  const Older o{"me", std::string("\x00\xff", 2)};
  OlderFields(w, o);
  const std::string bytes = w.Finish(3);
  EXPECT_EQ(bytes, Raw(R"({"owner":"me","key":"00ff"})"));
  RecordReader r(bytes, 3);
  Older back;
  OlderFields(r, back);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(back.owner, "me");
  EXPECT_EQ(back.key, o.key);
  RecordReader older(Raw(R"({"key":""})"), 3);  // written before "owner" was
  Older old;
  OlderFields(older, old);
  EXPECT_TRUE(older.ok());
  EXPECT_EQ(old.owner, "shared");
  for (const char* bad : {R"({"key":"0"})", R"({"key":"0G"})", R"({"key":"AB"})"}) {
    RecordReader r2(Raw(bad), 3);
    Older x;
    OlderFields(r2, x);
    EXPECT_FALSE(r2.ok()) << bad;
  }
}

// A record with nested parts: an object, a list of objects, one-or-many, sparse members.
struct Part {
  std::string id;
  int64_t size = 0;
  bool operator==(const Part&) const = default;
};

struct Nest {
  Part head;
  std::vector<Part> parts;
  Part first;
  std::vector<Part> more;
  std::optional<Part> spare;
  int64_t since = 0;           // sparse
  int slots = 1;               // 1..8
  std::vector<int64_t> times;  // sparse
  bool operator==(const Nest&) const = default;
};

template <typename Fields, typename S>
void NestFields(Fields& f, S& s) {
  const auto part = [](auto& f, auto& p) {
    f.Str("id", p.id);
    f.Int("size", p.size);
  };
  f.Object("head", [&](auto& f) { part(f, s.head); });
  f.List("parts", s.parts, part);
  f.OneOrMany("first", s.first, s.more, !s.more.empty(), 2, part);
  f.Opt("spare", s.spare, part);
  f.SparseInt("since", s.since);
  f.Int("slots", s.slots);
  f.Require(s.slots >= 1 && s.slots <= 8);
  f.SparseInts("times", s.times);
}

std::optional<Nest> DecodeNest(std::string_view bytes) {
  RecordReader r(bytes, {3, 4});
  Nest s;
  NestFields(r, s);
  if (!r.ok()) return std::nullopt;
  return s;
}

TEST(RecordCodecTest, NestedPartsEncodeAndDecode) {
  Nest n{{"h", 1}, {{"a", 2}, {"b", 3}}, {"f", 4}, {}, std::nullopt, 0, 2, {}};
  RecordWriter w;
  NestFields(w, n);
  const std::string sparse = w.Finish(3);
  EXPECT_EQ(sparse, Raw(R"({"head":{"id":"h","size":1},"parts":[{"id":"a","size":2},)"
                        R"({"id":"b","size":3}],"first":{"id":"f","size":4},"slots":2})"));
  EXPECT_EQ(DecodeNest(sparse), n);

  n.more = {{"m", 5}};
  n.spare = Part{"s", 6};
  n.since = 7;
  n.times = {8, 9};
  RecordWriter full;
  NestFields(full, n);
  const std::string bytes = full.Finish(4);
  EXPECT_EQ(bytes, std::string(1, '\x04') +
                       R"({"head":{"id":"h","size":1},"parts":[{"id":"a","size":2},)"
                       R"({"id":"b","size":3}],"first":[{"id":"f","size":4},{"id":"m","size":5}],)"
                       R"("spare":{"id":"s","size":6},"since":7,"slots":2,"times":[8,9]})");
  EXPECT_EQ(DecodeNest(bytes), n);
}

TEST(RecordCodecTest, NestedPartsFailClosed) {
  const std::string head = R"({"head":{"id":"h","size":1},"parts":[],)";
  EXPECT_TRUE(DecodeNest(Raw(head + R"("first":{"id":"f","size":4},"slots":2})")));
  // A member a nested object's fields do not name, or one it lacks.
  EXPECT_FALSE(DecodeNest(Raw(R"({"head":{"id":"h","size":1,"x":0},"parts":[],)"
                              R"("first":{"id":"f","size":4},"slots":2})")));
  EXPECT_FALSE(DecodeNest(Raw(head + R"("first":{"id":"f"},"slots":2})")));
  // A list element that is no object, or lacks a member.
  EXPECT_FALSE(DecodeNest(Raw(R"({"head":{"id":"h","size":1},"parts":[1],)"
                              R"("first":{"id":"f","size":4},"slots":2})")));
  EXPECT_FALSE(DecodeNest(Raw(R"({"head":{"id":"h","size":1},"parts":[{"id":"a"}],)"
                              R"("first":{"id":"f","size":4},"slots":2})")));
  // One-or-many: an empty array, more than the most.
  EXPECT_FALSE(DecodeNest(Raw(head + R"("first":[],"slots":2})")));
  EXPECT_FALSE(DecodeNest(Raw(head + R"("first":[{"id":"a","size":1},{"id":"b","size":1},)"
                                     R"({"id":"c","size":1}],"slots":2})")));
  // A rule that does not hold; a sparse member of the wrong type; a version not listed.
  EXPECT_FALSE(DecodeNest(Raw(head + R"("first":{"id":"f","size":4},"slots":9})")));
  EXPECT_FALSE(DecodeNest(Raw(head + R"("first":{"id":"f","size":4},"slots":2,"times":["1"]})")));
  EXPECT_FALSE(
      DecodeNest(std::string(1, '\x05') + head + R"("first":{"id":"f","size":4},"slots":2})"));
}

}  // namespace
}  // namespace fdyno::store
