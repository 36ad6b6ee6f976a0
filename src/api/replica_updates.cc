#include "api/replica_updates.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "api/json_util.h"
#include "api/run_options.h"
#include "api/table_arn.h"
#include "api/table_render.h"
#include "api/table_rules.h"
#include "base/regions.h"
#include "kv/run.h"
#include "store/replication.h"
#include "store/streams.h"

namespace fdyno::api::tables {
namespace {

using rapidjson::Value;
using store::TableInfo;

// How long a region that filled a new replica may not leave the group (DynamoDB's rule).
constexpr int64_t kSourceHoldMs = 24 * 3600 * 1000;

struct ReplicaAction {
  enum class Kind { kCreate, kUpdate, kDelete } kind;
  std::string region;
  std::optional<store::TableClass> table_class;  // TableClassOverride
  std::optional<std::string> kms_key;            // a Create's KMSMasterKeyId
};

Error NotSupported(const std::string& region) {
  std::string regions;
  for (std::string_view r : kAwsRegions) regions += (regions.empty() ? "" : ", ") + std::string(r);
  return Error::Validation("Region " + region +
                           " is not supported. The latest version of global tables are only "
                           "supported in the following regions: [" +
                           regions + "].");
}

Error KeyForEachReplica() { return Invalid("KMSMasterKeyId must be specified for each replica."); }

// One action's settings. A replica's ProvisionedThroughputOverride is ignored at Create on an
// on-demand table and refused at Update, as DynamoDB does (every global table here is
// on-demand); the settings fdyno does not keep per replica are refused.
Status ReadSettings(const Value& action, ReplicaAction& a) {
  if (a.kind == ReplicaAction::Kind::kUpdate && Member(action, "KMSMasterKeyId") != nullptr) {
    return KeyForEachReplica();
  }
  if (a.kind == ReplicaAction::Kind::kUpdate &&
      Member(action, "ProvisionedThroughputOverride") != nullptr) {
    return Error::Validation(
        "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is "
        "PAY_PER_REQUEST");
  }
  for (const char* setting : {"OnDemandThroughputOverride", "GlobalSecondaryIndexes"}) {
    if (Member(action, setting) != nullptr) {
      return Invalid(std::string(setting) + " of a replica is not supported by this server");
    }
  }
  FDYNO_ASSIGN_OR_RETURN(auto key, GetOwnedString(action, "KMSMasterKeyId"));
  a.kms_key = std::move(key);
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> table_class,
                         GetString(action, "TableClassOverride"));
  if (table_class) {
    a.table_class = ParseTableClass(*table_class);
    if (!a.table_class) return InvalidTableClass();
  }
  if (a.kind == ReplicaAction::Kind::kUpdate && !a.table_class) {
    return Error::Validation(
        "There are no actions specified in the Replica Update Action of the request.");
  }
  return Status::Ok();
}

Result<ReplicaAction> ParseAction(const Value& u) {
  ReplicaAction a{ReplicaAction::Kind::kDelete, {}, std::nullopt, std::nullopt};
  const char* member = "Delete";
  if (Member(u, "Create") != nullptr) {
    a.kind = ReplicaAction::Kind::kCreate;
    member = "Create";
  } else if (Member(u, "Update") != nullptr) {
    a.kind = ReplicaAction::Kind::kUpdate;
    member = "Update";
  }
  const Value& action = *Member(u, member);
  if (!action.IsObject()) return Invalid("ReplicaUpdates." + std::string(member));
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> region, GetString(action, "RegionName"));
  if (!region || region->empty()) return Invalid("RegionName is required");
  a.region = std::string(*region);
  if (!IsAwsRegion(a.region)) return NotSupported(a.region);
  FDYNO_RETURN_IF_ERROR(ReadSettings(action, a));
  return a;
}

// The request's actions: identical Creates of one region count once; one Create or Delete per
// request (DynamoDB's rule for a group of eventual consistency).
Result<std::vector<ReplicaAction>> ParseActions(const Value& updates) {
  std::vector<ReplicaAction> actions;
  size_t creates_and_deletes = 0;
  for (const Value& u : updates.GetArray()) {
    FDYNO_ASSIGN_OR_RETURN(ReplicaAction a, ParseAction(u));
    const bool same = std::any_of(actions.begin(), actions.end(), [&a](const ReplicaAction& b) {
      return b.kind == ReplicaAction::Kind::kCreate && a.kind == b.kind && a.region == b.region &&
             a.table_class == b.table_class && a.kms_key == b.kms_key;
    });
    if (same) continue;
    if (a.kind != ReplicaAction::Kind::kUpdate && ++creates_and_deletes > 1) {
      return Error::Validation(
          "Update table operation with more than one create or delete replica actions not "
          "allowed");
    }
    actions.push_back(std::move(a));
  }
  return actions;
}

// Replica work in progress: a replica being added refuses every replica action (its own
// Delete is in use), anything else in flight makes the table in use.
Status CheckNothingInFlight(const TableInfo& t, const ReplicaAction& a) {
  for (const store::Replica& r : t.replicas) {
    if (r.status != store::ReplicaStatus::kCreating) continue;
    if (a.kind == ReplicaAction::Kind::kDelete && a.region == r.region) return CheckNotUpdating(t);
    return Error::Validation(
        "Create/Update/Delete of replica is not allowed while the replica is being added to "
        "table with name: \u2018" +
        t.name + "\u2019 in region: \u2018" + r.region + "\u2019.");
  }
  return CheckNotUpdating(t);
}

Status CheckAction(const TableInfo& t, bool exists_there, const ReplicaAction& a) {
  FDYNO_RETURN_IF_ERROR(CheckNothingInFlight(t, a));
  if (a.region == t.region && a.kind != ReplicaAction::Kind::kUpdate) {
    return Error::Validation(
        "Cannot add or delete the local region through ReplicaUpdates. Use CreateTable, "
        "DeleteTable, or UpdateTable as required.");
  }
  const store::Replica* member = t.FindReplica(a.region);
  if (a.kind == ReplicaAction::Kind::kCreate) {
    // fdyno does not scale capacity, so a provisioned table's writes are never auto scaled.
    if (t.billing_mode == store::BillingMode::kProvisioned) {
      return Error::Validation(
          "Table write capacity should either be Pay-Per-Request or AutoScaled.");
    }
    if (t.sse.enabled != a.kms_key.has_value()) return KeyForEachReplica();
    if (member != nullptr || exists_there) {
      return Error::Validation("Failed to create a the new replica of table with name: \u2018" +
                               t.name +
                               "\u2019 because one or more replicas already existed as tables.");
    }
    return Status::Ok();
  }
  if (member == nullptr) {
    return Error::Validation(
        "Update global table operation failed because one or more replicas were not part of the "
        "global table. Please retry the request without these replicas: [" +
        a.region + "].");
  }
  return Status::Ok();
}

// The new replica of `t` in `a.region`: the same schema, indexes, stream and TTL; its own
// deletion protection, recovery, insights, destinations and policies (none yet).
TableInfo ReplicaPlan(const TableInfo& t, const ReplicaAction& a, int64_t now_ms) {
  TableInfo r = t;
  r.region = a.region;
  r.status = store::TableStatus::kCreating;
  r.deletion_protection = false;
  r.deletion_protection_ms = 0;
  r.pitr = {};
  r.insights = {};
  r.kinesis.clear();
  r.has_policies = false;
  r.restore.reset();
  r.table_class_changes_ms.clear();
  if (a.table_class) {
    r.table_class = *a.table_class;
    r.table_class_set = true;
  }
  if (a.kms_key) r.sse.kms_master_key_id = *a.kms_key;
  r.stream.stream_id = 0;
  r.stream.label = StreamLabel(now_ms);
  r.replicas.clear();
  return r;
}

void ApplyTableClass(TableInfo& t, store::TableClass c, int64_t now_ms) {
  t.table_class = c;
  t.table_class_set = true;
  t.table_class_changes_ms.push_back(now_ms);
  if (t.table_class_changes_ms.size() > store::kTableClassChangesKept) {
    t.table_class_changes_ms.erase(t.table_class_changes_ms.begin());
  }
}

struct Change {
  const std::vector<ReplicaAction>& actions;
  const std::vector<std::string>& uuids;  // one per Create, in order
  Services& s;
  int64_t now_ms;
};

// The records of every replica of `t`'s group as of tx (`t` alone for a regional table).
Result<std::vector<TableInfo>> GroupRecords(kv::Transaction& tx, Services& s, const TableInfo& t) {
  if (t.replicas.empty()) return std::vector<TableInfo>{t};
  std::vector<TableInfo> records;
  for (const store::Replica& r : t.replicas) {
    FDYNO_ASSIGN_OR_RETURN(auto found, s.catalog->Find(tx, {t.account, r.region}, t.name));
    if (found && found->id == r.table_id) records.push_back(*found);
  }
  return records;
}

// Writes the change to every record of the group; returns `t`'s record as written.
Result<TableInfo> WriteChange(kv::Transaction& tx, const Change& c, const TableInfo& current) {
  TableInfo t = current;
  if (!t.stream.enabled) {
    // A global table's changes are in its stream: DynamoDB enables one when it has none, and
    // its new replicas have one like it.
    t.stream.enabled = true;
    t.stream.view_type = store::StreamViewType::kNewAndOldImages;
    t.stream.label = NextStreamLabel(current.stream.label, c.now_ms);
  }
  FDYNO_ASSIGN_OR_RETURN(std::vector<TableInfo> records, GroupRecords(tx, c.s, current));
  std::vector<store::Replica> list = t.replicas;
  if (list.empty()) list.push_back({t.region, t.id, store::ReplicaStatus::kActive, {}, 0});
  size_t created = 0;
  bool updating = false;
  for (const ReplicaAction& a : c.actions) {
    if (a.kind == ReplicaAction::Kind::kCreate) {
      FDYNO_ASSIGN_OR_RETURN(
          auto made, c.s.catalog->Create(tx, ReplicaPlan(t, a, c.now_ms), {}, c.uuids[created++]));
      records.push_back(*made);
      list.push_back({a.region, made->id, store::ReplicaStatus::kCreating, t.region, c.now_ms});
      updating = true;
    } else if (a.kind == ReplicaAction::Kind::kDelete) {
      for (store::Replica& r : list) {
        if (r.region == a.region) r.status = store::ReplicaStatus::kDeleting;
      }
      updating = true;
    } else {
      for (TableInfo& rec : records) {
        if (rec.region == a.region) ApplyTableClass(rec, *a.table_class, c.now_ms);
      }
    }
  }
  TableInfo mine;
  for (TableInfo& rec : records) {
    const TableInfo before = rec;
    rec.replicas = list;
    if (rec.id == t.id) {
      rec.stream = t.stream;
      if (updating) rec.status = store::TableStatus::kUpdating;
    }
    const bool created_now = before.replicas.empty() && rec.id != t.id;
    FDYNO_RETURN_IF_ERROR(
        store::SyncStream(tx, created_now ? nullptr : &before, &rec, c.s.stream_slots, c.now_ms));
    FDYNO_RETURN_IF_ERROR(c.s.catalog->Update(tx, rec));
    if (rec.id == t.id) mine = rec;
  }
  return mine;
}

// Checks every action against `t` and the tables of its account and name in their regions.
Status CheckActions(kv::Transaction& tx, Services& s, const TableInfo& t,
                    const std::vector<ReplicaAction>& actions, int64_t now_ms) {
  FDYNO_ASSIGN_OR_RETURN(std::vector<TableInfo> records, GroupRecords(tx, s, t));
  for (const ReplicaAction& a : actions) {
    FDYNO_ASSIGN_OR_RETURN(auto there, s.catalog->Find(tx, {t.account, a.region}, t.name));
    FDYNO_RETURN_IF_ERROR(CheckAction(t, there != nullptr, a));
    if (a.kind != ReplicaAction::Kind::kDelete) continue;
    for (const TableInfo& rec : records) {
      if (rec.region == a.region) FDYNO_RETURN_IF_ERROR(CheckReplicaMayLeave(rec, now_ms));
    }
  }
  return Status::Ok();
}

}  // namespace

Status CheckReplicaMayLeave(const TableInfo& replica, int64_t now_ms) {
  if (replica.deletion_protection) {
    return Error::Validation("Cannot delete table " + replica.name + " in region " +
                             replica.region +
                             " because it has deletion protection enabled. Disable deletion "
                             "protection first.");
  }
  for (const store::Replica& r : replica.replicas) {
    if (r.filled_from == replica.region && now_ms - r.added_ms < kSourceHoldMs) {
      return Error::Validation(
          "Replica cannot be deleted because it has acted as a source region for new replica(s) "
          "being added to the table in the last 24 hours.");
    }
  }
  return Status::Ok();
}

Result<std::string> UpdateReplicas(Services& s, const RequestContext& ctx, const std::string& name,
                                   const Value& updates,
                                   std::optional<std::string_view> consistency) {
  FDYNO_ASSIGN_OR_RETURN(std::vector<ReplicaAction> actions, ParseActions(updates));
  if (consistency && *consistency == "STRONG") {
    return Invalid("MultiRegionConsistency STRONG is not supported by this server");
  }
  std::vector<std::string> uuids;
  for (const ReplicaAction& a : actions) {
    if (a.kind == ReplicaAction::Kind::kCreate) uuids.push_back(store::NewTableUuid());
  }
  const int64_t now_ms = s.clock->WallMillis();
  std::optional<TableInfo> written;  // what the latest attempt wrote
  TableInfo before;                  // the table it changed
  FDYNO_ASSIGN_OR_RETURN(
      TableInfo updated,
      kv::Run(
          *s.db, RunOptionsFor(ctx, s),
          [&](kv::Transaction& tx, const kv::Attempt& attempt) -> Result<TableInfo> {
            FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const TableInfo> t,
                                   s.catalog->Find(tx, CallerScope(ctx), name));
            if (!Settled(t)) return TableNotFound(name);
            // After an ambiguous commit, the record the earlier attempt wrote is its
            // success (the change again would fail on its own effect).
            if (attempt.maybe_committed && written &&
                store::EncodeTableInfo(*t) == store::EncodeTableInfo(*written)) {
              return *written;
            }
            FDYNO_RETURN_IF_ERROR(CheckActions(tx, s, *t, actions, now_ms));
            FDYNO_ASSIGN_OR_RETURN(written, WriteChange(tx, Change{actions, uuids, s, now_ms}, *t));
            before = *t;
            return *written;
          }));
  for (const ReplicaAction& a : actions) {
    const char* what = a.kind == ReplicaAction::Kind::kCreate   ? "creating"
                       : a.kind == ReplicaAction::Kind::kDelete ? "deleting"
                                                                : "updating";
    spdlog::info("table {} ({}): {} its replica in {}", name, ctx.region, what, a.region);
  }
  // DynamoDB's response shows the replicas as they were (a new one not yet, one being deleted
  // still ACTIVE), the table UPDATING.
  TableInfo shown = updated;
  shown.replicas = before.replicas;
  shown.table_class = before.table_class;
  shown.table_class_set = before.table_class_set;
  shown.table_class_changes_ms = before.table_class_changes_ms;
  ResponseView view;
  view.global_table = true;
  return DescriptionResponse("TableDescription", ctx, shown, store::TableStatus::kUpdating, nullptr,
                             view);
}

}  // namespace fdyno::api::tables
