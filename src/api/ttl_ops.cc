#include "api/ttl_ops.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <memory>
#include <optional>
#include <string>

#include "api/json_util.h"
#include "api/request_model.h"
#include "api/run_options.h"
#include "api/table_arn.h"
#include "api/table_read.h"
#include "kv/run.h"
#include "store/catalog.h"
#include "store/replication.h"
#include "store/ttl.h"

namespace fdyno::api {

std::string_view TtlStatusText(store::TtlStatus status) {
  switch (status) {
    case store::TtlStatus::kDisabled:
      return "DISABLED";
    case store::TtlStatus::kEnabling:
      // DynamoDB reports ENABLED from the call on; fdyno's backfill of the expiry index for the
      // items that existed (store/ttl.h) is its own affair.
      return "ENABLED";
    case store::TtlStatus::kEnabled:
      return "ENABLED";
    case store::TtlStatus::kDisabling:
      return "DISABLING";
  }
  return "DISABLED";
}

namespace {

using rapidjson::Value;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

struct TtlRequest {
  std::string table;
  bool enabled = false;
  std::string attribute;
};

struct TtlMembers {
  const Value* spec = nullptr;
  const Value* enabled = nullptr;
  const Value* attribute = nullptr;
};
using M = TtlMembers;
constexpr request::Read<M> kSpecReads[] = {
    {"Enabled", &M::enabled, JsonShape::kBoolean},
    {"AttributeName", &M::attribute, JsonShape::kString},
};
constexpr request::Read<M> kReads[] = {
    request::Nested("TimeToLiveSpecification", &M::spec, "TimeToLiveSpecification", kSpecReads),
};
// DynamoDB reports the attribute name before Enabled.
constexpr request::Check<M> kChecks[] = {
    request::NotNull(&M::spec, "timeToLiveSpecification"),
    request::In(&M::spec, request::NotNull(&M::attribute, "timeToLiveSpecification.attributeName")),
    request::Bound(&M::attribute, "timeToLiveSpecification.attributeName",
                   request::Rule::kMinLength, 1),
    request::Bound(&M::attribute, "timeToLiveSpecification.attributeName",
                   request::Rule::kMaxLength, 255),
    request::In(&M::spec, request::NotNull(&M::enabled, "timeToLiveSpecification.enabled")),
};

Result<TtlRequest> ParseUpdateTimeToLive(const RequestContext& ctx, const Value& body) {
  TtlRequest r;
  FDYNO_ASSIGN_OR_RETURN(r.table, ReadExistingTableName(ctx, body, "UpdateTimeToLive"));
  TtlMembers m;
  FDYNO_RETURN_IF_ERROR(request::ReadRows<M>(body, kReads, m));
  FDYNO_RETURN_IF_ERROR(request::CheckMembers<M>(kChecks, m));
  r.enabled = *request::Flag(m.enabled);
  r.attribute = std::string(AsStringView(*m.attribute));
  return r;
}

// DynamoDB's checks, content first, then the fixed interval.
Status CheckTtlChange(const Services& s, const store::TtlSettings& ttl, const TtlRequest& r,
                      int64_t now_ms) {
  const bool active = ttl.status == store::TtlStatus::kEnabled ||
                      ttl.status == store::TtlStatus::kEnabling ||
                      ttl.status == store::TtlStatus::kDisabling;
  if (active && ttl.attribute != r.attribute) {
    return Error::Validation(
        "TimeToLive is active on a different AttributeName: current AttributeName is " +
        ttl.attribute);
  }
  if (r.enabled && active) return Error::Validation("TimeToLive is already enabled");
  if (!r.enabled && !active) return Error::Validation("TimeToLive is already disabled");
  if (ttl.updated_ms != 0 && now_ms - ttl.updated_ms < s.ttl_update_interval_ms) {
    return Error::Validation(
        "Time to live has been modified multiple times within a fixed interval");
  }
  return Status::Ok();
}

// Whether `ttl` is what this request (made at `now_ms`) writes: the backfill worker moves the
// status on (ENABLING to ENABLED) but keeps the attribute and the time of the change.
bool IsThisChange(const store::TtlSettings& ttl, const TtlRequest& r, int64_t now_ms) {
  if (ttl.updated_ms != now_ms) return false;
  if (!r.enabled) return ttl.status == store::TtlStatus::kDisabled;
  return ttl.attribute == r.attribute &&
         (ttl.status == store::TtlStatus::kEnabling || ttl.status == store::TtlStatus::kEnabled);
}

Result<std::string> UpdateTimeToLive(Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(TtlRequest r, ParseUpdateTimeToLive(ctx, body));
  const int64_t now_ms = s.clock->WallMillis();
  FDYNO_RETURN_IF_ERROR(
      kv::Run(*s.db, RunOptionsFor(ctx, s, false),
              [&](kv::Transaction& txn, const kv::Attempt& attempt) -> Status {
                FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const store::TableInfo> t,
                                       s.catalog->Find(txn, CallerScope(ctx), r.table));
                if (!Settled(t)) return TableNotFound(r.table);
                // After an ambiguous commit, a change stamped with this request's time is its own.
                if (attempt.maybe_committed && IsThisChange(t->ttl, r, now_ms)) return Status::Ok();
                FDYNO_RETURN_IF_ERROR(CheckTtlChange(s, t->ttl, r, now_ms));
                const auto change = [&](store::TableInfo& updated) {
                  if (r.enabled) {
                    // Item writes maintain the expiry index from this commit on; the backfill
                    // worker adds the items that exist, then marks it ENABLED.
                    updated.ttl = {store::TtlStatus::kEnabling, r.attribute, now_ms};
                  } else {
                    auto [begin, end] = store::ExpiryIndexRange(updated.id);
                    txn.ClearRange(begin, end);
                    updated.ttl = {store::TtlStatus::kDisabled, "", now_ms};
                  }
                };
                // A global table's replicas share its TTL setting, as DynamoDB's do.
                if (!t->replicas.empty()) {
                  return store::UpdateReplicaGroup(txn, *s.catalog, *t, change);
                }
                store::TableInfo updated = *t;
                change(updated);
                return s.catalog->Update(txn, updated);
              }));
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("TimeToLiveSpecification");
  w.StartObject();
  w.Key("AttributeName");
  w.String(r.attribute.data(), static_cast<rapidjson::SizeType>(r.attribute.size()));
  w.Key("Enabled");
  w.Bool(r.enabled);
  w.EndObject();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

Result<std::string> DescribeTimeToLive(Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(std::string name, ReadExistingTableName(ctx, body, "DescribeTimeToLive"));
  FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const store::TableInfo> t, ReadTable(s, ctx, name));
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("TimeToLiveDescription");
  w.StartObject();
  const std::string_view status = TtlStatusText(t->ttl.status);
  w.Key("TimeToLiveStatus");
  w.String(status.data(), static_cast<rapidjson::SizeType>(status.size()));
  if (t->ttl.status != store::TtlStatus::kDisabled) {
    w.Key("AttributeName");
    w.String(t->ttl.attribute.data(), static_cast<rapidjson::SizeType>(t->ttl.attribute.size()));
  }
  w.EndObject();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace

void RegisterTtlOperations(OperationRegistry& registry, const Services& services) {
  auto s = std::make_shared<Services>(services);
  registry.Register("UpdateTimeToLive", Bind(s, &UpdateTimeToLive));
  registry.Register("DescribeTimeToLive", Bind(s, &DescribeTimeToLive));
}

}  // namespace fdyno::api
