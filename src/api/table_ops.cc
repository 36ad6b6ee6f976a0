#include "api/table_ops.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "api/json_util.h"
#include "api/replica_updates.h"
#include "api/run_options.h"
#include "api/table_arn.h"
#include "api/table_handlers.h"
#include "api/table_render.h"
#include "api/table_request.h"
#include "api/table_rules.h"
#include "kv/run.h"
#include "store/backups.h"
#include "store/item_counts.h"
#include "store/replication.h"
#include "store/streams.h"

namespace fdyno::api::tables {
namespace {

using rapidjson::Value;
using store::TableInfo;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

// ==== DescribeTable, DeleteTable ==========================================================

Result<std::string> DescribeTable(Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(std::string name, ReadExistingTableName(ctx, body, "DescribeTable"));
  // The table and its item counts (store/item_counts.h) as of one snapshot.
  struct Described {
    std::shared_ptr<const TableInfo> table;
    store::ItemCounts counts;
  };
  kv::RunOptions options = RunOptionsFor(ctx, s);
  options.read_only = true;
  FDYNO_ASSIGN_OR_RETURN(
      Described d,
      kv::Run(*s.db, options, [&](kv::Transaction& txn, const kv::Attempt&) -> Result<Described> {
        Described out;
        FDYNO_ASSIGN_OR_RETURN(out.table, s.catalog->Find(txn, CallerScope(ctx), name));
        if (out.table) {
          FDYNO_ASSIGN_OR_RETURN(out.counts, store::ReadItemCounts(txn, *out.table));
        }
        return out;
      }));
  if (!d.table) return TableNotFound(name);
  return DescriptionResponse("Table", ctx, *d.table, d.table->status, &d.counts);
}

// DynamoDB's backup of a deleted table with point-in-time recovery (store/backups.h): started in
// the drop's transaction, which holds the table's data from the purge until the backup worker
// has copied it (workers/backups.h).
Status StartDeletedTableBackup(kv::Transaction& txn, const TableInfo& t, int64_t now_ms) {
  FDYNO_ASSIGN_OR_RETURN(store::ItemCounts counts, store::ReadItemCounts(txn, t));
  std::string id = store::SystemBackupId(now_ms);
  FDYNO_ASSIGN_OR_RETURN(std::optional<store::BackupInfo> taken, store::ReadBackup(txn, id));
  if (taken) id = store::NewBackupId(now_ms);  // another table's, deleted in the same ms
  store::StartBackup(txn,
                     store::NewBackupRecord(t, id, store::DeletedTableBackupName(t.name),
                                            store::BackupType::kSystem, now_ms, counts.table),
                     t);
  return Status::Ok();
}

// DynamoDB refuses to delete a table while one of its indexes is being created or deleted.
Status CheckNoIndexInFlight(const TableInfo& t) {
  if (!IndexesInFlight(t)) return Status::Ok();
  return Error::ResourceInUse(
      "Attempt to change a resource which is still in use: Cannot delete table while indexes are "
      "being created, updated, or deleted.");
}

Result<std::string> DeleteTable(Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(std::string name, ReadExistingTableName(ctx, body, "DeleteTable"));
  std::shared_ptr<const TableInfo> seen;  // what the latest attempt dropped
  FDYNO_ASSIGN_OR_RETURN(
      std::shared_ptr<const TableInfo> dropped,
      kv::Run(*s.db, RunOptionsFor(ctx, s),
              [&](kv::Transaction& txn,
                  const kv::Attempt& attempt) -> Result<std::shared_ptr<const TableInfo>> {
                FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const TableInfo> t,
                                       s.catalog->Find(txn, CallerScope(ctx), name));
                // After an ambiguous commit, the table being gone (or replaced) is the
                // earlier attempt's drop.
                if (attempt.maybe_committed && seen && (!t || t->uuid != seen->uuid)) return seen;
                if (!t) return TableNotFound(name);
                FDYNO_RETURN_IF_ERROR(CheckNotCreating(*t));
                FDYNO_RETURN_IF_ERROR(CheckNoIndexInFlight(*t));
                // A replica of a global table leaves it (store/replication.h).
                if (!t->replicas.empty()) {
                  FDYNO_RETURN_IF_ERROR(CheckNotUpdating(*t));
                  FDYNO_RETURN_IF_ERROR(CheckReplicaMayLeave(*t, s.clock->WallMillis()));
                  FDYNO_RETURN_IF_ERROR(store::LeaveReplicaGroup(txn, *s.catalog, *t));
                } else if (t->deletion_protection) {
                  return Error::Validation(
                      "Resource cannot be deleted as it is currently protected against deletion. "
                      "Disable deletion protection first.");
                }
                FDYNO_RETURN_IF_ERROR(s.catalog->Drop(txn, *t, /*hold=*/t->pitr.enabled));
                if (t->pitr.enabled) {
                  FDYNO_RETURN_IF_ERROR(StartDeletedTableBackup(txn, *t, s.clock->WallMillis()));
                }
                seen = t;
                // Its stream stays readable for 24 hours, closed.
                FDYNO_RETURN_IF_ERROR(store::SyncStream(txn, t.get(), nullptr, s.stream_slots,
                                                        s.clock->WallMillis()));
                return t;
              }));
  if (dropped->pitr.enabled && s.wake_backups) s.wake_backups();
  spdlog::info("deleted table {} (id {}, account {})", name, dropped->id, ctx.account_id);
  // The data goes in the background: the drop made it unreachable, removing it is housekeeping.
  if (s.wake_purge) s.wake_purge();
  return DescriptionResponse("TableDescription", ctx, *dropped, store::TableStatus::kDeleting);
}

// ==== ListTables ============================================================================

Result<std::string> ListTables(Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> start,
                         GetString(body, "ExclusiveStartTableName"));
  FDYNO_ASSIGN_OR_RETURN(std::optional<int64_t> limit, GetInteger(body, "Limit"));
  ConstraintErrors e;
  if (start) {
    e.Pattern("exclusiveStartTableName", *start, IsValidTableNameChars(*start), kNamePattern);
    e.MinLength("exclusiveStartTableName", *start, 3);
    e.MaxLength("exclusiveStartTableName", *start, 255);
  }
  if (limit) {
    e.MinValue("limit", *limit, 1);
    e.MaxValue("limit", *limit, 100);
  }
  FDYNO_RETURN_IF_ERROR(e.ToStatus());
  std::string start_name(start.value_or(""));
  int page_size = static_cast<int>(limit.value_or(100));
  kv::RunOptions options = RunOptionsFor(ctx, s);
  options.read_only = true;
  FDYNO_ASSIGN_OR_RETURN(store::TableNamePage page,
                         kv::Run(*s.db, options, [&](kv::Transaction& txn, const kv::Attempt&) {
                           return s.catalog->List(txn, CallerScope(ctx), start_name, page_size);
                         }));
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("TableNames");
  w.StartArray();
  for (const auto& n : page.names) Str(w, n);
  w.EndArray();
  if (page.more && !page.names.empty()) {
    w.Key("LastEvaluatedTableName");
    Str(w, page.names.back());
  }
  w.EndObject();
  return JsonText(buffer);
}

}  // namespace

std::string JsonText(const rapidjson::StringBuffer& buffer) {
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace fdyno::api::tables

namespace fdyno::api {

void RegisterTableOperations(OperationRegistry& registry, const Services& services) {
  auto s = std::make_shared<Services>(services);
  registry.Register("CreateTable", Bind(s, &tables::CreateTable));
  registry.Register("DescribeTable", Bind(s, &tables::DescribeTable));
  registry.Register("ListTables", Bind(s, &tables::ListTables));
  registry.Register("DeleteTable", Bind(s, &tables::DeleteTable));
  registry.Register("UpdateTable", Bind(s, &tables::UpdateTable));
  registry.Register("TagResource", Bind(s, &tables::TagResource));
  registry.Register("UntagResource", Bind(s, &tables::UntagResource));
  registry.Register("ListTagsOfResource", Bind(s, &tables::ListTagsOfResource));
}

}  // namespace fdyno::api
