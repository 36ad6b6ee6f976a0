// The Model Context Protocol's streamable HTTP transport on `fdyno serve --mcp-listen`: POST
// /mcp carries one JSON-RPC message, answered as application/json (202 Accepted with no body
// for a notification); GET and DELETE are 405 (the server offers no event stream and keeps no
// sessions). With a token, every request must carry `Authorization: Bearer <token>` (401
// otherwise); a request from a browser page whose Origin is not a loopback host is refused (403),
// as the transport asks, against DNS rebinding. The messages themselves go to `handle` (the MCP
// session, mcp/session.h, which this layer does not know).
//
// Thread-safety: thread-safe when `handle` is.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "http/router.h"

namespace fdyno::http {

struct McpHttp {
  // One JSON-RPC message in; its answer, or nothing for a notification or a response.
  std::function<std::optional<std::string>(std::string_view message)> handle;
  std::string token;  // empty: none asked (a loopback listener only: flags.cc checks)
};

inline constexpr std::string_view kMcpPath = "/mcp";

HttpResponse AnswerMcp(const HttpRequest& request, const McpHttp& mcp);

}  // namespace fdyno::http
