#include "store/regions_migration.h"

#include <string>
#include <utility>

#include "kv/run.h"
#include "store/backups.h"
#include "store/catalog.h"
#include "store/layout.h"
#include "store/pitr.h"
#include "store/streams.h"

namespace fdyno::store {
namespace {

// The legacy region: the one recorded, else `region`, recorded now. Empty when the catalog is
// already in format 3 (nothing to migrate).
Result<std::string> LegacyRegion(kv::Database& db, std::string_view region) {
  return kv::Run(db, [&](kv::Transaction& txn, const kv::Attempt&) -> Result<std::string> {
    FDYNO_ASSIGN_OR_RETURN(int format, Catalog::ReadFormat(txn));
    if (format >= Catalog::kFormatRegions) return std::string();
    FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> kept, txn.Get(Catalog::LegacyRegionKey()));
    if (kept) return *kept;
    if (region.empty()) return Error::Internal("catalog migration: no region to give tables");
    txn.Set(Catalog::LegacyRegionKey(), std::string(region));
    return std::string(region);
  });
}

// One batch of table records moved from (account, name) to (account, legacy region, name);
// returns how many (0: none left).
Result<int> MoveTables(kv::Transaction& txn, std::string_view region, int batch) {
  const kv::Subspace old_tables = Catalog::AccountTables();
  const auto [begin, end] = old_tables.Range();
  kv::RangeOptions opts;
  opts.limit = batch;
  FDYNO_ASSIGN_OR_RETURN(kv::RangeResult range, txn.GetRange(begin, end, opts));
  for (const kv::KeyValue& kv : range.kvs) {
    FDYNO_ASSIGN_OR_RETURN(TableInfo info, DecodeTableInfo(kv.value));
    FDYNO_ASSIGN_OR_RETURN(kv::Tuple t, old_tables.Unpack(kv.key));
    FDYNO_ASSIGN_OR_RETURN(std::string account, t.GetString(0));
    FDYNO_ASSIGN_OR_RETURN(std::string name, t.GetString(1));
    if (info.account != account || info.name != name) {
      return Error::Internal("catalog record of " + name + " names another table");
    }
    if (info.region.empty()) info.region = std::string(region);
    const std::string key = Catalog::TableKey(info.scope(), name);
    FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> taken, txn.Get(key));
    if (taken) {
      return Error::Internal("catalog migration: table " + name +
                             " exists both before and after regions (account " + account +
                             "); both records are left in place");
    }
    txn.Set(key, EncodeTableInfo(info));
    txn.Clear(kv.key);
  }
  if (!range.kvs.empty()) {
    txn.AtomicOp(kv::MutationType::kAdd, layout::MetadataVersionKey(), kv::EncodeCounter(1));
  }
  return static_cast<int>(range.kvs.size());
}

// Gives every record in `range` without a region the legacy region, `batch` records a
// transaction.
template <typename Record>
Status FillRegions(kv::Database& db, std::pair<std::string, std::string> range,
                   Result<Record> (*decode)(std::string_view), std::string (*encode)(const Record&),
                   std::string_view region, int batch) {
  std::string begin = range.first;
  while (true) {
    FDYNO_ASSIGN_OR_RETURN(
        std::optional<std::string> next,
        kv::Run(
            db,
            [&](kv::Transaction& txn, const kv::Attempt&) -> Result<std::optional<std::string>> {
              kv::RangeOptions opts;
              opts.limit = batch;
              FDYNO_ASSIGN_OR_RETURN(kv::RangeResult page, txn.GetRange(begin, range.second, opts));
              for (const kv::KeyValue& kv : page.kvs) {
                FDYNO_ASSIGN_OR_RETURN(Record record, decode(kv.value));
                if (!record.region.empty()) continue;
                record.region = std::string(region);
                txn.Set(kv.key, encode(record));
              }
              if (!page.more) return std::optional<std::string>();
              return std::optional<std::string>(page.kvs.back().key + '\0');
            }));
    if (!next) return Status::Ok();
    begin = std::move(*next);
  }
}

}  // namespace

Result<FormatMigration> MigrateFormat(kv::Database& db, std::string_view region, int batch) {
  FormatMigration out;
  FDYNO_ASSIGN_OR_RETURN(out.accounts, Catalog::Migrate(db, batch));
  FDYNO_ASSIGN_OR_RETURN(out.legacy_region, LegacyRegion(db, region));
  if (out.legacy_region.empty()) return out;
  const std::string& legacy = out.legacy_region;
  while (true) {
    FDYNO_ASSIGN_OR_RETURN(int n, kv::Run(db, [&](kv::Transaction& txn, const kv::Attempt&) {
                             return MoveTables(txn, legacy, batch);
                           }));
    if (n == 0) break;
    out.regions += n;
  }
  FDYNO_RETURN_IF_ERROR(
      FillRegions(db, BackupsRange(), &DecodeBackupInfo, &EncodeBackupInfo, legacy, batch));
  FDYNO_RETURN_IF_ERROR(
      FillRegions(db, RestoreJobsRange(), &DecodeRestoreJob, &EncodeRestoreJob, legacy, batch));
  FDYNO_RETURN_IF_ERROR(FillRegions(db, PitrRestoreJobsRange(), &DecodePitrRestoreJob,
                                    &EncodePitrRestoreJob, legacy, batch));
  FDYNO_RETURN_IF_ERROR(
      FillRegions(db, StreamInfosRange(), &DecodeStreamInfo, &EncodeStreamInfo, legacy, batch));
  FDYNO_RETURN_IF_ERROR(kv::Run(db, [&](kv::Transaction& txn, const kv::Attempt&) -> Status {
    FDYNO_ASSIGN_OR_RETURN(int format, Catalog::ReadFormat(txn));
    if (format < Catalog::kFormatRegions) Catalog::WriteFormat(txn, Catalog::kFormatRegions);
    return Status::Ok();
  }));
  return out;
}

}  // namespace fdyno::store
