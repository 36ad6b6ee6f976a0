#include "api/backup_ops.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/json_util.h"
#include "api/restore_request.h"
#include "api/run_options.h"
#include "api/table_arn.h"
#include "api/table_render.h"
#include "api/ttl_ops.h"
#include "base/time_text.h"
#include "kv/run.h"
#include "store/backups.h"
#include "store/item_counts.h"

namespace fdyno::api {
namespace {

using rapidjson::Value;
using store::BackupInfo;
using store::TableInfo;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

constexpr int kMaxListBackups = 100;

std::string Json(const rapidjson::StringBuffer& b) {
  return std::string(b.GetString(), b.GetSize());
}

void Wake(const Services& s) {
  if (s.wake_backups) s.wake_backups();
}

Error BackupNotFound(std::string_view arn) {
  return Error::Make(ErrorType::kBackupNotFound, "Backup not found: " + std::string(arn));
}

// Whether a table is being restored from backup `b`.
Result<bool> BeingRestored(kv::Transaction& tx, const BackupInfo& b) {
  FDYNO_ASSIGN_OR_RETURN(std::vector<store::RestoreJob> jobs, store::ListRestoreJobs(tx));
  return std::any_of(jobs.begin(), jobs.end(),
                     [&](const store::RestoreJob& job) { return job.backup_id == b.id; });
}

// ---- backup ARNs ----------------------------------------------------------------------------

struct BackupRef {
  std::string arn;
  std::string table;
  std::string id;
  std::string account;        // the ARN's: the caller's
  std::string region;         // the ARN's (any region of AWS's; not compared with the caller's)
  std::string caller_region;  // where the backup must be: DynamoDB looks it up by id there
};

// The backup an ARN names: arn:aws:dynamodb:<region>:<account>:table/<table>/backup/<id> in the
// caller's account, as DynamoDB reads it: "Invalid Backup ARN" when it is not a backup ARN at all,
// "Invalid Request: BackupArn is not valid" for another partition or service or a region that
// does not exist, AccessDeniedException for another account's (DynamoDB authorizes on the ARN's
// account first). The region of a valid ARN is not compared with the caller's, as DynamoDB does
// not compare it.
Result<BackupRef> ParseBackupArn(const RequestContext& ctx, std::string_view arn,
                                 std::string_view operation) {
  const std::optional<std::array<std::string, 6>> parts = SplitArn(arn);
  constexpr std::string_view kTable = "table/", kBackup = "/backup/";
  const std::string_view resource = parts ? std::string_view((*parts)[5]) : std::string_view();
  const size_t at = resource.find(kBackup);
  if (!parts || (*parts)[0] != "arn" || !resource.starts_with(kTable) ||
      at == std::string_view::npos || at <= kTable.size() ||
      at + kBackup.size() == resource.size()) {
    return Error::Validation("Invalid Backup ARN");
  }
  const std::string& region = (*parts)[3];
  if (region.empty()) return NotAuthorized(ctx, operation, arn);
  if ((*parts)[1] != "aws" || (*parts)[2] != "dynamodb" || !IsKnownRegion(ctx, region)) {
    return Error::Validation("Invalid Request: BackupArn is not valid");
  }
  if ((*parts)[4] != ctx.account_id) return NotAuthorized(ctx, operation, arn);
  BackupRef ref{std::string(arn),
                std::string(resource.substr(kTable.size(), at - kTable.size())),
                std::string(resource.substr(at + kBackup.size())),
                ctx.account_id,
                region,
                ctx.region};
  if (!store::IsBackupId(ref.id)) return BackupNotFound(arn);
  return ref;
}

// The BackupArn member: required (DynamoDB reads any other string as an ARN first, so a short
// one is "Invalid Backup ARN", not a length error).
Result<BackupRef> ReadBackupArn(const RequestContext& ctx, const Value& body,
                                std::string_view operation) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> arn, GetOwnedString(body, "BackupArn"));
  ConstraintErrors e;
  e.NotNull("backupArn", arn.has_value());
  FDYNO_RETURN_IF_ERROR(e.ToStatus());
  return ParseBackupArn(ctx, *arn, operation);
}

// The backup `ref` names, or BackupNotFoundException (also for another account's backup: its
// ARN names the caller's account, so it names no backup of the caller's; and for another region's:
// backups are regional, and an ARN's region is not compared, so it names the caller's region's).
Result<BackupInfo> FindBackup(kv::Transaction& tx, const BackupRef& ref) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<BackupInfo> info, store::ReadBackup(tx, ref.id));
  if (!info || info->account != ref.account || info->region != ref.caller_region ||
      info->table_name != ref.table) {
    return BackupNotFound(ref.arn);
  }
  return std::move(*info);
}

// ---- rendering ----------------------------------------------------------------------------

std::string_view StatusText(store::BackupStatus s) {
  return s == store::BackupStatus::kCreating ? "CREATING" : "AVAILABLE";
}
std::string_view TypeText(store::BackupType t) {
  return t == store::BackupType::kUser ? "USER" : "SYSTEM";
}

// The members BackupDetails and BackupSummary share.
void WriteBackupMembers(Writer& w, const RequestContext& ctx, const BackupInfo& b,
                        std::string_view status) {
  w.Key("BackupArn");
  Str(w, BackupArn(ctx, b.table_name, b.id));
  w.Key("BackupName");
  Str(w, b.name);
  if (b.status == store::BackupStatus::kAvailable) {
    w.Key("BackupSizeBytes");
    w.Int64(b.progress.bytes);
  }
  w.Key("BackupStatus");
  Str(w, status);
  w.Key("BackupType");
  Str(w, TypeText(b.type));
  w.Key("BackupCreationDateTime");
  WriteSeconds(w, b.created_ms);
  if (b.type == store::BackupType::kSystem) {
    w.Key("BackupExpiryDateTime");
    WriteSeconds(w, b.created_ms + store::kSystemBackupRetentionMs);
  }
}

void WriteBackupDetails(Writer& w, const RequestContext& ctx, const BackupInfo& b,
                        std::string_view status) {
  w.StartObject();
  WriteBackupMembers(w, ctx, b, status);
  w.EndObject();
}

void WriteIndexKeyAndProjection(Writer& w, const store::SecondaryIndex& i) {
  w.Key("IndexName");
  Str(w, i.name);
  w.Key("KeySchema");
  WriteKeySchema(w, i.key_schema);
  w.Key("Projection");
  WriteProjection(w, i.projection);
}

void WriteUnits(Writer& w, const store::Throughput& t) {
  w.StartObject();
  w.Key("ReadCapacityUnits");
  w.Int64(t.read_capacity_units);
  w.Key("WriteCapacityUnits");
  w.Int64(t.write_capacity_units);
  w.EndObject();
}

// The backed-up table's name, id and ARN, as SourceTableDetails and BackupSummary show them.
void WriteBackedUpTable(Writer& w, const RequestContext& ctx, const BackupInfo& b) {
  w.Key("TableName");
  Str(w, b.table_name);
  w.Key("TableId");
  Str(w, b.table_uuid);
  w.Key("TableArn");
  Str(w, TableArn(ctx, b.table_name));
}

void WriteSourceTableDetails(Writer& w, const RequestContext& ctx, const BackupInfo& b,
                             const TableInfo& t) {
  const bool available = b.status == store::BackupStatus::kAvailable;
  w.StartObject();
  WriteBackedUpTable(w, ctx, b);
  w.Key("TableSizeBytes");
  w.Int64(available ? b.progress.bytes : 0);
  w.Key("KeySchema");
  WriteKeySchema(w, t.key_schema);
  w.Key("TableCreationDateTime");
  WriteSeconds(w, b.table_created_ms);
  w.Key("ProvisionedThroughput");
  WriteUnits(w, t.throughput);
  WriteOnDemand(w, t.on_demand);
  w.Key("ItemCount");
  w.Int64(available ? b.progress.items : b.table_item_count);
  w.Key("BillingMode");
  w.String(t.billing_mode == store::BillingMode::kPayPerRequest ? "PAY_PER_REQUEST"
                                                                : "PROVISIONED");
  w.EndObject();
}

void WriteSourceTableFeatureDetails(Writer& w, const RequestContext& ctx, const TableInfo& t) {
  w.StartObject();
  if (!t.local_indexes.empty()) {
    w.Key("LocalSecondaryIndexes");
    w.StartArray();
    for (const store::SecondaryIndex& i : t.local_indexes) {
      w.StartObject();
      WriteIndexKeyAndProjection(w, i);
      w.EndObject();
    }
    w.EndArray();
  }
  if (!t.global_indexes.empty()) {
    w.Key("GlobalSecondaryIndexes");
    w.StartArray();
    for (const store::SecondaryIndex& i : t.global_indexes) {
      w.StartObject();
      WriteIndexKeyAndProjection(w, i);
      w.Key("ProvisionedThroughput");
      WriteUnits(w, i.throughput);
      WriteOnDemand(w, i.on_demand);
      w.EndObject();
    }
    w.EndArray();
  }
  if (t.stream.enabled) {
    static constexpr std::string_view kViews[] = {"NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES",
                                                  "KEYS_ONLY"};
    w.Key("StreamDescription");
    w.StartObject();
    w.Key("StreamEnabled");
    w.Bool(true);
    w.Key("StreamViewType");
    Str(w, kViews[static_cast<int>(t.stream.view_type)]);
    w.EndObject();
  }
  if (t.ttl.status != store::TtlStatus::kDisabled) {
    w.Key("TimeToLiveDescription");
    w.StartObject();
    w.Key("TimeToLiveStatus");
    Str(w, TtlStatusText(t.ttl.status));
    w.Key("AttributeName");
    Str(w, t.ttl.attribute);
    w.EndObject();
  }
  if (t.sse.enabled) {
    w.Key("SSEDescription");
    WriteSseDescription(w, ctx, t.sse);
  }
  w.EndObject();
}

std::string BackupDescriptionResponse(const RequestContext& ctx, const BackupInfo& b,
                                      const TableInfo& table, std::string_view status) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  w.Key("BackupDescription");
  w.StartObject();
  w.Key("BackupDetails");
  WriteBackupDetails(w, ctx, b, status);
  w.Key("SourceTableDetails");
  WriteSourceTableDetails(w, ctx, b, table);
  w.Key("SourceTableFeatureDetails");
  WriteSourceTableFeatureDetails(w, ctx, table);
  w.EndObject();
  w.EndObject();
  return Json(buf);
}

// ==== CreateBackup ==========================================================================

Result<std::string> CreateBackup(Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(std::string table_name, ReadExistingTableName(ctx, body, "CreateBackup"));
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> name, GetOwnedString(body, "BackupName"));
  ConstraintErrors e;
  CheckName(e, "backupName", name);
  FDYNO_RETURN_IF_ERROR(e.ToStatus());
  const int64_t now_ms = s.clock->WallMillis();
  // Chosen once: after an ambiguous commit the retry finds the backup its earlier attempt
  // made, and never makes a second one.
  const std::string id = store::NewBackupId(now_ms);
  FDYNO_ASSIGN_OR_RETURN(
      BackupInfo created,
      kv::Run(*s.db, RunOptionsFor(ctx, s),
              [&](kv::Transaction& tx, const kv::Attempt& attempt) -> Result<BackupInfo> {
                if (attempt.maybe_committed) {
                  FDYNO_ASSIGN_OR_RETURN(std::optional<BackupInfo> mine, store::ReadBackup(tx, id));
                  if (mine) return std::move(*mine);
                }
                FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const TableInfo> t,
                                       s.catalog->Find(tx, CallerScope(ctx), table_name));
                if (!Settled(t)) {
                  return Error::Make(ErrorType::kTableNotFound, "Table not found: " + table_name);
                }
                FDYNO_ASSIGN_OR_RETURN(store::ItemCounts counts, store::ReadItemCounts(tx, *t));
                BackupInfo b = store::NewBackupRecord(*t, id, *name, store::BackupType::kUser,
                                                      now_ms, counts.table);
                store::StartBackup(tx, b, *t);
                return b;
              }));
  Wake(s);
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  w.Key("BackupDetails");
  WriteBackupDetails(w, ctx, created, StatusText(created.status));
  w.EndObject();
  return Json(buf);
}

// ==== DescribeBackup, DeleteBackup ==========================================================

Result<std::string> DescribeBackup(Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(BackupRef ref, ReadBackupArn(ctx, body, "DescribeBackup"));
  using Found = std::pair<BackupInfo, TableInfo>;
  FDYNO_ASSIGN_OR_RETURN(
      Found found, kv::Run(*s.db, RunOptionsFor(ctx, s, /*read_only=*/true),
                           [&](kv::Transaction& tx, const kv::Attempt&) -> Result<Found> {
                             FDYNO_ASSIGN_OR_RETURN(BackupInfo b, FindBackup(tx, ref));
                             FDYNO_ASSIGN_OR_RETURN(TableInfo t, store::ReadBackupTable(tx, b.id));
                             return Found{std::move(b), std::move(t)};
                           }));
  return BackupDescriptionResponse(ctx, found.first, found.second, StatusText(found.first.status));
}

Result<std::string> DeleteBackup(Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(BackupRef ref, ReadBackupArn(ctx, body, "DeleteBackup"));
  using Found = std::pair<BackupInfo, TableInfo>;
  std::optional<Found> deleted;  // what the latest attempt deleted
  FDYNO_ASSIGN_OR_RETURN(
      Found found,
      kv::Run(*s.db, RunOptionsFor(ctx, s),
              [&](kv::Transaction& tx, const kv::Attempt& attempt) -> Result<Found> {
                if (attempt.maybe_committed && deleted) {  // the earlier attempt's delete applied?
                  FDYNO_ASSIGN_OR_RETURN(std::optional<BackupInfo> still,
                                         store::ReadBackup(tx, ref.id));
                  if (!still) return *deleted;
                }
                FDYNO_ASSIGN_OR_RETURN(BackupInfo b, FindBackup(tx, ref));
                if (b.type == store::BackupType::kSystem) {
                  return Error::Validation(
                      "Invalid Request: User is not allowed to delete the system backup with "
                      "arn " +
                      ref.arn + ". It will automatically expire on " +
                      Iso8601Millis(b.created_ms + store::kSystemBackupRetentionMs));
                }
                if (b.status == store::BackupStatus::kCreating) {
                  return Error::Make(ErrorType::kBackupInUse,
                                     "Backup is being created: " + ref.arn);
                }
                FDYNO_ASSIGN_OR_RETURN(bool restoring, BeingRestored(tx, b));
                if (restoring) {
                  return Error::Make(ErrorType::kBackupInUse,
                                     "Backup is being used to restore table: " + ref.arn);
                }
                FDYNO_ASSIGN_OR_RETURN(TableInfo t, store::ReadBackupTable(tx, b.id));
                store::DeleteBackupRecord(tx, b.id);
                deleted = Found{std::move(b), std::move(t)};
                return *deleted;
              }));
  Wake(s);  // the worker removes the chunks
  return BackupDescriptionResponse(ctx, found.first, found.second, "DELETED");
}

// ==== ListBackups ===========================================================================

struct ListBackupsRequest {
  std::optional<std::string> table;
  int limit = kMaxListBackups;
  std::optional<int64_t> lower_ms;  // inclusive
  std::optional<int64_t> upper_ms;  // exclusive
  std::string after;                // ExclusiveStartBackupArn's id
  std::string type = "USER";
};

Result<ListBackupsRequest> ParseListBackups(const RequestContext& ctx, const Value& body) {
  ListBackupsRequest r;
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> table, GetString(body, "TableName"));
  FDYNO_ASSIGN_OR_RETURN(std::optional<int64_t> limit, GetInteger(body, "Limit"));
  FDYNO_ASSIGN_OR_RETURN(r.lower_ms, GetTimestampMs(body, "TimeRangeLowerBound"));
  FDYNO_ASSIGN_OR_RETURN(r.upper_ms, GetTimestampMs(body, "TimeRangeUpperBound"));
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> start,
                         GetOwnedString(body, "ExclusiveStartBackupArn"));
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> type, GetOwnedString(body, "BackupType"));
  if (table) {
    FDYNO_ASSIGN_OR_RETURN(std::string name, ResolveTableName(ctx, table, "ListBackups"));
    r.table = std::move(name);
  }
  ConstraintErrors e;
  if (limit) {
    e.MinValue("limit", *limit, 1);
    e.MaxValue("limit", *limit, kMaxListBackups);
  }
  if (start) {
    e.MinLength("exclusiveStartBackupArn", *start, 37);
    e.MaxLength("exclusiveStartBackupArn", *start, 1024);
  }
  if (type) e.Enum("backupType", *type, {"USER", "SYSTEM", "AWS_BACKUP", "ALL"});
  FDYNO_RETURN_IF_ERROR(e.ToStatus());
  if (r.lower_ms && r.upper_ms && *r.lower_ms > *r.upper_ms) {
    return Error::Validation(
        "One or more parameter values were invalid: Time range lower bound must be less than or "
        "equal to upper bound");
  }
  if (limit) r.limit = static_cast<int>(*limit);
  if (type) r.type = *type;
  if (start) {
    FDYNO_ASSIGN_OR_RETURN(BackupRef ref, ParseBackupArn(ctx, *start, "ListBackups"));
    if (ref.region != ctx.region) {
      return Error::Validation(
          "Invalid Request: The supplied ExclusiveStartBackupArn does not match the region");
    }
    r.after = ref.id;
  }
  return r;
}

bool Matches(const RequestContext& ctx, const ListBackupsRequest& r, const BackupInfo& b) {
  if (b.account != ctx.account_id || b.region != ctx.region) return false;
  if (r.table && b.table_name != *r.table) return false;
  if (r.lower_ms && b.created_ms < *r.lower_ms) return false;
  if (r.upper_ms && b.created_ms >= *r.upper_ms) return false;
  return r.type == "ALL" || r.type == TypeText(b.type);
}

Result<std::string> ListBackups(Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(ListBackupsRequest r, ParseListBackups(ctx, body));
  struct Page {
    std::vector<BackupInfo> backups;
    bool more = false;
  };
  FDYNO_ASSIGN_OR_RETURN(Page page,
                         kv::Run(*s.db, RunOptionsFor(ctx, s, /*read_only=*/true),
                                 [&](kv::Transaction& tx, const kv::Attempt&) -> Result<Page> {
                                   Page p;
                                   FDYNO_ASSIGN_OR_RETURN(std::vector<BackupInfo> all,
                                                          store::ListBackupRecords(tx, r.after, 0));
                                   for (BackupInfo& b : all) {
                                     if (!Matches(ctx, r, b)) continue;
                                     if (static_cast<int>(p.backups.size()) == r.limit) {
                                       p.more = true;
                                       break;
                                     }
                                     p.backups.push_back(std::move(b));
                                   }
                                   return p;
                                 }));
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  w.Key("BackupSummaries");
  w.StartArray();
  for (const BackupInfo& b : page.backups) {
    w.StartObject();
    WriteBackedUpTable(w, ctx, b);
    WriteBackupMembers(w, ctx, b, StatusText(b.status));
    w.EndObject();
  }
  w.EndArray();
  if (page.more) {
    w.Key("LastEvaluatedBackupArn");
    Str(w, BackupArn(ctx, page.backups.back().table_name, page.backups.back().id));
  }
  w.EndObject();
  return Json(buf);
}

// ==== RestoreTableFromBackup ================================================================

// DynamoDB restores one table from a backup at a time.
Status CheckNotRestoring(kv::Transaction& tx, const BackupInfo& b, const BackupRef& ref) {
  FDYNO_ASSIGN_OR_RETURN(bool restoring, BeingRestored(tx, b));
  if (!restoring) return Status::Ok();
  return Error::Make(ErrorType::kBackupInUse,
                     "Backup is being used to restore another table: " + ref.arn);
}

Result<std::string> RestoreTableFromBackup(Services& s, const RequestContext& ctx,
                                           const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(RestoreRequest r, ParseRestoreRequest(body));
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> backup_arn, GetOwnedString(body, "BackupArn"));
  ConstraintErrors e;
  e.NotNull("targetTableName", r.target.has_value());
  e.NotNull("backupArn", backup_arn.has_value());
  CheckOverrideConstraints(e, r);
  FDYNO_RETURN_IF_ERROR(e.ToStatus());
  // DynamoDB checks the target's name by hand, after the model's constraints (recorded in 2026
  // for an empty name); its pattern as the model words it.
  FDYNO_RETURN_IF_ERROR(CheckNameLengthByHand("TableName", *r.target));
  CheckName(e, "targetTableName", r.target);
  FDYNO_RETURN_IF_ERROR(e.ToStatus());
  FDYNO_ASSIGN_OR_RETURN(BackupRef ref, ParseBackupArn(ctx, *backup_arn, "RestoreTableFromBackup"));
  const int64_t now_ms = s.clock->WallMillis();
  const std::string uuid = store::NewTableUuid();
  FDYNO_ASSIGN_OR_RETURN(
      std::shared_ptr<const TableInfo> created,
      kv::Run(
          *s.db, RunOptionsFor(ctx, s),
          [&](kv::Transaction& tx,
              const kv::Attempt& attempt) -> Result<std::shared_ptr<const TableInfo>> {
            if (attempt.maybe_committed) {  // the table an earlier attempt made, if any
              FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const TableInfo> mine,
                                     s.catalog->FindCreated(tx, CallerScope(ctx), *r.target, uuid));
              if (mine) return mine;
            }
            FDYNO_ASSIGN_OR_RETURN(BackupInfo b, FindBackup(tx, ref));
            if (b.status == store::BackupStatus::kCreating) {
              return Error::Make(ErrorType::kBackupInUse, "Backup is being created: " + ref.arn);
            }
            FDYNO_RETURN_IF_ERROR(CheckNotRestoring(tx, b, ref));
            FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const TableInfo> existing,
                                   s.catalog->Find(tx, CallerScope(ctx), *r.target));
            if (existing) {
              return Error::Make(ErrorType::kTableAlreadyExists,
                                 "Table already exists: " + *r.target);
            }
            FDYNO_ASSIGN_OR_RETURN(TableInfo source, store::ReadBackupTable(tx, b.id));
            FDYNO_ASSIGN_OR_RETURN(TableInfo plan, PlanRestoredTable(source, r, now_ms, "backup"));
            plan.account = ctx.account_id;
            plan.region = ctx.region;
            plan.restore = store::RestoreSummary{b.id, b.table_name, b.created_ms, true};
            FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const TableInfo> t,
                                   s.catalog->Create(tx, std::move(plan), {}, uuid));
            store::RestoreJob job;
            job.table_id = t->id;
            job.account = t->account;
            job.region = t->region;
            job.table_name = t->name;
            job.backup_id = b.id;
            job.chunks = b.progress.chunks;
            tx.Set(store::RestoreJobKey(t->id), store::EncodeRestoreJob(job));
            return t;
          }));
  Wake(s);
  return DescriptionResponse("TableDescription", ctx, *created, store::TableStatus::kCreating);
}

}  // namespace

void RegisterBackupOperations(OperationRegistry& registry, const Services& services) {
  auto s = std::make_shared<Services>(services);
  registry.Register("CreateBackup", Bind(s, &CreateBackup));
  registry.Register("DescribeBackup", Bind(s, &DescribeBackup));
  registry.Register("ListBackups", Bind(s, &ListBackups));
  registry.Register("DeleteBackup", Bind(s, &DeleteBackup));
  registry.Register("RestoreTableFromBackup", Bind(s, &RestoreTableFromBackup));
}

}  // namespace fdyno::api
