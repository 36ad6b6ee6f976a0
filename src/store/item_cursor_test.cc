#include "store/item_cursor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "kv/testing/memory_engine.h"
#include "store/items.h"
#include "store/layout.h"

namespace fdyno::store {
namespace {

using Items = std::vector<std::pair<std::string, std::string>>;

// Items 0..n-1 of table 7; every odd one split in three parts.
class ItemCursorTest : public ::testing::Test {
 protected:
  ItemCursorTest() {
    for (int i = 0; i < 6; ++i) {
      std::string key = layout::Items(7).Pack(kv::Tuple{int64_t{2}, kv::Bytes{std::to_string(i)}});
      std::mt19937 rng(static_cast<uint32_t>(i));
      std::string image(i % 2 ? 230'000 : 100, '\0');
      for (char& c : image) c = static_cast<char>(rng());
      auto tx = db_->CreateTransaction();
      WriteItem(*tx, key, image, OldItem{});
      EXPECT_TRUE(tx->Commit().ok());
      items_.emplace_back(key, image);
    }
  }

  // Every item through a cursor whose reads return at most `limit` key-values, stopping before
  // the items `stop` refuses; counts the key-values read.
  Items ReadAll(int limit, const std::function<bool(size_t seen)>& stop = {}) {
    auto [b, e] = layout::Items(7).Range();
    ItemCursor cursor(b, e);
    Items got;
    auto tx = db_->CreateTransaction();
    kv::RangeOptions ro;
    ro.limit = limit;
    int steps = 0;
    while (!cursor.done() && ++steps < 100) {
      Status st = cursor.Step(
          [&](const std::string& begin, const std::string& end) -> Result<kv::RangeResult> {
            FDYNO_ASSIGN_OR_RETURN(kv::RangeResult rr, tx->GetRange(begin, end, ro));
            read_ += rr.kvs.size();
            return rr;
          },
          [&](const std::string& key, std::string_view image) -> Result<bool> {
            if (stop && stop(got.size())) return false;
            got.emplace_back(key, std::string(image));
            return true;
          });
      EXPECT_TRUE(st.ok()) << st.error().message;
    }
    return got;
  }

  std::unique_ptr<kv::Database> db_ = kv::OpenMemoryEngine();
  Items items_;
  size_t read_ = 0;
};

TEST_F(ItemCursorTest, EveryItemIsVisitedOnceInKeyOrderWhateverTheReadLimit) {
  for (int limit : {1, 2, 3, 4, 7, 1000}) {
    read_ = 0;
    EXPECT_EQ(ReadAll(limit), items_) << "limit " << limit;
    // 3 whole items, 3 split in 3 key-values: each key-value read once.
    EXPECT_EQ(read_, 12u) << "limit " << limit;
  }
}

TEST_F(ItemCursorTest, AnItemRefusedByTheVisitorIsWhereTheCursorResumes) {
  // Refuses every other visit: each item is refused once, then taken when the cursor resumes.
  bool refuse = false;
  EXPECT_EQ(ReadAll(4, [&](size_t) { return refuse = !refuse; }), items_);
}

TEST_F(ItemCursorTest, ASplitItemMissingItsLastPartIsUnrecoverable) {
  auto tx = db_->CreateTransaction();
  tx->Clear(items_[5].first + kv::Tuple{int64_t{2}}.Pack());
  ASSERT_TRUE(tx->Commit().ok());
  auto [b, e] = layout::Items(7).Range();
  ItemCursor cursor(b, e);
  tx = db_->CreateTransaction();
  Status st;
  while (st.ok() && !cursor.done()) {
    st = cursor.Step(
        [&](const std::string& begin, const std::string& end) { return tx->GetRange(begin, end); },
        [](const std::string&, std::string_view) -> Result<bool> { return true; });
  }
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().cause, ErrorCause::kUnrecoverable);
}

// Reads every item the way Query and Scan do, in batches of at most `limit` key-values in one
// direction, split items through SplitItems; counts the key-values read.
Items ReadThroughSplitItems(kv::Database& db, int limit, bool forward, size_t& read) {
  auto [begin, end] = layout::Items(7).Range();
  auto tx = db.CreateTransaction();
  SplitItems split(forward);
  const SplitItems::Read rest = [&](const std::string& b, const std::string& e) {
    Result<kv::RangeResult> rr = tx->GetRange(b, e);
    if (rr.ok()) read += rr->kvs.size();
    return rr;
  };
  Items got;
  for (int batches = 0; begin < end && batches < 100; ++batches) {
    kv::RangeOptions ro;
    ro.limit = limit;
    ro.reverse = !forward;
    Result<kv::RangeResult> rr = tx->GetRange(begin, end, ro);
    EXPECT_TRUE(rr.ok());
    if (!rr.ok()) break;
    read += rr->kvs.size();
    for (size_t i = 0; i < rr->kvs.size(); ++i) {
      const kv::KeyValue& kv = rr->kvs[i];
      if (IsItemPart(kv.value)) continue;
      Result<std::optional<std::string_view>> whole = WholeImage(kv.value);
      EXPECT_TRUE(whole.ok());
      if (whole.ok() && *whole) {
        got.emplace_back(kv.key, std::string(**whole));
        continue;
      }
      Result<std::string> image = split.Assemble(rr->kvs, i, rest);
      EXPECT_TRUE(image.ok()) << image.error().message;
      if (image.ok()) got.emplace_back(kv.key, *image);
    }
    split.EndBatch(rr->kvs);
    if (!rr->more || rr->kvs.empty()) break;
    // Past the last key read, and past the last item (whose parts a rest read may have read).
    const std::string& last = rr->kvs.back().key;
    if (forward) {
      begin = last + std::string(1, '\0');
      if (!got.empty() && ItemRangeEnd(got.back().first) > begin) {
        begin = ItemRangeEnd(got.back().first);
      }
    } else {
      end = last;
    }
  }
  return got;
}

TEST_F(ItemCursorTest, SplitItemsAssemblesEachItemOnceInEitherDirectionWhateverTheBatch) {
  for (bool forward : {true, false}) {
    Items expected = items_;
    if (!forward) std::reverse(expected.begin(), expected.end());
    for (int limit : {1, 2, 3, 4, 5, 7, 1000}) {
      size_t read = 0;
      EXPECT_EQ(ReadThroughSplitItems(*db_, limit, forward, read), expected)
          << (forward ? "forward" : "reverse") << ", batches of " << limit;
      // 3 whole items, 3 split in 3 key-values: each key-value read once.
      EXPECT_EQ(read, 12u) << (forward ? "forward" : "reverse") << ", batches of " << limit;
    }
  }
}

}  // namespace
}  // namespace fdyno::store
