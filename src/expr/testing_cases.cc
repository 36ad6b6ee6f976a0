#include "expr/testing_cases.h"

#include <algorithm>
#include <fstream>

namespace fdyno::expr::testing {

std::vector<Case> ReadCases(const std::filesystem::path& path, std::vector<std::string>* problems) {
  std::vector<Case> out;
  std::ifstream in(path);
  std::string line;
  int n = 0;
  const std::string where = path.filename().string() + ":";
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("=== ", 0) == 0) {
      out.push_back(Case{path.filename().string(), n, line.substr(4), {}});
      continue;
    }
    size_t colon = line.find(':');
    if (out.empty() || colon == std::string::npos) {
      problems->push_back(where + std::to_string(n) + ": malformed line: " + line);
      continue;
    }
    std::string key = line.substr(0, colon);
    std::string value = line.substr(colon + 1);
    if (!value.empty() && value[0] == ' ') value.erase(0, 1);
    if (out.back().fields.count(key)) {
      problems->push_back(where + std::to_string(n) + ": duplicate key " + key);
    }
    out.back().fields[key] = value;
  }
  return out;
}

std::vector<std::filesystem::path> CaseFiles(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".txt") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace fdyno::expr::testing
