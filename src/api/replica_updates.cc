#include "api/replica_updates.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "api/json_util.h"
#include "api/run_options.h"
#include "api/table_arn.h"
#include "api/table_render.h"
#include "api/table_rules.h"
#include "kv/run.h"
#include "store/replication.h"
#include "store/streams.h"

namespace fdyno::api::tables {
namespace {

using rapidjson::Value;
using store::TableInfo;

struct ReplicaAction {
  enum class Kind { kCreate, kUpdate, kDelete } kind;
  std::string region;
  std::optional<store::TableClass> table_class;  // TableClassOverride
};

// Replica settings fdyno does not keep per replica: refused rather than stored unhonoured.
constexpr const char* kUnsupportedSettings[] = {"KMSMasterKeyId", "ProvisionedThroughputOverride",
                                                "OnDemandThroughputOverride",
                                                "GlobalSecondaryIndexes"};

Result<ReplicaAction> ParseAction(const Value& u) {
  ReplicaAction a{ReplicaAction::Kind::kDelete, {}, std::nullopt};
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
  for (const char* setting : kUnsupportedSettings) {
    if (Member(action, setting) != nullptr) {
      return Invalid(std::string(setting) + " of a replica is not supported by this server");
    }
  }
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> table_class,
                         GetString(action, "TableClassOverride"));
  if (table_class) {
    a.table_class = ParseTableClass(*table_class);
    if (!a.table_class) return InvalidTableClass();
  }
  if (a.kind == ReplicaAction::Kind::kUpdate && !a.table_class) {
    return Invalid("No replica setting to update in region: " + a.region);
  }
  return a;
}

Result<std::vector<ReplicaAction>> ParseActions(const Value& updates) {
  std::vector<ReplicaAction> actions;
  std::set<std::string> regions;
  for (const Value& u : updates.GetArray()) {
    FDYNO_ASSIGN_OR_RETURN(ReplicaAction a, ParseAction(u));
    if (!regions.insert(a.region).second) {
      return Invalid("Only one replica update per region is allowed: " + a.region);
    }
    actions.push_back(std::move(a));
  }
  return actions;
}

Status CheckAction(const RequestContext& ctx, const TableInfo& t, const ReplicaAction& a) {
  if (a.region == t.region && a.kind != ReplicaAction::Kind::kUpdate) {
    return Error::Validation(
        "Cannot add or delete the local region through ReplicaUpdates. Use CreateTable, "
        "DeleteTable, or UpdateTable as required.");
  }
  if (!IsKnownRegion(ctx, a.region)) return Invalid("Invalid region: " + a.region);
  const bool exists = t.FindReplica(a.region) != nullptr;
  if (a.kind == ReplicaAction::Kind::kCreate && exists) {
    return Invalid("A replica already exists in region: " + a.region);
  }
  if (a.kind != ReplicaAction::Kind::kCreate && !exists) {
    return Invalid("No replica exists in region: " + a.region);
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
  std::vector<TableInfo> records;
  std::vector<store::Replica> list = t.replicas;
  if (list.empty()) {
    records.push_back(current);
    list.push_back({t.region, t.id, store::ReplicaStatus::kActive, {}});
  } else {
    for (const store::Replica& r : t.replicas) {
      FDYNO_ASSIGN_OR_RETURN(auto found, c.s.catalog->Find(tx, {t.account, r.region}, t.name));
      if (found && found->id == r.table_id) records.push_back(*found);
    }
  }
  size_t created = 0;
  bool updating = false;
  for (const ReplicaAction& a : c.actions) {
    if (a.kind == ReplicaAction::Kind::kCreate) {
      FDYNO_ASSIGN_OR_RETURN(
          auto made, c.s.catalog->Create(tx, ReplicaPlan(t, a, c.now_ms), {}, c.uuids[created++]));
      records.push_back(*made);
      list.push_back({a.region, made->id, store::ReplicaStatus::kCreating, t.region});
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
  std::sort(list.begin(), list.end(),
            [](const store::Replica& a, const store::Replica& b) { return a.region < b.region; });
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

}  // namespace

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
            FDYNO_RETURN_IF_ERROR(CheckNotUpdating(*t));
            for (const ReplicaAction& a : actions) {
              FDYNO_RETURN_IF_ERROR(CheckAction(ctx, *t, a));
            }
            FDYNO_ASSIGN_OR_RETURN(written, WriteChange(tx, Change{actions, uuids, s, now_ms}, *t));
            return *written;
          }));
  for (const ReplicaAction& a : actions) {
    const char* what = a.kind == ReplicaAction::Kind::kCreate   ? "creating"
                       : a.kind == ReplicaAction::Kind::kDelete ? "deleting"
                                                                : "updating";
    spdlog::info("table {} ({}): {} its replica in {}", name, ctx.region, what, a.region);
  }
  return DescriptionResponse("TableDescription", ctx, updated, updated.status);
}

}  // namespace fdyno::api::tables
