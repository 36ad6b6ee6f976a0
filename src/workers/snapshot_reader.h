// Reads of one consistent snapshot of the database in many steps, for long background work
// (backups, exports): the engine's snapshot transaction (kv::Database::CreateSnapshotTransaction,
// which never ages out), or, on an engine without one, one pinned read version shared by a
// transaction per read. Once that read version ages out (1007) every read fails with cause
// ErrorCause::kSnapshotLost: the work fails rather than mixing snapshots.
//
// Thread-safety: used by one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "kv/kv.h"
#include "store/catalog.h"

namespace fdyno::workers {

class SnapshotReader {
 public:
  explicit SnapshotReader(kv::Database& db);

  // Snapshot reads (they conflict with nothing).
  Result<kv::RangeResult> GetRange(std::string_view begin, std::string_view end, int limit,
                                   bool reverse = false);
  Result<std::optional<std::string>> Get(std::string_view key);

  // The catalog's record of table `name` in `scope` in the snapshot (which this pins on an
  // engine without snapshot transactions).
  Result<std::shared_ptr<const store::TableInfo>> FindTable(store::Catalog& catalog,
                                                            store::TableScope scope,
                                                            const std::string& name);

 private:
  // A transaction at the snapshot: the snapshot transaction, or a new one at the pinned version.
  Result<kv::Transaction*> At();

  kv::Database& db_;
  std::unique_ptr<kv::Transaction> snapshot_;
  std::unique_ptr<kv::Transaction> pinned_;  // the transaction of the latest read
  std::optional<int64_t> version_;
};

}  // namespace fdyno::workers
