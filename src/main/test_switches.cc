#include "main/test_switches.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "kv/engines/embedded/testing/full_disk.h"
#include "kv/engines/embedded/testing/power_loss.h"

namespace fdyno::main {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

// The full-disk file system, filling at `fill_text`.
Result<std::function<void()>> ApplyFullDisk(const std::string& fill_text,
                                            kv::EmbeddedOptions& options) {
  auto space = std::make_shared<kv::testing::DiskSpace>();
  FDYNO_ASSIGN_OR_RETURN(space->fill_at, kv::testing::ParseStagePoint(fill_text, {"short"}));
  space->stages = std::make_shared<kv::testing::StageTracker>();
  space->space_file = Env("FDYNO_TEST_DISK_SPACE_FILE");
  space->on_fill = [fill_text](const std::string& file) {
    spdlog::warn("test disk full at {} (an append to {})", fill_text, file);
  };
  spdlog::warn(
      "full disk at {}, space back when {} exists (FDYNO_TEST_DISK_FULL_AT); for tests "
      "only",
      fill_text, space->space_file);
  options.file_system = kv::testing::NewFullDiskFileSystem(space);
  return std::function<void()>([space] { space->stages->Opened(); });
}

}  // namespace

Result<std::function<void()>> ApplyTestEngineSwitches(kv::EmbeddedOptions& options) {
  options.rocksdb_options = Env("FDYNO_TEST_ROCKSDB_OPTIONS");
  if (!options.rocksdb_options.empty()) {
    spdlog::warn("test RocksDB options: {} (FDYNO_TEST_ROCKSDB_OPTIONS); for tests only",
                 options.rocksdb_options);
  }
  const std::string journal = Env("FDYNO_TEST_POWER_LOSS_JOURNAL");
  const std::string cut_text = Env("FDYNO_TEST_POWER_CUT");
  const std::string fill_text = Env("FDYNO_TEST_DISK_FULL_AT");
  if (!fill_text.empty()) {
    if (!journal.empty()) {
      return Error::Validation(
          "FDYNO_TEST_DISK_FULL_AT and FDYNO_TEST_POWER_LOSS_JOURNAL are separate tests");
    }
    return ApplyFullDisk(fill_text, options);
  }
  if (journal.empty()) {
    if (!cut_text.empty()) {
      return Error::Validation("FDYNO_TEST_POWER_CUT needs FDYNO_TEST_POWER_LOSS_JOURNAL");
    }
    return std::function<void()>();
  }
  std::optional<kv::testing::StagePoint> cut;
  if (!cut_text.empty()) {
    FDYNO_ASSIGN_OR_RETURN(cut, kv::testing::ParseStagePoint(cut_text, {"after"}));
  }
  FDYNO_ASSIGN_OR_RETURN(kv::testing::PowerLossFileSystem fs,
                         kv::testing::NewPowerLossFileSystem(journal, cut));
  spdlog::warn("power-loss journal: {}{}{} (FDYNO_TEST_POWER_LOSS_JOURNAL); for tests only",
               journal, cut ? ", power cut at " : "", cut_text);
  options.file_system = fs.file_system;
  return fs.opened;
}

CLI::App* AddTestPowerCutCommand(CLI::App& app) {
  CLI::App* command = app.add_subcommand("test-power-cut", "");
  command->group("");  // hidden: for tests only
  command->add_option("journal", "")->required();
  command->add_option("--tail", "")->default_val("drop");
  command->add_option("--seed", "")->default_val("0");
  return command;
}

int RunTestPowerCut(const CLI::App& command) {
  const std::string journal = command.get_option("journal")->as<std::string>();
  const std::string tail_name = command.get_option("--tail")->as<std::string>();
  std::optional<kv::testing::Tail> tail = kv::testing::TailNamed(tail_name);
  if (!tail) {
    std::fprintf(stderr, "--tail is drop, torn, zeros or garbage, not '%s'\n", tail_name.c_str());
    return 2;
  }
  kv::testing::PowerCutOptions options{.tail = *tail,
                                       .seed = command.get_option("--seed")->as<uint64_t>()};
  Result<kv::testing::PowerLossEffect> effect = kv::testing::SimulatePowerLoss(journal, options);
  if (!effect.ok()) {
    std::fprintf(stderr, "%s\n", effect.error().message.c_str());
    return 1;
  }
  std::printf(
      "{\"stage\": \"%s\", \"self_cut\": %s, \"files_truncated\": %d, \"files_removed\": %d, "
      "\"files_torn\": %d, \"bytes_dropped\": %llu}\n",
      std::string(kv::testing::StageName(effect->stage)).c_str(),
      effect->self_cut ? "true" : "false", effect->files_truncated, effect->files_removed,
      effect->files_torn, static_cast<unsigned long long>(effect->bytes_dropped));
  return 0;
}

}  // namespace fdyno::main
