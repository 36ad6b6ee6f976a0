// Runs the data-driven number cases in testdata/numbers.txt.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "model/number.h"

#ifndef FDYNO_MODEL_TESTDATA
#error "FDYNO_MODEL_TESTDATA must name the testdata directory"
#endif

namespace fdyno::model {
namespace {

std::string Arg(const std::string& token) { return token == "<empty>" ? "" : token; }

std::string Render(const Result<Number>& r) {
  return r.ok() ? r->ToString() : "error: " + r.error().message;
}

TEST(NumberCases, File) {
  const std::string path = std::string(FDYNO_MODEL_TESTDATA) + "/numbers.txt";
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "cannot open " << path;
  std::string line;
  int line_no = 0, cases = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    const size_t arrow = line.find(" -> ");
    ASSERT_NE(arrow, std::string::npos) << path << ":" << line_no << ": no ' -> '";
    const std::string expected = line.substr(arrow + 4);
    std::istringstream lhs(line.substr(0, arrow));
    std::string op;
    std::vector<std::string> args;
    lhs >> op;
    for (std::string a; lhs >> a;) args.push_back(Arg(a));
    if (args.empty() && op == "parse") args.push_back("");
    std::string actual;
    if (op == "parse") {
      ASSERT_EQ(args.size(), 1u) << path << ":" << line_no;
      actual = Render(Number::Parse(args[0]));
      // The canonical text must parse back to the same number and text.
      auto first = Number::Parse(args[0]);
      if (first.ok()) {
        auto again = Number::Parse(first->ToString());
        ASSERT_TRUE(again.ok()) << path << ":" << line_no;
        EXPECT_EQ(again->ToString(), first->ToString()) << path << ":" << line_no;
        EXPECT_EQ(again->Compare(*first), 0) << path << ":" << line_no;
      }
    } else if (op == "add" || op == "sub" || op == "cmp") {
      ASSERT_EQ(args.size(), 2u) << path << ":" << line_no;
      auto a = Number::Parse(args[0]);
      auto b = Number::Parse(args[1]);
      ASSERT_TRUE(a.ok() && b.ok()) << path << ":" << line_no << ": bad operand";
      if (op == "add") {
        actual = Render(Number::Add(*a, *b));
        // Addition commutes.
        EXPECT_EQ(Render(Number::Add(*b, *a)), actual) << path << ":" << line_no;
      } else if (op == "sub") {
        actual = Render(Number::Subtract(*a, *b));
      } else {
        actual = std::to_string(a->Compare(*b));
        EXPECT_EQ(b->Compare(*a), -a->Compare(*b)) << path << ":" << line_no;
      }
    } else {
      FAIL() << path << ":" << line_no << ": unknown op " << op;
    }
    EXPECT_EQ(actual, expected) << path << ":" << line_no << ": " << line;
    ++cases;
  }
  EXPECT_GT(cases, 100);
}

}  // namespace
}  // namespace fdyno::model
