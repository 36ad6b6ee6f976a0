#include "s3/object_store.h"

#include <gtest/gtest.h>

#include <fstream>

namespace fdyno::s3 {
namespace {

namespace fs = std::filesystem;

class ObjectStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("fdyno-s3-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
    store_ = std::make_unique<ObjectStore>(root_);
    ASSERT_TRUE(store_->CreateBucket("bkt").ok());
  }
  void TearDown() override { fs::remove_all(root_); }

  static ListRequest Req(std::string prefix, std::string delimiter, std::string after,
                         size_t max_keys) {
    return {std::move(prefix), std::move(delimiter), std::move(after), max_keys};
  }

  std::vector<std::string> Keys(const ListRequest& request, ListPage* page_out = nullptr) {
    S3Result<ListPage> page = store_->List("bkt", request);
    EXPECT_TRUE(page.ok());
    std::vector<std::string> out;
    for (const ObjectInfo& o : page->objects) out.push_back(o.key);
    for (const std::string& p : page->common_prefixes) out.push_back("prefix:" + p);
    if (page_out) *page_out = *page;
    return out;
  }

  fs::path root_;
  std::unique_ptr<ObjectStore> store_;
};

TEST_F(ObjectStoreTest, AnObjectIsAFileUnderItsBucketWithItsMd5AsETag) {
  S3Result<ObjectInfo> put = store_->Put("bkt", "a/b.json", "hello", {"text/plain", {{"k", "v"}}});
  ASSERT_TRUE(put.ok());
  EXPECT_EQ(put->etag, "5d41402abc4b2a76b9719d911017c592");  // md5("hello")
  std::ifstream in(root_ / "bkt" / "a" / "b.json");
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "hello");
  S3Result<ObjectInfo> head = store_->Head("bkt", "a/b.json");
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->size, 5u);
  EXPECT_EQ(head->content_type, "text/plain");
  EXPECT_EQ(head->metadata, (std::vector<std::pair<std::string, std::string>>{{"k", "v"}}));
  EXPECT_EQ(*store_->Read("bkt", "a/b.json", 1, 3), "ell");
}

TEST_F(ObjectStoreTest, AFileWrittenOutsideTheApiIsAnObjectWithItsOwnETag) {
  fs::create_directories(root_ / "bkt" / "exports");
  std::ofstream(root_ / "bkt" / "exports" / "x") << "hello";
  S3Result<ObjectInfo> head = store_->Head("bkt", "exports/x");
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->etag, "5d41402abc4b2a76b9719d911017c592");
  EXPECT_EQ(head->content_type, "binary/octet-stream");
  // A sidecar of an earlier version of the file is not believed.
  ASSERT_TRUE(store_->Put("bkt", "exports/x", "other", {"text/plain", {}}).ok());
  std::ofstream(root_ / "bkt" / "exports" / "x") << "hello again";
  head = store_->Head("bkt", "exports/x");
  EXPECT_EQ(head->content_type, "binary/octet-stream");
  EXPECT_EQ(head->size, 11u);
}

TEST_F(ObjectStoreTest, ASidecarOfAnotherVersionIsNotBelieved) {
  ASSERT_TRUE(store_->Put("bkt", "k", "hello", {"text/plain", {}}).ok());
  const fs::path meta = root_ / ".fdyno-s3" / "meta" / "bkt" / "k.fdyno-meta";
  std::string text;
  std::getline(std::ifstream(meta), text);
  const size_t at = text.find("\"version\":1");
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, 11, "\"version\":2");
  std::ofstream(meta) << text;
  S3Result<ObjectInfo> head = store_->Head("bkt", "k");
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(head->content_type, "binary/octet-stream");
  EXPECT_EQ(head->etag, "5d41402abc4b2a76b9719d911017c592");  // from the bytes
}

TEST_F(ObjectStoreTest, KeysThatCannotBeFilesAreRefusedAndUnknownOnes404) {
  for (std::string_view key : {"", "a/", "a//b", "./a", "a/../b", "/a"}) {
    S3Result<ObjectInfo> put = store_->Put("bkt", key, "x", {});
    ASSERT_FALSE(put.ok()) << key;
    EXPECT_EQ(put.error().code, "InvalidArgument") << key;
  }
  ASSERT_TRUE(store_->Put("bkt", "a", "x", {}).ok());
  EXPECT_EQ(store_->Put("bkt", "a/b", "x", {}).error().code, "InvalidArgument");
  EXPECT_EQ(store_->Head("bkt", "missing").error().code, "NoSuchKey");
  EXPECT_EQ(store_->Head("bkt", "a/../a").error().code, "NoSuchKey");
  EXPECT_EQ(store_->Head("nobucket", "a").error().code, "NoSuchBucket");
  EXPECT_EQ(store_->Head(".fdyno-s3", "a").error().code, "NoSuchBucket");
}

TEST_F(ObjectStoreTest, ListingFollowsPrefixDelimiterAndPages) {
  for (std::string_view key : {"a/1", "a/2", "b/c/1", "b/d", "c"}) {
    ASSERT_TRUE(store_->Put("bkt", key, "x", {}).ok());
  }
  EXPECT_EQ(Keys(Req("", "", "", 1000)),
            (std::vector<std::string>{"a/1", "a/2", "b/c/1", "b/d", "c"}));
  EXPECT_EQ(Keys(Req("b/", "", "", 1000)), (std::vector<std::string>{"b/c/1", "b/d"}));
  EXPECT_EQ(Keys(Req("", "/", "", 1000)),
            (std::vector<std::string>{"c", "prefix:a/", "prefix:b/"}));
  EXPECT_EQ(Keys(Req("b/", "/", "", 1000)), (std::vector<std::string>{"b/d", "prefix:b/c/"}));
  ListPage page;
  EXPECT_EQ(Keys(Req("", "", "", 2), &page), (std::vector<std::string>{"a/1", "a/2"}));
  EXPECT_TRUE(page.truncated);
  EXPECT_EQ(Keys(Req("", "", page.last, 2), &page), (std::vector<std::string>{"b/c/1", "b/d"}));
  EXPECT_EQ(Keys(Req("", "", page.last, 2), &page), (std::vector<std::string>{"c"}));
  EXPECT_FALSE(page.truncated);
  // After a common prefix, none of its keys come again.
  EXPECT_EQ(Keys(Req("", "/", "a/", 1), &page), (std::vector<std::string>{"prefix:b/"}));
}

TEST_F(ObjectStoreTest, DeletingAnObjectRemovesTheFoldersItLeavesEmpty) {
  ASSERT_TRUE(store_->Put("bkt", "x/y/z", "1", {}).ok());
  ASSERT_TRUE(store_->Delete("bkt", "x/y/z").ok());
  EXPECT_FALSE(fs::exists(root_ / "bkt" / "x"));
  EXPECT_TRUE(fs::exists(root_ / "bkt"));
  EXPECT_TRUE(store_->Delete("bkt", "never").ok());
  EXPECT_EQ(store_->DeleteBucket("missing").error().code, "NoSuchBucket");
  ASSERT_TRUE(store_->Put("bkt", "k", "1", {}).ok());
  EXPECT_EQ(store_->DeleteBucket("bkt").error().code, "BucketNotEmpty");
  ASSERT_TRUE(store_->Delete("bkt", "k").ok());
  EXPECT_TRUE(store_->DeleteBucket("bkt").ok());
}

TEST_F(ObjectStoreTest, MultipartUploadsJoinTheirPartsWithS3sETag) {
  S3Result<std::string> id = store_->CreateUpload("bkt", "big", {"application/json", {}});
  ASSERT_TRUE(id.ok());
  const std::string part1(kMinPartBytes, 'a');
  S3Result<std::string> e1 = store_->UploadPart("bkt", "big", *id, 1, part1);
  S3Result<std::string> e2 = store_->UploadPart("bkt", "big", *id, 2, "tail");
  ASSERT_TRUE(e1.ok() && e2.ok());
  EXPECT_EQ(store_->UploadPart("bkt", "other", *id, 3, "x").error().code, "NoSuchUpload");
  EXPECT_EQ(store_->CompleteUpload("bkt", "big", *id, {{2, *e2}, {1, *e1}}).error().code,
            "InvalidPartOrder");
  EXPECT_EQ(store_->CompleteUpload("bkt", "big", *id, {{1, *e1}, {2, "\"bad\""}}).error().code,
            "InvalidPart");
  S3Result<ObjectInfo> done =
      store_->CompleteUpload("bkt", "big", *id, {{1, "\"" + *e1 + "\""}, {2, *e2}});
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE(done->etag.ends_with("-2"));
  EXPECT_EQ(done->size, kMinPartBytes + 4);
  EXPECT_EQ(store_->Head("bkt", "big")->etag, done->etag);
  EXPECT_EQ(store_->Head("bkt", "big")->content_type, "application/json");
  EXPECT_EQ(*store_->Read("bkt", "big", kMinPartBytes - 1, 5), "atail");
  EXPECT_EQ(store_->AbortUpload("bkt", "big", *id).error().code, "NoSuchUpload");  // completed
}

TEST_F(ObjectStoreTest, SmallPartsButTheLastAreTooSmall) {
  S3Result<std::string> id = store_->CreateUpload("bkt", "k", {});
  S3Result<std::string> e1 = store_->UploadPart("bkt", "k", *id, 1, "small");
  S3Result<std::string> e2 = store_->UploadPart("bkt", "k", *id, 2, "last");
  EXPECT_EQ(store_->CompleteUpload("bkt", "k", *id, {{1, *e1}, {2, *e2}}).error().code,
            "EntityTooSmall");
  EXPECT_TRUE(store_->AbortUpload("bkt", "k", *id).ok());
  EXPECT_EQ(store_->Head("bkt", "k").error().code, "NoSuchKey");
}

TEST_F(ObjectStoreTest, BucketNamesFollowS3sRules) {
  for (std::string_view ok : {"abc", "my-bucket.v2", "a1b"})
    EXPECT_TRUE(ObjectStore::ValidBucketName(ok)) << ok;
  for (std::string_view bad :
       {"ab", "Upper", "-abc", "abc-", "a..b", "192.168.1.2", "a_b", ".hidden"}) {
    EXPECT_FALSE(ObjectStore::ValidBucketName(bad)) << bad;
  }
  EXPECT_EQ(store_->CreateBucket("Bad").error().code, "InvalidBucketName");
  EXPECT_FALSE(*store_->CreateBucket("bkt"));          // exists
  ASSERT_TRUE(store_->Put("bkt", "k", "x", {}).ok());  // makes <root>/.fdyno-s3
  EXPECT_EQ((*store_->ListBuckets()).size(), 1u);      // which is no bucket
}

}  // namespace
}  // namespace fdyno::s3
