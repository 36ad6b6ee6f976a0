// The process log (stderr) and the access log, as `fdyno serve` configures them.
//
// --log-format text: "2026-01-02T03:04:05.678Z info message" (UTC).
// --log-format json: one object a line, {"time":"2026-01-02T03:04:05.678Z","level":"info",
//   "msg":"message"}, always valid JSON in valid UTF-8 (base/json_text.h).
#pragma once

#include <spdlog/logger.h>

#include <memory>
#include <string>

#include "base/result.h"

namespace fdyno::main {

enum class LogFormat { kText, kJson };

// Installs the default logger: stderr, in `format`, at `level` ("info", ...).
void ConfigureLogging(LogFormat format, const std::string& level);

// A logger that writes each access record as given (http/access_log.h formats them), one a
// line: to standard output for "-", else appended to the file `path`. Each line is flushed as
// it is written, so the log is complete up to the last answered request whatever happens next.
Result<std::shared_ptr<spdlog::logger>> OpenAccessLog(const std::string& path);

}  // namespace fdyno::main
