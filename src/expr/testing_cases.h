// Test support for data-driven case files (src/expr/testdata, src/partiql/testdata): cases of
// "key: value" lines, each case opened by a "=== name" line; blank lines and lines starting
// with '#' are skipped. Test-only.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace fdyno::expr::testing {

struct Case {
  std::string file;  // the file's name, for messages
  int line = 0;      // of the "===" line
  std::string name;
  std::map<std::string, std::string> fields;  // key -> value (one space after ':' dropped)
};

// The cases of one file. Malformed lines and duplicate keys are described in `problems`
// ("<file>:<line>: ...") for the caller to report.
std::vector<Case> ReadCases(const std::filesystem::path& path, std::vector<std::string>* problems);

// The *.txt files of `dir`, sorted.
std::vector<std::filesystem::path> CaseFiles(const std::filesystem::path& dir);

}  // namespace fdyno::expr::testing
