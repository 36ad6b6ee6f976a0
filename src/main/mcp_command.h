// `fdyno mcp`: the Model Context Protocol over standard input and output, for a coding agent,
// on a database of its own: serve's storage flags (--data-dir, --in-memory, --engine, ...), its
// workers' settings and --region, without a listener. One JSON-RPC message a line in, one
// answer a line out (mcp/session.h); the log goes to standard error. The session ends when
// standard input does, and the database closes cleanly.
//
// Thread-safety: not applicable (a command).
#pragma once

#include <CLI/CLI.hpp>

#include "main/flags.h"

namespace fdyno::main {

// Adds the `mcp` subcommand to `app`, its flags into `flags`; RunMcp runs it when parsed.
CLI::App* AddMcpCommand(CLI::App& app, ServeFlags& flags);
int RunMcp(const ServeFlags& flags);

}  // namespace fdyno::main
