#include "kv/engines/embedded/rocks_logger.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <string_view>

namespace fdyno::kv::embedded {
namespace {

spdlog::level::level_enum LevelOf(rocksdb::InfoLogLevel level) {
  switch (level) {
    case rocksdb::InfoLogLevel::WARN_LEVEL:
      return spdlog::level::warn;
    case rocksdb::InfoLogLevel::ERROR_LEVEL:
    case rocksdb::InfoLogLevel::FATAL_LEVEL:
      return spdlog::level::err;
    default:
      return spdlog::level::debug;
  }
}

class RocksLogger : public rocksdb::Logger {
 public:
  using rocksdb::Logger::Logv;
  explicit RocksLogger(rocksdb::InfoLogLevel level) : rocksdb::Logger(level) {}

  // RocksDB's header lines (options and version at open): debug.
  void Logv(const char* format, va_list ap) override {
    Logv(rocksdb::InfoLogLevel::DEBUG_LEVEL, format, ap);
  }

  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override {
    const spdlog::level::level_enum to = LevelOf(level);
    if (!spdlog::should_log(to)) return;
    char buffer[1024];
    const int n = std::vsnprintf(buffer, sizeof(buffer), format, ap);
    if (n < 0) return;
    std::string_view line(buffer, std::min<size_t>(static_cast<size_t>(n), sizeof(buffer) - 1));
    while (!line.empty() && line.back() == '\n') line.remove_suffix(1);
    spdlog::log(to, "rocksdb: {}", line);
  }
};

}  // namespace

std::shared_ptr<rocksdb::Logger> NewRocksLogger() {
  return std::make_shared<RocksLogger>(spdlog::should_log(spdlog::level::debug)
                                           ? rocksdb::InfoLogLevel::DEBUG_LEVEL
                                           : rocksdb::InfoLogLevel::WARN_LEVEL);
}

}  // namespace fdyno::kv::embedded
