#include "s3/service.h"

#include <gtest/gtest.h>

namespace fdyno::s3 {
namespace {

namespace fs = std::filesystem;

class ServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("fdyno-s3-service-" +
             std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(root_);
    fs::create_directories(root_);
    store_ = std::make_unique<ObjectStore>(root_);
    service_ = std::make_unique<Service>(*store_);
    ASSERT_EQ(Call("PUT", "bkt", "").status, 200u);
  }
  void TearDown() override { fs::remove_all(root_); }

  S3Response Call(std::string method, std::string bucket, std::string key,
                  std::vector<std::pair<std::string, std::string>> query = {},
                  std::string_view body = {},
                  std::vector<std::pair<std::string, std::string>> headers = {},
                  std::string region = "us-east-1") {
    S3Request r{std::move(method), std::move(bucket),  std::move(key),
                std::move(query),  std::move(headers), body,
                std::move(region), "localhost:8000",   "REQ"};
    return service_->Handle(r);
  }

  fs::path root_;
  std::unique_ptr<ObjectStore> store_;
  std::unique_ptr<Service> service_;
};

TEST_F(ServiceTest, PutGetHeadAndRanges) {
  S3Response put = Call("PUT", "bkt", "k", {{"x-id", "PutObject"}}, "0123456789",
                        {{"content-type", "text/plain"}, {"x-amz-meta-owner", "me"}});
  EXPECT_EQ(put.status, 200u);
  EXPECT_NE(put.headers.find("ETag: \"781e5e245d69b566979b86e28d23f2c7\"\r\n"), std::string::npos);
  S3Response get = Call("GET", "bkt", "k");
  EXPECT_EQ(get.body, "0123456789");
  EXPECT_EQ(get.content_type, "text/plain");
  EXPECT_NE(get.headers.find("x-amz-meta-owner: me\r\n"), std::string::npos);
  S3Response range = Call("GET", "bkt", "k", {}, {}, {{"range", "bytes=2-4"}});
  EXPECT_EQ(range.status, 206u);
  EXPECT_EQ(range.body, "234");
  EXPECT_NE(range.headers.find("Content-Range: bytes 2-4/10\r\n"), std::string::npos);
  EXPECT_EQ(Call("GET", "bkt", "k", {}, {}, {{"range", "bytes=-3"}}).body, "789");
  EXPECT_EQ(Call("GET", "bkt", "k", {}, {}, {{"range", "bytes=8-"}}).body, "89");
  S3Response beyond = Call("GET", "bkt", "k", {}, {}, {{"range", "bytes=10-"}});
  EXPECT_EQ(beyond.status, 416u);
  EXPECT_NE(beyond.body.find("<Code>InvalidRange</Code>"), std::string::npos);
  S3Response head = Call("HEAD", "bkt", "k");
  EXPECT_EQ(head.status, 200u);
  EXPECT_TRUE(head.body.empty());
  EXPECT_EQ(head.head_length, 10u);
  S3Response missing = Call("HEAD", "bkt", "nothing");
  EXPECT_EQ(missing.status, 404u);
  EXPECT_TRUE(missing.body.empty());
}

TEST_F(ServiceTest, ErrorsAreS3sXml) {
  S3Response r = Call("GET", "bkt", "nothing");
  EXPECT_EQ(r.status, 404u);
  EXPECT_EQ(r.error_code, "NoSuchKey");
  EXPECT_EQ(r.body,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>NoSuchKey</Code><Message>The "
            "specified key does not exist.</Message><Key>nothing</Key><RequestId>REQ</RequestId>"
            "<HostId>REQ</HostId></Error>");
  EXPECT_EQ(Call("GET", "nobucket", "").error_code, "NoSuchBucket");
  EXPECT_EQ(Call("PUT", "bkt", "", {}, {}, {}, "eu-west-1").error_code, "BucketAlreadyOwnedByYou");
  EXPECT_EQ(Call("PUT", "bkt", "").status, 200u);  // us-east-1's legacy answer
}

TEST_F(ServiceTest, WhatIsNotBuiltSaysSoInsteadOfActingAsSomethingElse) {
  EXPECT_EQ(Call("PUT", "bkt", "k", {{"acl", ""}}).status, 501u);
  EXPECT_EQ(Call("GET", "bkt", "", {{"versioning", ""}}).status, 501u);
  EXPECT_EQ(Call("PUT", "bkt", "k", {}, {}, {{"x-amz-copy-source", "/bkt/j"}}).status, 501u);
  EXPECT_EQ(Call("GET", "bkt", "k", {{"uploadId", "ab"}}).status, 501u);
  EXPECT_EQ(Call("GET", "bkt", "k").status, 404u);  // the PUTs above wrote nothing
  EXPECT_EQ(Call("POST", "", "").status, 405u);
}

TEST_F(ServiceTest, ContentMd5IsChecked) {
  EXPECT_EQ(
      Call("PUT", "bkt", "k", {}, "hello", {{"content-md5", "XUFAKrxLKna5cZ2REBfFkg=="}}).status,
      200u);
  EXPECT_EQ(Call("PUT", "bkt", "k", {}, "hellO", {{"content-md5", "XUFAKrxLKna5cZ2REBfFkg=="}})
                .error_code,
            "BadDigest");
  EXPECT_EQ(Call("PUT", "bkt", "k", {}, "x", {{"content-md5", "nope"}}).error_code,
            "InvalidDigest");
  EXPECT_EQ(Call("GET", "bkt", "k").body, "hello");
}

TEST_F(ServiceTest, ListObjectsV2EncodesKeysWhenAskedAndPagesWithItsToken) {
  for (const char* key : {"a b/1", "a b/2", "c+d"})
    ASSERT_EQ(Call("PUT", "bkt", key, {}, "x").status, 200u);
  S3Response page =
      Call("GET", "bkt", "", {{"list-type", "2"}, {"max-keys", "2"}, {"encoding-type", "url"}});
  EXPECT_NE(page.body.find("<Key>a+b/1</Key>"), std::string::npos) << page.body;
  EXPECT_NE(page.body.find("<IsTruncated>true</IsTruncated>"), std::string::npos);
  const size_t at = page.body.find("<NextContinuationToken>");
  ASSERT_NE(at, std::string::npos);
  const size_t end = page.body.find("</NextContinuationToken>");
  const std::string token = page.body.substr(at + 23, end - at - 23);
  S3Response next =
      Call("GET", "bkt", "",
           {{"list-type", "2"}, {"continuation-token", token}, {"encoding-type", "url"}});
  EXPECT_NE(next.body.find("<Key>c%2Bd</Key>"), std::string::npos) << next.body;
  EXPECT_NE(next.body.find("<KeyCount>1</KeyCount>"), std::string::npos);
  EXPECT_EQ(Call("GET", "bkt", "", {{"list-type", "2"}, {"continuation-token", "zz"}}).error_code,
            "InvalidArgument");
  EXPECT_EQ(Call("GET", "bkt", "", {{"list-type", "2"}, {"max-keys", "x"}}).error_code,
            "InvalidArgument");
}

TEST_F(ServiceTest, DeleteObjectsAnswersEachKey) {
  ASSERT_EQ(Call("PUT", "bkt", "a", {}, "x").status, 200u);
  S3Response r =
      Call("POST", "bkt", "", {{"delete", ""}},
           "<Delete><Object><Key>a</Key></Object><Object><Key>b//c</Key></Object></Delete>");
  EXPECT_EQ(r.status, 200u);
  EXPECT_NE(r.body.find("<Deleted><Key>a</Key></Deleted>"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("<Deleted><Key>b//c</Key></Deleted>"), std::string::npos) << r.body;
  EXPECT_EQ(Call("GET", "bkt", "a").status, 404u);
  EXPECT_EQ(Call("POST", "bkt", "", {{"delete", ""}}, "<Delete>").error_code, "MalformedXML");
}

TEST_F(ServiceTest, MultipartThroughTheApi) {
  S3Response start = Call("POST", "bkt", "m", {{"uploads", ""}});
  const size_t at = start.body.find("<UploadId>");
  ASSERT_NE(at, std::string::npos) << start.body;
  const std::string id = start.body.substr(at + 10, start.body.find("</UploadId>") - at - 10);
  S3Response part = Call("PUT", "bkt", "m", {{"partNumber", "1"}, {"uploadId", id}}, "only");
  ASSERT_EQ(part.status, 200u);
  const std::string etag = part.headers.substr(6, part.headers.find("\r\n") - 6);
  S3Response done = Call("POST", "bkt", "m", {{"uploadId", id}},
                         "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>" + etag +
                             "</ETag></Part></CompleteMultipartUpload>");
  EXPECT_EQ(done.status, 200u) << done.body;
  EXPECT_NE(done.body.find("-1&quot;</ETag>"), std::string::npos) << done.body;
  EXPECT_EQ(Call("GET", "bkt", "m").body, "only");
  EXPECT_EQ(Call("PUT", "bkt", "m", {{"partNumber", "0"}, {"uploadId", id}}, "x").error_code,
            "InvalidArgument");
  EXPECT_EQ(Call("DELETE", "bkt", "m", {{"uploadId", id}}).error_code, "NoSuchUpload");
}

}  // namespace
}  // namespace fdyno::s3
