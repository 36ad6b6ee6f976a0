#include "main/logging.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <ctime>

#include "base/json_text.h"

namespace fdyno::main {
namespace {

constexpr char kTextPattern[] = "%Y-%m-%dT%H:%M:%S.%eZ %^%l%$ %v";

// {"time":"...Z","level":"info","msg":"..."}: one JSON object a line.
class JsonFormatter : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const auto since_epoch = msg.time.time_since_epoch();
    const std::time_t seconds =
        std::chrono::duration_cast<std::chrono::seconds>(since_epoch).count();
    const auto millis =
        std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch).count() % 1000;
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char time[40];
    const size_t n = std::strftime(time, sizeof time, "%Y-%m-%dT%H:%M:%S", &utc);
    std::snprintf(time + n, sizeof time - n, ".%03dZ", static_cast<int>(millis));
    std::string line = "{\"time\":\"";
    line += time;
    line += "\",\"level\":";
    const auto level = spdlog::level::to_string_view(msg.level);
    AppendJsonString(line, std::string_view(level.data(), level.size()));
    line += ",\"msg\":";
    AppendJsonString(line, std::string_view(msg.payload.data(), msg.payload.size()));
    line += "}\n";
    dest.append(line.data(), line.data() + line.size());
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>();
  }
};

}  // namespace

void ConfigureLogging(LogFormat format, const std::string& level) {
  auto logger = spdlog::get("fdyno");
  if (!logger) {
    logger = format == LogFormat::kJson ? spdlog::stderr_logger_mt("fdyno")
                                        : spdlog::stderr_color_mt("fdyno");
  }
  spdlog::set_default_logger(logger);
  if (format == LogFormat::kJson) {
    logger->set_formatter(std::make_unique<JsonFormatter>());
  } else {
    logger->set_formatter(
        std::make_unique<spdlog::pattern_formatter>(kTextPattern, spdlog::pattern_time_type::utc));
  }
  logger->set_level(spdlog::level::from_str(level));
}

Result<std::shared_ptr<spdlog::logger>> OpenAccessLog(const std::string& path) {
  std::shared_ptr<spdlog::logger> logger;
  try {
    if (path == "-") {
      logger = std::make_shared<spdlog::logger>("access",
                                                std::make_shared<spdlog::sinks::stdout_sink_mt>());
    } else {
      logger = std::make_shared<spdlog::logger>(
          "access", std::make_shared<spdlog::sinks::basic_file_sink_mt>(path));
    }
  } catch (const spdlog::spdlog_ex& e) {
    return Error::Validation("--access-log " + path + ": " + e.what());
  }
  logger->set_pattern("%v");
  logger->set_level(spdlog::level::info);
  logger->flush_on(spdlog::level::info);
  return logger;
}

}  // namespace fdyno::main
