#include "api/pitr_ops.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <memory>
#include <optional>
#include <string>

#include "api/json_util.h"
#include "api/request_model.h"
#include "api/restore_request.h"
#include "api/run_options.h"
#include "api/table_arn.h"
#include "api/table_render.h"
#include "kv/run.h"
#include "store/pitr.h"

namespace fdyno::api {
namespace {

using rapidjson::Value;
using store::TableInfo;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

constexpr int64_t kMaxRecoveryDays = 35;

Error NotFound(std::string_view name) {
  return Error::Make(ErrorType::kTableNotFound, "Table not found: " + std::string(name));
}

// A table's recovery state as DescribeContinuousBackups shows it.
struct Described {
  store::PitrSettings pitr;
  store::RestorableWindow window;
};

// The state of `table` in tx: its settings and, when enabled, its window now.
Result<Described> Describe(kv::Transaction& tx, const TableInfo& table, int64_t now_ms) {
  Described d{table.pitr, {}};
  if (!table.pitr.enabled) return d;
  FDYNO_ASSIGN_OR_RETURN(int64_t trimmed,
                         store::ReadHistoryTrimPoint(tx, table.id, table.pitr.epoch));
  d.window = store::WindowOf(table.pitr, trimmed, now_ms);
  return d;
}

std::string DescriptionResponse(const Described& d) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  w.Key("ContinuousBackupsDescription");
  w.StartObject();
  // Continuous backups are always on (DynamoDB: ENABLED on every table from its creation).
  w.Key("ContinuousBackupsStatus");
  w.String("ENABLED");
  w.Key("PointInTimeRecoveryDescription");
  w.StartObject();
  w.Key("PointInTimeRecoveryStatus");
  w.String(d.pitr.enabled ? "ENABLED" : "DISABLED");
  if (d.pitr.enabled) {
    w.Key("RecoveryPeriodInDays");
    w.Int64(d.pitr.recovery_days);
    w.Key("EarliestRestorableDateTime");
    WriteSeconds(w, d.window.earliest_ms);
    w.Key("LatestRestorableDateTime");
    WriteSeconds(w, d.window.latest_ms);
  }
  w.EndObject();
  w.EndObject();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

// ==== DescribeContinuousBackups, UpdateContinuousBackups ====================================

Result<std::string> DescribeContinuousBackups(Services& s, const RequestContext& ctx,
                                              const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(std::string name,
                         ReadExistingTableName(ctx, body, "DescribeContinuousBackups"));
  FDYNO_ASSIGN_OR_RETURN(
      Described d, kv::Run(*s.db, RunOptionsFor(ctx, s, /*read_only=*/true),
                           [&](kv::Transaction& tx, const kv::Attempt&) -> Result<Described> {
                             FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const TableInfo> t,
                                                    s.catalog->Find(tx, CallerScope(ctx), name));
                             if (!Settled(t)) return NotFound(name);
                             return Describe(tx, *t, s.clock->WallMillis());
                           }));
  return DescriptionResponse(d);
}

struct UpdateRequest {
  std::string table;
  bool enabled = false;
  std::optional<int64_t> days;
};

struct UpdateMembers {
  const Value* spec = nullptr;
  const Value* enabled = nullptr;
  const Value* days = nullptr;
};
using M = UpdateMembers;
constexpr request::Read<M> kSpecReads[] = {
    {"PointInTimeRecoveryEnabled", &M::enabled, JsonShape::kBoolean},
    {"RecoveryPeriodInDays", &M::days, JsonShape::kInteger},
};
constexpr request::Read<M> kUpdateReads[] = {
    request::Nested("PointInTimeRecoverySpecification", &M::spec,
                    "PointInTimeRecoverySpecification", kSpecReads),
};
constexpr std::string_view kDays = "pointInTimeRecoverySpecification.recoveryPeriodInDays";
constexpr request::Check<M> kUpdateChecks[] = {
    request::NotNull(&M::spec, "pointInTimeRecoverySpecification"),
    request::In(&M::spec,
                request::NotNull(&M::enabled,
                                 "pointInTimeRecoverySpecification.pointInTimeRecoveryEnabled")),
    request::Bound(&M::days, kDays, request::Rule::kMinValue, 1),
    request::Bound(&M::days, kDays, request::Rule::kMaxValue, kMaxRecoveryDays),
};

Result<UpdateRequest> ParseUpdate(const RequestContext& ctx, const Value& body) {
  UpdateRequest r;
  FDYNO_ASSIGN_OR_RETURN(r.table, ReadExistingTableName(ctx, body, "UpdateContinuousBackups"));
  UpdateMembers m;
  FDYNO_RETURN_IF_ERROR(request::ReadRows<M>(body, kUpdateReads, m));
  FDYNO_RETURN_IF_ERROR(request::CheckMembers<M>(kUpdateChecks, m));
  r.days = request::Number(m.days);
  r.enabled = *request::Flag(m.enabled);
  if (!r.enabled && r.days) {
    return Error::Validation(
        "Invalid Request: Cannot specify RecoveryPeriodInDays when disabling point-in-time "
        "recovery.");
  }
  return r;
}

Result<std::string> UpdateContinuousBackups(Services& s, const RequestContext& ctx,
                                            const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(UpdateRequest r, ParseUpdate(ctx, body));
  // The body is idempotent: a retry after an ambiguous commit finds the settings its earlier
  // attempt wrote, changes nothing, and answers them.
  FDYNO_ASSIGN_OR_RETURN(
      Described d, kv::Run(*s.db, RunOptionsFor(ctx, s),
                           [&](kv::Transaction& tx, const kv::Attempt&) -> Result<Described> {
                             FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const TableInfo> t,
                                                    s.catalog->Find(tx, CallerScope(ctx), r.table));
                             if (!Settled(t)) return NotFound(r.table);
                             const int64_t now_ms = s.clock->WallMillis();
                             store::PitrSettings next = t->pitr;
                             if (r.enabled) {
                               if (!next.enabled) {
                                 next.enabled = true;
                                 ++next.epoch;  // a new history: the window starts now
                                 next.since_ms = now_ms;
                               }
                               next.recovery_days = r.days.value_or(kMaxRecoveryDays);
                             } else {
                               next.enabled = false;
                             }
                             if (next == t->pitr) return Describe(tx, *t, now_ms);
                             TableInfo updated = *t;
                             updated.pitr = next;
                             FDYNO_RETURN_IF_ERROR(s.catalog->Update(tx, updated));
                             return Describe(tx, updated, now_ms);
                           }));
  if (s.wake_backups && !r.enabled) s.wake_backups();  // the worker drops the history
  return DescriptionResponse(d);
}

// ==== RestoreTableToPointInTime =============================================================

struct PitrRestoreRequest {
  RestoreRequest restore;  // target and overrides
  std::string source;      // the source table's name (from SourceTableName or SourceTableArn)
  bool by_arn = false;     // named by SourceTableArn
  std::optional<int64_t> time_ms;
  bool latest = false;
};

Result<PitrRestoreRequest> ParsePitrRestore(const RequestContext& ctx, const Value& body) {
  PitrRestoreRequest r;
  FDYNO_ASSIGN_OR_RETURN(r.restore, ParseRestoreRequest(body));
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> name, GetOwnedString(body, "SourceTableName"));
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> arn, GetOwnedString(body, "SourceTableArn"));
  FDYNO_ASSIGN_OR_RETURN(std::optional<bool> latest, GetBool(body, "UseLatestRestorableTime"));
  FDYNO_ASSIGN_OR_RETURN(r.time_ms, GetTimestampMs(body, "RestoreDateTime"));
  ConstraintErrors e;
  if (arn) {
    e.MinLength("sourceTableArn", *arn, 1);
    e.MaxLength("sourceTableArn", *arn, 1024);
  }
  if (name) {
    e.MinLength("sourceTableName", *name, 3);
    e.MaxLength("sourceTableName", *name, 255);
    e.Pattern("sourceTableName", *name, IsValidTableNameChars(*name), "[a-zA-Z0-9_.-]+");
  }
  CheckName(e, "targetTableName", r.restore.target);
  CheckOverrideConstraints(e, r.restore);
  FDYNO_RETURN_IF_ERROR(e.ToStatus());
  if (name.has_value() == arn.has_value()) {
    return Error::Validation("Must provide exactly one of: sourceTableArn, sourceTableName");
  }
  r.latest = latest.value_or(false);
  if (r.latest == r.time_ms.has_value()) {
    return Error::Validation(
        "Invalid Request: Either one of RestoreDateTime or UseLatestRestorableTime must be "
        "specified, but not both");
  }
  if (arn) {
    FDYNO_ASSIGN_OR_RETURN(ArnTarget target, ParseTableArn(ctx, *arn, "RestoreTableToPointInTime"));
    r.source = std::move(target.table);
    r.by_arn = true;
  } else {
    r.source = *name;
  }
  return r;
}

Result<std::string> RestoreTableToPointInTime(Services& s, const RequestContext& ctx,
                                              const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(PitrRestoreRequest r, ParsePitrRestore(ctx, body));
  const std::string& target_name = *r.restore.target;
  const std::string uuid = store::NewTableUuid();  // chosen once: see Catalog::FindCreated
  FDYNO_ASSIGN_OR_RETURN(
      std::shared_ptr<const TableInfo> created,
      kv::Run(*s.db, RunOptionsFor(ctx, s),
              [&](kv::Transaction& tx,
                  const kv::Attempt& attempt) -> Result<std::shared_ptr<const TableInfo>> {
                if (attempt.maybe_committed) {  // the table an earlier attempt made, if any
                  FDYNO_ASSIGN_OR_RETURN(
                      std::shared_ptr<const TableInfo> mine,
                      s.catalog->FindCreated(tx, CallerScope(ctx), target_name, uuid));
                  if (mine) return mine;
                }
                FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const TableInfo> source,
                                       s.catalog->Find(tx, CallerScope(ctx), r.source));
                // DynamoDB's text names the table only when given its name.
                if (!source && r.by_arn) {
                  return Error::Make(ErrorType::kTableNotFound, "Table not found");
                }
                if (!source) return NotFound(r.source);
                if (!source->pitr.enabled) {
                  return Error::Make(
                      ErrorType::kPointInTimeRecoveryUnavailable,
                      "Point in time recovery is not enabled for table '" + r.source + "'");
                }
                const int64_t now_ms = s.clock->WallMillis();
                // The trim point is a conflicting read: a trim that would remove what this
                // restore needs conflicts with it (and, once committed, is seen here).
                FDYNO_ASSIGN_OR_RETURN(Described d, Describe(tx, *source, now_ms));
                const int64_t time_ms = r.latest ? d.window.latest_ms : *r.time_ms;
                if (time_ms < d.window.earliest_ms || time_ms > d.window.latest_ms) {
                  return Error::Make(ErrorType::kInvalidRestoreTime,
                                     "Restore time must be between EarliestRestorableDateTime "
                                     "and LatestRestorableDateTime");
                }
                FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const TableInfo> existing,
                                       s.catalog->Find(tx, CallerScope(ctx), target_name));
                if (existing) {
                  return Error::Make(ErrorType::kTableAlreadyExists,
                                     "Table already exists: " + target_name);
                }
                FDYNO_ASSIGN_OR_RETURN(
                    TableInfo plan, PlanRestoredTable(*source, r.restore, now_ms, "source table"));
                plan.account = ctx.account_id;
                plan.region = ctx.region;
                plan.restore = store::RestoreSummary{"", source->name, time_ms, true};
                FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const TableInfo> t,
                                       s.catalog->Create(tx, std::move(plan), {}, uuid));
                store::PitrRestoreJob job;
                job.table_id = t->id;
                job.account = t->account;
                job.region = t->region;
                job.table_name = t->name;
                job.source_id = source->id;
                job.source_name = source->name;
                job.epoch = source->pitr.epoch;
                job.time_ms = time_ms;
                tx.Set(store::PitrRestoreJobKey(t->id), store::EncodePitrRestoreJob(job));
                return t;
              }));
  if (s.wake_backups) s.wake_backups();
  return DescriptionResponse("TableDescription", ctx, *created, store::TableStatus::kCreating);
}

}  // namespace

void RegisterPitrOperations(OperationRegistry& registry, const Services& services) {
  auto s = std::make_shared<Services>(services);
  registry.Register("DescribeContinuousBackups", Bind(s, &DescribeContinuousBackups));
  registry.Register("UpdateContinuousBackups", Bind(s, &UpdateContinuousBackups));
  registry.Register("RestoreTableToPointInTime", Bind(s, &RestoreTableToPointInTime));
}

}  // namespace fdyno::api
