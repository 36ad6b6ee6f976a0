// `fdyno health`: asks a running server whether it serves (GET /, which answers "healthy: ..."
// as DynamoDB's endpoint does) and exits 0 if it does, 1 if not. A container's health check
// that needs no shell, curl or wget (packaging/container/).
//
// Thread-safety: not applicable (a command).
#pragma once

#include <CLI/CLI.hpp>

namespace fdyno::main {

// Adds the `health` subcommand to `app`; RunHealth runs it when parsed.
CLI::App* AddHealthCommand(CLI::App& app);
int RunHealth(const CLI::App& command);

}  // namespace fdyno::main
