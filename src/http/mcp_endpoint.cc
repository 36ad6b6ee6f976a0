#include "http/mcp_endpoint.h"

#include <openssl/crypto.h>

#include "http/config.h"

namespace fdyno::http {
namespace {

HttpResponse Plain(unsigned status, std::string body, std::string headers = {}) {
  HttpResponse r;
  r.status = status;
  r.content_type = "text/plain";
  r.body = std::move(body);
  r.headers = std::move(headers);
  return r;
}

// "http://localhost:3000" -> whether its host is a loopback host.
bool LoopbackOrigin(std::string_view origin) {
  const size_t scheme = origin.find("://");
  if (scheme == std::string_view::npos) return false;
  std::string_view host = origin.substr(scheme + 3);
  host = host.substr(0, host.find('/'));
  if (!host.empty() && host.front() == '[') {
    host = host.substr(1, host.find(']') == std::string_view::npos ? 0 : host.find(']') - 1);
  } else {
    host = host.substr(0, host.rfind(':'));
  }
  return IsLoopbackHost(host);
}

bool Authorized(const HttpRequest& request, const std::string& token) {
  if (token.empty()) return true;
  const std::string expected = "Bearer " + token;
  const std::string_view given = Header(request, "authorization");
  return given.size() == expected.size() &&
         CRYPTO_memcmp(given.data(), expected.data(), expected.size()) == 0;
}

}  // namespace

HttpResponse AnswerMcp(const HttpRequest& request, const McpHttp& mcp) {
  std::string_view target(request.target().data(), request.target().size());
  if (target.substr(0, target.find('?')) != kMcpPath) {
    return Plain(404, "Not Found: the Model Context Protocol is at /mcp\n");
  }
  if (const std::string_view origin = Header(request, "origin");
      !origin.empty() && !LoopbackOrigin(origin)) {
    return Plain(403, "Forbidden: requests from pages of other origins are refused\n");
  }
  if (!Authorized(request, mcp.token)) {
    return Plain(401, "Unauthorized: Authorization: Bearer <--mcp-token> is required\n",
                 "WWW-Authenticate: Bearer realm=\"fdyno\"\r\n");
  }
  if (request.method() != boost::beast::http::verb::post) {
    return Plain(405, "Method Not Allowed: POST one JSON-RPC message\n", "Allow: POST\r\n");
  }
  std::optional<std::string> answer = mcp.handle(request.body());
  if (!answer) return Plain(202, "");
  HttpResponse r;
  r.content_type = "application/json";
  r.body = std::move(*answer);
  return r;
}

}  // namespace fdyno::http
