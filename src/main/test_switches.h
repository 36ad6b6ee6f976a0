// The test-only switches of the fdyno binary. None is in `--help`: they exist for the
// black-box power-cut test (tests/pytest/power_cut.py, scripts/faults.sh) and are documented in
// docs/testing.md. Each is read from the environment when `fdyno serve` opens the embedded
// engine:
//   FDYNO_TEST_POWER_LOSS_JOURNAL=PATH  the engine's files go through the power-loss file system
//                                       (kv/engines/embedded/testing/power_loss.h), journaling
//                                       to PATH what a power cut would keep
//   FDYNO_TEST_POWER_CUT=STAGE:N[:after]  with the journal: the process cuts the power itself
//                                       (SIGKILL) at the Nth file operation of STAGE
//   FDYNO_TEST_ROCKSDB_OPTIONS=TEXT     RocksDB options over the engine's own, in RocksDB's
//                                       "name=value;..." form (small write buffers and levels)
//   FDYNO_TEST_DISK_FULL_AT=STAGE:N[:short]  the engine's files go through the full-disk file
//                                       system (kv/engines/embedded/testing/full_disk.h), which
//                                       fills at the Nth append of STAGE (a short write there)
//   FDYNO_TEST_DISK_SPACE_FILE=PATH     with it: space returns once PATH exists
// and `fdyno test-power-cut JOURNAL [--tail drop|torn|zeros|garbage] [--seed N]`, after the
// process that wrote JOURNAL is dead, cuts its files back to what the journal says reached the
// disk and prints what it did as one JSON object.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

#include "base/result.h"
#include "kv/engines/embedded/embedded.h"

namespace fdyno::main {

// Applies the FDYNO_TEST_* engine switches to `options`. Returns what to call once the engine
// has opened (nothing when the power-loss file system is off).
Result<std::function<void()>> ApplyTestEngineSwitches(kv::EmbeddedOptions& options);

// Adds the hidden `test-power-cut` subcommand to `app`; RunTestPowerCut runs it when parsed.
CLI::App* AddTestPowerCutCommand(CLI::App& app);
int RunTestPowerCut(const CLI::App& command);

}  // namespace fdyno::main
