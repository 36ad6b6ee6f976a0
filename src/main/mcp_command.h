// `fdyno mcp`: the Model Context Protocol over standard input and output, for a coding agent,
// on a database of its own (serve's storage flags: --data-dir, --in-memory, --engine, ...; its
// workers' settings; --region), without a listener, or with --endpoint URL on a running
// server's (mcp/remote.h). One JSON-RPC message a line in, one
// answer a line out (mcp/session.h); the log goes to standard error. The session ends when
// standard input does, and the database closes cleanly.
//
// Thread-safety: not applicable (a command).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "main/flags.h"

namespace fdyno::main {

// Adds the `mcp` subcommand to `app`, its flags into `flags` and `endpoint`; RunMcp runs it
// when parsed.
CLI::App* AddMcpCommand(CLI::App& app, ServeFlags& flags, std::string& endpoint);
int RunMcp(const ServeFlags& flags, const std::string& endpoint);

}  // namespace fdyno::main
