#include "api/batch_receipt.h"

#include <charconv>
#include <cmath>
#include <system_error>

namespace fdyno::api {

std::string EncodeUnits(const std::vector<double>& units) {
  std::string s;
  for (double u : units) s += std::to_string(u) + "\n";
  return s;
}

Result<std::vector<double>> DecodeUnits(std::string_view text, size_t n) {
  std::vector<double> units;
  units.reserve(n);
  while (!text.empty() && units.size() < n) {
    const size_t nl = text.find('\n');
    if (nl == std::string_view::npos) break;
    double u = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + nl, u, std::chars_format::fixed);
    if (ec != std::errc() || end != text.data() + nl || !std::isfinite(u) || u < 0) break;
    units.push_back(u);
    text.remove_prefix(nl + 1);
  }
  if (units.size() != n || !text.empty()) {
    return Error::Internal("corrupt operation receipt: batch write capacity units");
  }
  return units;
}

}  // namespace fdyno::api
