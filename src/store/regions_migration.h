// Catalog format 3: tables belong to a region. A database written before regions is brought to
// it when a server starts, before anything else reads it (docs/format/catalog.md, "Regions"):
// its tables, backups, restore jobs and streams are given the legacy region, the region the
// first server to migrate answered for (its --region, which every ARN of theirs named), kept at
// Catalog::LegacyRegionKey so that every process that migrates uses the same one.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"
#include "kv/kv.h"

namespace fdyno::store {

struct FormatMigration {
  int accounts = 0;  // tables moved from before accounts to the shared account
  int regions = 0;   // tables moved into the legacy region
  std::string legacy_region;
};

// Brings `db` to this binary's catalog format: Catalog::Migrate (accounts), then regions. Each
// step runs in transactions of at most `batch` records, resumable after a crash and idempotent;
// the format key is written last. `region`: the legacy region when none is recorded yet.
Result<FormatMigration> MigrateFormat(kv::Database& db, std::string_view region, int batch = 100);

}  // namespace fdyno::store
