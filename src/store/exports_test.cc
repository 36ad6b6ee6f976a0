// Export and import records (round trip, fail closed) and the S3 paths under the export root
// (nothing escapes it).
#include "store/exports.h"

#include <gtest/gtest.h>
#include <unistd.h>

namespace fdyno::store {
namespace {

namespace fs = std::filesystem;

TEST(ExportRecords, RoundTripAndFailClosed) {
  ExportJob e;
  e.id = "01700000000123-0a1b2c3d";
  e.export_arn = "arn:aws:dynamodb:us-east-1:000000000001:table/t/export/" + e.id;
  e.table_name = "t";
  e.table_id = 7;
  e.status = JobStatus::kFailed;
  e.format = ExportFormat::kIon;
  e.type = ExportType::kIncremental;
  e.view = ExportView::kNewImage;
  e.s3 = {"bucket", "123456789012", "a/b"};
  e.failure_code = "X";
  e.items = 3;
  Result<ExportJob> back = DecodeExportJob(EncodeExportJob(e));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, e);

  ImportJob i;
  i.id = e.id;
  i.format = ImportFormat::kCsv;
  i.compression = Compression::kZstd;
  i.csv_headers = {"pk", "v"};
  i.has_csv_options = true;
  i.creation_parameters = "{\"TableName\":\"t\"}";
  i.next_file = "data/x.csv";
  i.next_record = 12;
  i.errors = 2;
  Result<ImportJob> iback = DecodeImportJob(EncodeImportJob(i));
  ASSERT_TRUE(iback.ok()) << iback.error().message;
  EXPECT_EQ(*iback, i);

  std::string bytes = EncodeExportJob(e);
  bytes[0] = 2;  // an unknown version
  EXPECT_FALSE(DecodeExportJob(bytes).ok());
  std::string unknown_status = EncodeExportJob(e);
  unknown_status.replace(unknown_status.find("FAILED"), 6, "MAYBE!");
  EXPECT_FALSE(DecodeExportJob(unknown_status).ok());
  EXPECT_FALSE(DecodeImportJob("\x01{}").ok());  // members missing
  EXPECT_FALSE(DecodeImportJob("").ok());
}

class S3PathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("fdyno-s3path-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "bucket");
    fs::create_directories(root_.string() + "-outside");
  }
  void TearDown() override {
    fs::remove_all(root_);
    fs::remove_all(root_.string() + "-outside");
  }
  fs::path root_;
};

TEST_F(S3PathTest, MapsBucketAndKeyUnderTheRoot) {
  Result<fs::path> p = S3Path(root_, "bucket", "a//b/c.json");
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(*p, root_ / "bucket" / "a" / "b" / "c.json");
  EXPECT_EQ(*S3Path(root_, "bucket", ""), root_ / "bucket");
  EXPECT_EQ(ExportKeyPrefix("", "01"), "AWSDynamoDB/01/");
  EXPECT_EQ(ExportKeyPrefix("p/q", "01"), "p/q/AWSDynamoDB/01/");
  EXPECT_EQ(ExportKeyPrefix("p/", "01"), "p/AWSDynamoDB/01/");
}

TEST_F(S3PathTest, NothingEscapesTheRoot) {
  for (const char* key : {"..", "../x", "a/../../x", "a/./b", "/etc/passwd", "a/..", "."}) {
    EXPECT_FALSE(S3Path(root_, "bucket", key).ok()) << key;
  }
  for (const char* bucket : {"", ".", "..", "a/b", "a\\b"}) {
    EXPECT_FALSE(S3Path(root_, bucket, "x").ok()) << bucket;
  }
  EXPECT_FALSE(S3Path(root_, "bucket", std::string("a\0b", 3)).ok());
  // A symbolic link inside the root that points out of it.
  fs::create_directory_symlink(root_.string() + "-outside", root_ / "bucket" / "link");
  EXPECT_FALSE(S3Path(root_, "bucket", "link/x").ok());
  fs::create_directory_symlink(root_.string() + "-outside", root_ / "escape");
  EXPECT_FALSE(S3Path(root_, "escape", "x").ok());
}

}  // namespace
}  // namespace fdyno::store
