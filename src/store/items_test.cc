#include "store/items.h"

#include <gtest/gtest.h>

#include <random>

#include "kv/testing/memory_engine.h"
#include "store/layout.h"

namespace fdyno::store {
namespace {

class ItemsTest : public ::testing::Test {
 protected:
  std::unique_ptr<kv::Database> db_ = kv::OpenMemoryEngine();
  std::string key_ = layout::Items(7).Pack(kv::Tuple{int64_t{1}, kv::Bytes{"pk"}});

  static std::string Image(size_t n, uint32_t seed = 1) {
    std::mt19937 rng(seed);
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(rng());
    return s;
  }

  void Put(const std::string& image) {
    auto tx = db_->CreateTransaction();
    auto old = ReadItem(*tx, key_);
    ASSERT_TRUE(old.ok()) << old.error().message;
    WriteItem(*tx, key_, image, OldItem::Of(*old));
    ASSERT_TRUE(tx->Commit().ok());
  }
  std::optional<StoredItem> Get() {
    auto tx = db_->CreateTransaction();
    auto r = ReadItem(*tx, key_);
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? *r : std::nullopt;
  }
  size_t KeysInTable() {
    auto tx = db_->CreateTransaction();
    auto [b, e] = layout::Table(7).Range();
    auto r = tx->GetRange(b, e);
    EXPECT_TRUE(r.ok());
    return r->kvs.size();
  }
};

TEST_F(ItemsTest, AbsentItemReadsAsNullopt) { EXPECT_FALSE(Get().has_value()); }

TEST_F(ItemsTest, ChunkingAtTheValueBoundary) {
  for (size_t n : {size_t{0}, size_t{1}, kItemChunkBytes - 1, kItemChunkBytes, kItemChunkBytes + 1,
                   2 * kItemChunkBytes, 2 * kItemChunkBytes + 1, size_t{420'000}}) {
    std::string image = Image(n, static_cast<uint32_t>(n));
    Put(image);
    auto got = Get();
    ASSERT_TRUE(got.has_value()) << n;
    EXPECT_EQ(got->image, image) << n;
    uint32_t want_chunks = n <= kItemChunkBytes
                               ? 1
                               : static_cast<uint32_t>((n + kItemChunkBytes - 1) / kItemChunkBytes);
    EXPECT_EQ(got->chunk_count, want_chunks) << n;
    EXPECT_EQ(KeysInTable(), want_chunks) << "stale chunks left behind at " << n;
  }
}

TEST_F(ItemsTest, ShrinkingClearsStaleChunksAndDeleteClearsAll) {
  Put(Image(350'000));
  EXPECT_EQ(KeysInTable(), 4u);
  Put("small");
  EXPECT_EQ(KeysInTable(), 1u);
  EXPECT_EQ(Get()->image, "small");
  Put(Image(250'000));
  auto tx = db_->CreateTransaction();
  auto old = ReadItem(*tx, key_);
  ASSERT_TRUE(old.ok());
  DeleteItem(*tx, key_, OldItem::Of(*old));
  ASSERT_TRUE(tx->Commit().ok());
  EXPECT_EQ(KeysInTable(), 0u);
  EXPECT_FALSE(Get().has_value());
}

TEST_F(ItemsTest, BlindWriteClearsWhateverWasThere) {
  Put(Image(300'000));
  auto tx = db_->CreateTransaction();
  WriteItem(*tx, key_, "x", OldItem::Unknown());
  ASSERT_TRUE(tx->Commit().ok());
  EXPECT_EQ(KeysInTable(), 1u);
  EXPECT_EQ(Get()->image, "x");
}

TEST_F(ItemsTest, UnknownVersionAndMissingChunksFailClosed) {
  {
    auto tx = db_->CreateTransaction();
    tx->Set(key_, std::string("\x09\x00"
                              "abc",
                              5));
    ASSERT_TRUE(tx->Commit().ok());
  }
  {
    auto tx = db_->CreateTransaction();
    auto r = ReadItem(*tx, key_);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().type, ErrorType::kInternalServerError);
    EXPECT_NE(r.error().message.find("unknown format version 9"), std::string::npos);
  }
  {
    // The old value cannot be read: a blind write replaces whatever is there.
    auto tx = db_->CreateTransaction();
    WriteItem(*tx, key_, Image(250'000), OldItem::Unknown());
    ASSERT_TRUE(tx->Commit().ok());
  }
  EXPECT_EQ(KeysInTable(), 3u);
  {
    auto tx = db_->CreateTransaction();
    tx->Clear(key_ + kv::Tuple{int64_t{2}}.Pack());
    ASSERT_TRUE(tx->Commit().ok());
  }
  auto tx = db_->CreateTransaction();
  auto r = ReadItem(*tx, key_);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().type, ErrorType::kInternalServerError);
}

TEST_F(ItemsTest, AssemblerReassemblesARangeAndReportsPending) {
  std::vector<std::pair<std::string, std::string>> want;
  for (int i = 0; i < 5; ++i) {
    std::string key = layout::Items(7).Pack(kv::Tuple{int64_t{2}, kv::Bytes{std::to_string(i)}});
    std::string image = Image(i % 2 ? 230'000 : 100, static_cast<uint32_t>(i));
    auto tx = db_->CreateTransaction();
    WriteItem(*tx, key, image, OldItem{});
    ASSERT_TRUE(tx->Commit().ok());
    want.emplace_back(key, image);
  }
  auto tx = db_->CreateTransaction();
  auto [b, e] = layout::Items(7).Range();
  auto range = tx->GetRange(b, e);
  ASSERT_TRUE(range.ok());
  ItemAssembler assembler;
  std::vector<std::pair<std::string, std::string>> got;
  for (size_t i = 0; i < range->kvs.size(); ++i) {
    auto r = assembler.Add(range->kvs[i]);
    ASSERT_TRUE(r.ok()) << r.error().message;
    if (r->has_value()) got.emplace_back((*r)->key, (*r)->image);
    // Right after the head of item 1 (split in 3), the assembler waits for its chunks.
    if (range->kvs[i].key == want[1].first) {
      EXPECT_TRUE(assembler.pending());
      EXPECT_EQ(assembler.pending_key(), want[1].first);
    }
  }
  EXPECT_FALSE(assembler.pending());
  EXPECT_EQ(got, want);
}

TEST_F(ItemsTest, IsItemPartTellsPartsFromHeadsAndWholeValues) {
  Put(Image(2 * kItemChunkBytes + 1, 5));  // a head and two parts
  auto tx = db_->CreateTransaction();
  auto [b, e] = layout::Table(7).Range();
  auto r = tx->GetRange(b, e);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->kvs.size(), 3u);
  EXPECT_FALSE(IsItemPart(r->kvs[0].value));  // the head, at the item key
  EXPECT_TRUE(IsItemPart(r->kvs[1].value));
  EXPECT_TRUE(IsItemPart(r->kvs[2].value));
  Put(Image(10, 6));  // one whole value
  auto whole = Get();
  ASSERT_TRUE(whole.has_value());
  auto tx2 = db_->CreateTransaction();
  auto r2 = tx2->GetRange(b, e);
  ASSERT_TRUE(r2.ok());
  ASSERT_EQ(r2->kvs.size(), 1u);
  EXPECT_FALSE(IsItemPart(r2->kvs[0].value));
  EXPECT_FALSE(IsItemPart(""));
}

// ItemKey appends the key's elements one by one: byte for byte the tuple it stands for (a
// change of either is a change of the stored key layout, docs/format/catalog.md).
TEST(ItemKeyTest, IsTheItemsSubspacePackOfHashAndKeys) {
  std::mt19937 rng(5);
  auto bytes = [&](size_t n) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(rng() % 4 == 0 ? 0 : rng());  // escaped zeros too
    return s;
  };
  for (int i = 0; i < 200; ++i) {
    const int64_t table = i % 3 == 0 ? i : int64_t{1} << (i % 63);
    const std::string hash = bytes(i % 40);
    const std::string range = bytes((i * 7) % 30);
    // The whole key as one Tuple: (Root::kTables, table, TablePart::kItems, hash, keys...).
    kv::Tuple t{static_cast<int64_t>(layout::Root::kTables), table,
                static_cast<int64_t>(layout::TablePart::kItems),
                static_cast<int64_t>(PartitionHash(hash)), kv::Bytes{hash}};
    EXPECT_EQ(ItemKey(table, hash, nullptr), t.Pack()) << i;
    EXPECT_EQ(layout::Items(table).Pack(
                  kv::Tuple{static_cast<int64_t>(PartitionHash(hash)), kv::Bytes{hash}}),
              t.Pack())
        << i;
    t.AddBytes(range);
    EXPECT_EQ(ItemKey(table, hash, &range), t.Pack()) << i;
  }
}

}  // namespace
}  // namespace fdyno::store
