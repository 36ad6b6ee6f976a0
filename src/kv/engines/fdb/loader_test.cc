// Loading libfdb_c and opening a cluster, as far as a machine without a cluster allows.
#include "kv/engines/fdb/loader.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "kv/engines/fdb/client.h"
#include "kv/engines/fdb/fdb.h"
#include "kv/engines/fdb/prefix.h"

namespace fdyno::kv::fdb {
namespace {

constexpr char kMissing[] = "/nonexistent/fdyno-test/libfdb_c.so";

std::string Library() {
  const char* env = std::getenv("FDYNO_FDB_LIBRARY");
  return env && *env ? env : kDefaultLibrary;
}

TEST(FdbLoaderTest, MissingLibraryIsAClearError) {
  Result<std::unique_ptr<Api>> api = LoadLibrary(kMissing);
  ASSERT_FALSE(api.ok());
  EXPECT_EQ(api.error().type, ErrorType::kInternalServerError);
  EXPECT_NE(api.error().message.find(kMissing), std::string::npos) << api.error().message;
  EXPECT_NE(api.error().message.find("foundationdb-clients"), std::string::npos);
}

TEST(FdbLoaderTest, OpenWithoutTheLibraryFailsWithoutStartingAnything) {
  for (int attempt = 0; attempt < 2; ++attempt) {  // a failed load leaves nothing behind
    Result<std::unique_ptr<Database>> db = OpenFdb({.library = kMissing});
    ASSERT_FALSE(db.ok());
    EXPECT_NE(db.error().message.find(kMissing), std::string::npos) << db.error().message;
  }
}

TEST(FdbLoaderTest, InvalidPrefixIsRefusedBeforeLoading) {
  Result<std::unique_ptr<Database>> db = OpenFdb({.prefix = "\xff/", .library = kMissing});
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.error().type, ErrorType::kValidation);
  db = OpenFdb({.prefix = std::string(kMaxPrefixBytes + 1, 'p'), .library = kMissing});
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.error().type, ErrorType::kValidation);
}

TEST(FdbLoaderTest, ApiVersionIsTheNewestBothSpeak) {
  EXPECT_EQ(ChooseApiVersion(630), 0);
  EXPECT_EQ(ChooseApiVersion(700), 0);
  EXPECT_EQ(ChooseApiVersion(710), 710);
  EXPECT_EQ(ChooseApiVersion(720), 720);
  EXPECT_EQ(ChooseApiVersion(730), 730);
  EXPECT_EQ(ChooseApiVersion(740), 730);
}

TEST(FdbLoaderTest, UnreachableClusterIsAClearErrorWithinTheTimeout) {
  if (!LoadLibrary(Library()).ok())
    GTEST_SKIP() << "libfdb_c is not loadable (" << Library() << ")";
  std::string tmpl = (std::filesystem::temp_directory_path() / "fdyno_fdb_XXXXXX").string();
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  const std::string cluster_file = tmpl + "/fdb.cluster";
  std::ofstream(cluster_file) << "test:test@127.0.0.1:1\n";  // nothing listens on port 1
  auto start = std::chrono::steady_clock::now();
  Result<std::unique_ptr<Database>> db =
      OpenFdb({.cluster_file = cluster_file,
               .library = Library(),
               .connect_timeout = std::chrono::milliseconds(1500)});
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.error().kv_code, kTransactionTimedOut);
  EXPECT_NE(db.error().message.find(cluster_file), std::string::npos) << db.error().message;
  EXPECT_LT(took, std::chrono::seconds(10));
  std::filesystem::remove_all(tmpl);
}

}  // namespace
}  // namespace fdyno::kv::fdb
