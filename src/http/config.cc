#include "http/config.h"

#include <charconv>

namespace fdyno::http {

std::string Endpoint::ToString() const {
  bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

Result<Endpoint> ParseEndpoint(std::string_view text) {
  auto bad = [&] {
    return Error::Validation("invalid address '" + std::string(text) +
                             "': expected HOST:PORT, [IPv6]:PORT or :PORT");
  };
  Endpoint e;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return bad();
    }
    e.host = std::string(text.substr(1, close - 1));
    port = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return bad();
    e.host = std::string(text.substr(0, colon));
    if (e.host.find(':') != std::string::npos) return bad();
    port = text.substr(colon + 1);
  }
  if (e.host.empty()) e.host = "0.0.0.0";
  unsigned value = 0;
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || ptr != port.data() + port.size() || value > 65535) {
    return bad();
  }
  e.port = static_cast<uint16_t>(value);
  return e;
}

bool IsLoopbackHost(std::string_view host) {
  if (host == "localhost" || host == "::1") return true;
  return host.substr(0, 4) == "127.";
}

}  // namespace fdyno::http
