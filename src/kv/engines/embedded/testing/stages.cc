#include "kv/engines/embedded/testing/stages.h"

#include <pthread.h>

#include <charconv>
#include <filesystem>
#include <utility>

namespace fdyno::kv::testing {
namespace {

constexpr std::array<std::string_view, kStageCount> kStageNames = {
    "append", "flush", "compaction", "log_delete", "manifest", "recovery", "other"};

bool EndsWith(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

thread_local Stage last_stage_on_thread = Stage::kOther;

// The stage of a table file written on this thread: RocksDB names its pools' threads.
Stage StageOfTableWriter() {
  char name[16] = {};
  if (pthread_getname_np(pthread_self(), name, sizeof(name)) != 0) return Stage::kOther;
  const std::string_view n(name);
  if (n.starts_with("rocksdb:high")) return Stage::kFlush;
  if (n.starts_with("rocksdb:low")) return Stage::kCompaction;
  return Stage::kOther;
}

}  // namespace

std::string_view StageName(Stage stage) { return kStageNames[static_cast<int>(stage)]; }

std::optional<Stage> StageNamed(std::string_view name) {
  for (Stage s : kStages) {
    if (StageName(s) == name) return s;
  }
  return std::nullopt;
}

Result<StagePoint> ParseStagePoint(std::string_view text,
                                   std::initializer_list<std::string_view> flags) {
  std::string flag_names;
  for (std::string_view f : flags) flag_names += ":" + std::string(f);
  const auto bad = [&] {
    return Error::Validation("a stage point is STAGE:N" +
                             (flag_names.empty() ? "" : " or STAGE:N" + flag_names) +
                             " (STAGE one of append, flush, compaction, log_delete, manifest, "
                             "recovery, other), not '" +
                             std::string(text) + "'");
  };
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) return bad();
  std::optional<Stage> stage = StageNamed(text.substr(0, colon));
  std::string_view rest = text.substr(colon + 1);
  StagePoint point;
  if (const size_t second = rest.find(':'); second != std::string_view::npos) {
    point.flag = std::string(rest.substr(second + 1));
    rest = rest.substr(0, second);
    bool known = false;
    for (std::string_view f : flags) known = known || f == point.flag;
    if (!known) return bad();
  }
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), point.nth);
  if (!stage || ec != std::errc() || end != rest.data() + rest.size() || point.nth < 1) {
    return bad();
  }
  point.stage = *stage;
  return point;
}

Stage StageTracker::StageOf(const std::string& path, bool deleting) {
  Stage stage = Stage::kOther;
  const std::string name = std::filesystem::path(path).filename().string();
  if (!opened_.load()) {
    stage = Stage::kRecovery;
  } else if (EndsWith(name, ".log")) {
    stage = deleting ? Stage::kLogDelete : Stage::kAppend;
  } else if (name.starts_with("MANIFEST-") || name == "CURRENT" || EndsWith(name, ".dbtmp")) {
    stage = Stage::kManifest;
  } else if (!deleting && EndsWith(name, ".sst")) {
    stage = StageOfTableWriter();
  }
  last_stage_on_thread = stage;
  return stage;
}

Stage StageTracker::StageOfDirectorySync() const {
  return opened_.load() ? last_stage_on_thread : Stage::kRecovery;
}

bool StageTracker::Count(Stage stage, const StagePoint& point) {
  const int n = counts_[static_cast<int>(stage)].fetch_add(1) + 1;
  return point.stage == stage && n == point.nth;
}

}  // namespace fdyno::kv::testing
