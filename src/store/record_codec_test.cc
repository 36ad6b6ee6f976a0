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

}  // namespace
}  // namespace fdyno::store
