// The export layout's files: item lines in DynamoDB JSON and Ion (written then read back equal,
// on random items; DynamoDB's own Ion sample read), CSV records, and gzip and zstd files.
// Replay: FDYNO_SEED=<seed>.
#include "workers/export_files.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <zlib.h>
#include <zstd.h>

#include <fstream>
#include <random>

#include "base/test_seed.h"
#include "model/base64.h"
#include "model/json.h"
#include "model/random_value.h"

namespace fdyno::workers {
namespace {

using test::Seed;

namespace fs = std::filesystem;
using model::AttributeValue;
using model::Item;

fs::path TempDir() {
  fs::path dir =
      fs::temp_directory_path() / ("fdyno-export-files-" + std::to_string(::getpid()) + "-" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// An item DynamoDB accepts, so one an export can meet: a top-level attribute name is never
// empty ("Empty attribute name"); nested map keys may be.
Item RandomItem(model::RandomValues& r) {
  Item item;
  const int n = r.Int(1, 6);
  for (int i = 0; i < n; ++i) {
    std::string name = r.Bytes(6);
    item[name.empty() ? "k" : name] = r.Value();
  }
  return item;
}

TEST(ExportLines, RandomItemsRoundTripThroughIonAndDynamoJson) {
  const uint64_t seed = Seed();
  SCOPED_TRACE("FDYNO_SEED=" + std::to_string(seed));
  model::RandomValues r(seed);
  for (int i = 0; i < 2000; ++i) {
    const Item item = RandomItem(r);
    Result<Item> json = ParseDynamoJsonLine(DynamoJsonLine(item));
    ASSERT_TRUE(json.ok()) << json.error().message;
    EXPECT_EQ(*json, item) << DynamoJsonLine(item);
    const std::string ion = IonLine(item);
    Result<std::vector<Item>> back = ParseIonLine(ion);
    ASSERT_TRUE(back.ok()) << back.error().message << "\n" << ion;
    ASSERT_EQ(back->size(), 1u) << ion;
    EXPECT_EQ(back->front(), item) << ion;
  }
}

TEST(ExportLines, IonHasDynamoDbsTypedShape) {
  Item item{{"Id", AttributeValue::N(model::Number::Parse("103").value())},
            {"Price", AttributeValue::N(model::Number::Parse("2E+3").value())},
            {"Pages", AttributeValue::N(model::Number::Parse("-600").value())},
            {"Ratio", AttributeValue::N(model::Number::Parse("-0.0250").value())},
            {"Zero", AttributeValue::N(model::Number::Parse("0e5").value())},
            {"Title", AttributeValue::S("Book \"103\"")},
            {"Authors", AttributeValue{model::StringSet{{"A1", "A2"}}}},
            {"Blob", AttributeValue::B("hi")},
            {"InPublication", AttributeValue::Bool(false)},
            {"Gone", AttributeValue::MakeNull()},
            {"odd name", AttributeValue::L({})}};
  EXPECT_EQ(IonLine(item),
            "$ion_1_0 {Item:{Authors:$dynamodb_SS::[\"A1\",\"A2\"],Blob:{{aGk=}},Gone:null,Id:103.,"
            "InPublication:false,Pages:-6d2,Price:2d3,Ratio:-0.025,Title:\"Book \\\"103\\\"\","
            "Zero:0.,'odd name':[]}}");
}

TEST(ExportLines, ReadsDynamoDbsIonSample) {
  // The shape of a line of DynamoDB's ION export (typed values, annotations, a comment).
  Result<std::vector<Item>> items = ParseIonLine(
      "$ion_1_0 {Item:{Authors:$dynamodb_SS::[\"Author1\",\"Author2\"],Dimensions:\"8.5 x 11.0 "
      "x 1.5\",ISBN:\"333-3333333333\",Id:103.,InPublication:false,PageCount:600.,Price:2E+3,"
      "Nums:$dynamodb_NS::[1.5,2d-1],Bin:$dynamodb_BS::[{{AQI=}}],'x y':null.string}} // end");
  ASSERT_TRUE(items.ok()) << items.error().message;
  ASSERT_EQ(items->size(), 1u);
  const Item& item = items->front();
  EXPECT_EQ(model::ItemToJson(item),
            "{\"Authors\":{\"SS\":[\"Author1\",\"Author2\"]},\"Bin\":{\"BS\":[\"AQI=\"]},"
            "\"Dimensions\":{\"S\":\"8.5 x 11.0 x 1.5\"},\"ISBN\":{\"S\":\"333-3333333333\"},"
            "\"Id\":{\"N\":\"103\"},\"InPublication\":{\"BOOL\":false},\"Nums\":{\"NS\":[\"1.5\","
            "\"0.2\"]},\"PageCount\":{\"N\":\"600\"},\"Price\":{\"N\":\"2000\"},\"x y\":{\"NULL\":"
            "true}}");
}

TEST(ExportLines, RejectsWhatIsNoItem) {
  EXPECT_FALSE(ParseDynamoJsonLine("{\"Item\":{\"a\":{\"S\":\"x\"}}").ok());
  EXPECT_FALSE(ParseDynamoJsonLine("{\"NotItem\":{}}").ok());
  EXPECT_FALSE(ParseDynamoJsonLine("{\"Item\":{\"a\":{\"SS\":[]}}}").ok());   // empty set
  EXPECT_FALSE(ParseIonLine("{Item:{a:$dynamodb_SS::[\"x\",\"x\"]}}").ok());  // duplicate member
  EXPECT_FALSE(ParseIonLine("{Item:{a:\"x\"}").ok());
  EXPECT_FALSE(ParseIonLine("{Thing:{a:1}}").ok());
  EXPECT_FALSE(ParseIonLine("{Item:{a:0x10}}").ok());
}

TEST(ExportLines, IncrementalLines) {
  Item keys{{"pk", AttributeValue::S("a")}};
  Item now{{"pk", AttributeValue::S("a")}, {"v", AttributeValue::Bool(true)}};
  EXPECT_EQ(
      IncrementalLine(store::ExportFormat::kDynamoDbJson, 7, keys, &now, &keys),
      "{\"Metadata\":{\"WriteTimestampMicros\":{\"N\":\"7\"}},\"Keys\":{\"pk\":{\"S\":\"a\"}},"
      "\"NewImage\":{\"pk\":{\"S\":\"a\"},\"v\":{\"BOOL\":true}},\"OldImage\":{\"pk\":{\"S\":"
      "\"a\"}}}");
  EXPECT_EQ(IncrementalLine(store::ExportFormat::kIon, 7, keys, nullptr, nullptr),
            "$ion_1_0 {Metadata:{WriteTimestampMicros:7.},Keys:{pk:\"a\"}}");
}

TEST(Csv, ParsesQuotedFieldsAndDelimiters) {
  auto f = ParseCsvRecord("a,\"b,c\",\"d\"\"e\",,f", ',');
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(*f, (std::vector<std::string>{"a", "b,c", "d\"e", "", "f"}));
  auto t = ParseCsvRecord("x\ty", '\t');
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t, (std::vector<std::string>{"x", "y"}));
  EXPECT_FALSE(ParseCsvRecord("\"open", ',').ok());
  EXPECT_FALSE(ParseCsvRecord("\"a\"b,c", ',').ok());
  EXPECT_TRUE(CsvRecordOpen("a,\"b"));
  EXPECT_FALSE(CsvRecordOpen("a,\"b\"\"c\""));
}

std::vector<std::string> ReadAll(const fs::path& path, store::Compression c, Status* error) {
  std::vector<std::string> lines;
  Result<std::unique_ptr<LineReader>> reader = LineReader::Open(path, c);
  if (!reader.ok()) {
    *error = std::move(reader).error();
    return lines;
  }
  for (;;) {
    Result<std::optional<std::string>> line = (*reader)->Next();
    if (!line.ok()) {
      *error = std::move(line).error();
      return lines;
    }
    if (!*line) return lines;
    lines.push_back(**line);
  }
}

std::string FileBytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(CompressedFiles, GzipWriterThenReaderWithChecksums) {
  const fs::path dir = TempDir();
  auto writer = GzipFileWriter::Create(dir / "a.json.gz");
  ASSERT_TRUE(writer.ok());
  std::vector<std::string> lines;
  for (int i = 0; i < 30000; ++i) {
    lines.push_back("line " + std::to_string(i) + std::string(i % 50, 'x'));
    ASSERT_TRUE((*writer)->Append(lines.back() + "\n").ok());
  }
  ASSERT_TRUE((*writer)->Finish().ok());
  Status error = Status::Ok();
  EXPECT_EQ(ReadAll(dir / "a.json.gz", store::Compression::kGzip, &error), lines);
  EXPECT_TRUE(error.ok()) << error.error().message;
  const std::string bytes = FileBytes(dir / "a.json.gz");
  unsigned char md5[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), md5, &len, EVP_md5(), nullptr);
  EXPECT_EQ((*writer)->md5_base64(),
            model::Base64Encode(std::string(reinterpret_cast<char*>(md5), len)));
  EXPECT_EQ((*writer)->md5_hex().size(), 32u);
  // Not gzip, and gzip cut short: errors, never lines made up.
  std::ofstream(dir / "plain") << "hello\nworld";
  ReadAll(dir / "plain", store::Compression::kGzip, &error);
  EXPECT_FALSE(error.ok());
  std::ofstream(dir / "cut", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  error = Status::Ok();
  ReadAll(dir / "cut", store::Compression::kGzip, &error);
  EXPECT_FALSE(error.ok());
  error = Status::Ok();
  EXPECT_EQ(ReadAll(dir / "plain", store::Compression::kNone, &error),
            (std::vector<std::string>{"hello", "world"}));
  fs::remove_all(dir);
}

TEST(CompressedFiles, ZstdAndConcatenatedGzipMembers) {
  const fs::path dir = TempDir();
  const std::string text = "a\r\nb\nc\n";
  std::string z(ZSTD_compressBound(text.size()), '\0');
  z.resize(ZSTD_compress(z.data(), z.size(), text.data(), text.size(), 3));
  std::ofstream(dir / "z", std::ios::binary) << z;
  Status error = Status::Ok();
  EXPECT_EQ(ReadAll(dir / "z", store::Compression::kZstd, &error),
            (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(error.ok());
  std::ofstream(dir / "z-cut", std::ios::binary) << z.substr(0, z.size() - 3);
  ReadAll(dir / "z-cut", store::Compression::kZstd, &error);
  EXPECT_FALSE(error.ok());
  // Two gzip members one after the other read as one stream (as gzip -d does).
  std::string both;
  for (const std::string part : {"x\n", "y\n"}) {
    const fs::path p = dir / "part.gz";
    auto w = GzipFileWriter::Create(p);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Append(part).ok());
    ASSERT_TRUE((*w)->Finish().ok());
    both += FileBytes(p);
  }
  std::ofstream(dir / "both.gz", std::ios::binary) << both;
  error = Status::Ok();
  EXPECT_EQ(ReadAll(dir / "both.gz", store::Compression::kGzip, &error),
            (std::vector<std::string>{"x", "y"}));
  EXPECT_TRUE(error.ok());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace fdyno::workers
