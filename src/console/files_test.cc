#include "console/files.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace fdyno::console {
namespace {

std::string ReadSource(std::string_view name) {
  std::ifstream in(std::string(FDYNO_CONSOLE_SOURCE_DIR) + "/" + std::string(name),
                   std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

TEST(ConsoleFilesTest, EveryFileIsEmbeddedByteForByte) {
  ASSERT_FALSE(EmbeddedFiles().empty());
  for (const EmbeddedFile& f : EmbeddedFiles()) {
    std::string source = ReadSource(f.name);
    ASSERT_FALSE(source.empty()) << f.name;
    EXPECT_EQ(f.body, source) << f.name;
  }
}

TEST(ConsoleFilesTest, TheEmptyNameIsThePageAndUnknownNamesAreNone) {
  ASSERT_NE(FindFile(""), nullptr);
  EXPECT_EQ(FindFile("")->name, "index.html");
  EXPECT_NE(FindFile("console.js"), nullptr);
  EXPECT_EQ(FindFile("../index.html"), nullptr);
  EXPECT_EQ(FindFile("nothing.js"), nullptr);
}

TEST(ConsoleFilesTest, ContentTypesFollowTheExtension) {
  EXPECT_EQ(ContentTypeOf("index.html"), "text/html; charset=utf-8");
  EXPECT_EQ(ContentTypeOf("console.js"), "text/javascript; charset=utf-8");
  EXPECT_EQ(ContentTypeOf("console.css"), "text/css; charset=utf-8");
  EXPECT_EQ(ContentTypeOf("README"), "text/plain; charset=utf-8");
}

}  // namespace
}  // namespace fdyno::console
