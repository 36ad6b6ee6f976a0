#include "api/update_size.h"

#include <gtest/gtest.h>

#include <string>

#include "expr/parser.h"
#include "expr/resolver.h"
#include "model/item_size.h"

namespace fdyno::api {
namespace {

using model::AttributeValue;
using model::Item;

// The resolved update `text`, with :s a one-character string, :l a list of one and :n a number.
expr::Update Resolved(const std::string& text) {
  auto parsed = expr::ParseUpdate(text);
  EXPECT_TRUE(parsed.ok()) << text;
  const expr::AttributeValues values = {{":s", AttributeValue::S("b")},
                                        {":l", AttributeValue::L({AttributeValue::S("b")})},
                                        {":n", AttributeValue::N(*model::Number::Parse("2"))}};
  expr::ResolveContext ctx(nullptr, &values);
  auto update = ctx.ResolveUpdate(*parsed);
  EXPECT_TRUE(update.ok()) << text;
  return *update;
}

TEST(UpdateSizeTest, OverheadPerAction) {
  EXPECT_EQ(UpdateSizeOverhead(Resolved("SET a = :s")), 3u + 19);
  EXPECT_EQ(UpdateSizeOverhead(Resolved("SET a.b = :s")), 3u + 19);
  EXPECT_EQ(UpdateSizeOverhead(Resolved("SET l[0] = :s")), 3u + 20);
  EXPECT_EQ(UpdateSizeOverhead(Resolved("SET m.l[0].x = :s")), 3u + 20);
  EXPECT_EQ(UpdateSizeOverhead(Resolved("SET a = a + :n")), 3u + 69);
  EXPECT_EQ(UpdateSizeOverhead(Resolved("SET a = list_append(a, :l)")), 3u + 19);
  EXPECT_EQ(UpdateSizeOverhead(Resolved("ADD a :n")), 3u + 19);
  EXPECT_EQ(UpdateSizeOverhead(Resolved("REMOVE a, b[1]")), 3u + 2 + 2);
  EXPECT_EQ(UpdateSizeOverhead(Resolved("SET a = :s, l[0] = :s REMOVE c")), 3u + 19 + 20 + 2);
}

// An item with key pk = "k" (3 bytes with its name), a list l = ["b"] (6 bytes) and a string d
// padding it to `size` bytes.
Item ItemOfSize(uint64_t size) {
  Item item = {{"pk", AttributeValue::S("k")},
               {"l", AttributeValue::L({AttributeValue::S("b")})},
               {"d", AttributeValue::S("")}};
  item["d"] = AttributeValue::S(std::string(size - model::ItemSize(item), 'x'));
  EXPECT_EQ(model::ItemSize(item), size);
  return item;
}

// The item without its key plus the overhead must fit in 400 KB: a list index costs one byte
// more than a plain SET of the same finished item.
TEST(UpdateSizeTest, TheItemWithoutItsKeyPlusTheOverheadMustFit) {
  model::KeySchema schema;
  schema.hash = {"pk", model::ScalarType::kS};
  const uint64_t key_bytes = 3;
  const expr::Update set = Resolved("SET l = :l");
  const expr::Update set_index = Resolved("SET l[0] = :s");
  const Item fits = ItemOfSize(model::kMaxItemSizeBytes - 22 + key_bytes);
  EXPECT_TRUE(CheckUpdateSize(fits, schema, &set).ok());
  Status refused = CheckUpdateSize(fits, schema, &set_index);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().type, ErrorType::kValidation);
  EXPECT_EQ(refused.error().message, "Item size to update has exceeded the maximum allowed size");
  EXPECT_FALSE(
      CheckUpdateSize(ItemOfSize(model::kMaxItemSizeBytes - 21 + key_bytes), schema, &set).ok());
  // Without an update (no actions) only the finished item counts.
  EXPECT_TRUE(CheckUpdateSize(ItemOfSize(model::kMaxItemSizeBytes), schema, nullptr).ok());
  EXPECT_FALSE(CheckUpdateSize(ItemOfSize(model::kMaxItemSizeBytes + 1), schema, nullptr).ok());
  // A finished item over 400 KB is refused whatever the update.
  EXPECT_FALSE(CheckUpdateSize(ItemOfSize(model::kMaxItemSizeBytes + 1), schema, &set).ok());
}

}  // namespace
}  // namespace fdyno::api
