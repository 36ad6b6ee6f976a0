// Runs the data-driven DynamoDB JSON cases in testdata/attribute_values.txt.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "model/json.h"

#ifndef FDYNO_MODEL_TESTDATA
#error "FDYNO_MODEL_TESTDATA must name the testdata directory"
#endif

namespace fdyno::model {
namespace {

TEST(AttributeValueCases, File) {
  const std::string path = std::string(FDYNO_MODEL_TESTDATA) + "/attribute_values.txt";
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "cannot open " << path;
  std::string line;
  int line_no = 0, cases = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    const size_t arrow = line.find(" -> ");
    ASSERT_NE(arrow, std::string::npos) << path << ":" << line_no;
    const std::string input = line.substr(0, arrow);
    const std::string expected = line.substr(arrow + 4);
    auto r = AttributeValueFromJson(input);
    std::string actual;
    if (r.ok()) {
      actual = AttributeValueToJson(*r);
      // Output decodes to itself.
      auto again = AttributeValueFromJson(actual);
      ASSERT_TRUE(again.ok()) << path << ":" << line_no;
      EXPECT_EQ(AttributeValueToJson(*again), actual) << path << ":" << line_no;
    } else {
      actual = std::string(WireType(r.error().type)) + ": " + r.error().message;
    }
    EXPECT_EQ(actual, expected) << path << ":" << line_no << ": " << input;
    ++cases;
  }
  EXPECT_GT(cases, 60);
}

}  // namespace
}  // namespace fdyno::model
