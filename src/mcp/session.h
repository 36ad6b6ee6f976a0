// One Model Context Protocol session (https://modelcontextprotocol.io, revisions 2024-11-05 to
// 2025-06-18): JSON-RPC 2.0 messages in, responses out. It answers initialize (the tools
// capability), ping, tools/list and tools/call (mcp/tools.h); notifications get no answer;
// other methods are JSON-RPC's "Method not found". Transport-free: `fdyno mcp` feeds it the
// lines of standard input (main/mcp_command.h).
//
// Thread-safety: thread-safe (Handle keeps no state between messages) when its Invoke is.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "mcp/tools.h"

namespace fdyno::mcp {

inline constexpr std::string_view kLatestProtocolVersion = "2025-06-18";

class Session {
 public:
  // Tool calls run their operations through `invoke` (mcp/tools.h: in this process, or on a
  // running server).
  Session(Invoke invoke, std::string server_version)
      : invoke_(std::move(invoke)), version_(std::move(server_version)) {}

  // The answer to one message (JSON text), or nothing for a notification.
  std::optional<std::string> Handle(std::string_view message) const;

 private:
  Invoke invoke_;
  std::string version_;
};

}  // namespace fdyno::mcp
