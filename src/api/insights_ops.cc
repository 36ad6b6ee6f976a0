#include "api/insights_ops.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/json_util.h"
#include "api/key_insights.h"
#include "api/run_options.h"
#include "api/table_arn.h"
#include "api/table_read.h"
#include "api/table_render.h"
#include "kv/run.h"
#include "model/base64.h"
#include "store/catalog.h"

namespace fdyno::api {
namespace {

using rapidjson::Value;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;
using store::InsightsMode;
using store::InsightsSettings;
using store::InsightsStatus;

constexpr std::string_view kAccessedAndThrottled = "ACCESSED_AND_THROTTLED_KEYS";
constexpr std::string_view kThrottled = "THROTTLED_KEYS";
constexpr int kListPageCatalogNames = 100;

// A table, or one of its global secondary indexes (index not empty).
struct Target {
  std::string table;
  std::string index;
};

Result<Target> ReadTarget(const RequestContext& ctx, const Value& body, std::string_view op) {
  Target t;
  FDYNO_ASSIGN_OR_RETURN(t.table, ReadExistingTableName(ctx, body, op));
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> index, GetString(body, "IndexName"));
  if (index) {
    // DynamoDB's own text for the length (recorded for ""), then the model's pattern.
    FDYNO_RETURN_IF_ERROR(CheckNameLengthByHand("IndexName", *index));
    ConstraintErrors e;
    e.Pattern("indexName", *index, IsValidTableNameChars(*index), "[a-zA-Z0-9_.-]+");
    FDYNO_RETURN_IF_ERROR(e.ToStatus());
    t.index = std::string(*index);
  }
  return t;
}

Error IndexNotFound(const Target& t) {
  return Error::ResourceNotFound("Requested resource not found: Index: " + t.index +
                                 " not found for table: " + t.table);
}

// The global secondary index `index` of `table`, or null (a local or vector index is none).
store::SecondaryIndex* FindGsi(store::TableInfo& table, std::string_view index) {
  for (store::SecondaryIndex& i : table.global_indexes) {
    if (i.name == index) return &i;
  }
  return nullptr;
}

// The settings `t` addresses in `table`, or IndexNotFound.
Result<InsightsSettings*> SettingsOf(store::TableInfo& table, const Target& t) {
  if (t.index.empty()) return &table.insights;
  store::SecondaryIndex* gsi = FindGsi(table, t.index);
  if (gsi == nullptr) return IndexNotFound(t);
  return &gsi->insights;
}

const store::KeySchema& KeysOf(store::TableInfo& table, const Target& t) {
  store::SecondaryIndex* gsi = t.index.empty() ? nullptr : FindGsi(table, t.index);
  return gsi != nullptr ? gsi->key_schema : table.key_schema;
}

std::string_view ModeText(InsightsMode mode) {
  return mode == InsightsMode::kThrottledKeys ? kThrottled : kAccessedAndThrottled;
}

std::string_view StatusText(InsightsStatus status) {
  switch (status) {
    case InsightsStatus::kEnabled:
      return "ENABLED";
    case InsightsStatus::kFailed:
      return "FAILED";
    case InsightsStatus::kDisabled:
      return "DISABLED";
  }
  return "DISABLED";
}

// Rules of the account's enabled resources other than `t`, for the quota.
Result<int> RulesInUse(const Services& s, kv::Transaction& txn, store::TableScope scope,
                       const Target& t) {
  int rules = 0;
  std::string after;
  while (true) {
    FDYNO_ASSIGN_OR_RETURN(store::TableNamePage page,
                           s.catalog->List(txn, scope, after, kListPageCatalogNames));
    for (const std::string& name : page.names) {
      FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const store::TableInfo> info,
                             s.catalog->Find(txn, scope, name));
      if (!info) continue;
      if (info->insights.enabled() && !(name == t.table && t.index.empty())) {
        rules += RuleCount(info->key_schema, info->insights.mode);
      }
      for (const store::SecondaryIndex& i : info->global_indexes) {
        if (i.insights.enabled() && !(name == t.table && i.name == t.index)) {
          rules += RuleCount(i.key_schema, i.insights.mode);
        }
      }
    }
    if (!page.more || page.names.empty()) return rules;
    after = page.names.back();
  }
}

// TableName, and IndexName for an index, as every answer starts.
void WriteTarget(Writer& w, const Target& t) {
  w.Key("TableName");
  Str(w, t.table);
  if (!t.index.empty()) {
    w.Key("IndexName");
    Str(w, t.index);
  }
}

// ---- UpdateContributorInsights ---------------------------------------------------------------

struct UpdateRequest {
  Target target;
  bool enable = false;
  InsightsMode mode = InsightsMode::kAccessedAndThrottledKeys;
};

Result<UpdateRequest> ParseUpdate(const RequestContext& ctx, const Value& body) {
  UpdateRequest r;
  FDYNO_ASSIGN_OR_RETURN(r.target, ReadTarget(ctx, body, "UpdateContributorInsights"));
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> action,
                         GetString(body, "ContributorInsightsAction"));
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> mode,
                         GetString(body, "ContributorInsightsMode"));
  ConstraintErrors e;
  e.NotNull("contributorInsightsAction", action.has_value());
  if (action) e.Enum("contributorInsightsAction", *action, {"ENABLE", "DISABLE"});
  if (mode) e.Enum("contributorInsightsMode", *mode, {kThrottled, kAccessedAndThrottled});
  FDYNO_RETURN_IF_ERROR(e.ToStatus());
  r.enable = *action == "ENABLE";
  if (mode && *mode == kThrottled) r.mode = InsightsMode::kThrottledKeys;
  return r;
}

// What an update does: the settings it leaves and the status it answers.
struct Change {
  InsightsSettings next;
  std::string_view answer;  // ContributorInsightsStatus of the response
  bool writes = false;
  bool show_mode = true;  // the response carries ContributorInsightsMode
};

Status CheckEnableState(store::TableInfo& table, const Target& t) {
  constexpr std::string_view kPrefix =
      "Table or Index is not in a valid state to update Key Access Insights: ";
  if (table.status != store::TableStatus::kActive) {
    return Error::Validation(std::string(kPrefix) +
                             "TableStatus must be ACTIVE to enable ContributorInsights.");
  }
  store::SecondaryIndex* gsi = t.index.empty() ? nullptr : FindGsi(table, t.index);
  if (gsi != nullptr && (gsi->status != store::IndexStatus::kActive || gsi->backfilling)) {
    return Error::Validation(std::string(kPrefix) +
                             "IndexStatus must be ACTIVE to enable ContributorInsights.");
  }
  return Status::Ok();
}

Result<Change> Decide(const InsightsSettings& now, const UpdateRequest& r, int64_t now_ms,
                      const store::KeySchema& keys, const std::function<Result<int>()>& in_use) {
  Change c{now, "", false, true};
  if (!r.enable) {
    if (now.status == InsightsStatus::kDisabled) {
      c.answer = "DISABLED";
      c.show_mode = now.updated_ms != 0;
      return c;
    }
    c.next.status = InsightsStatus::kDisabled;
    c.next.updated_ms = now_ms;
    c.answer = "DISABLING";
    c.writes = true;
    return c;
  }
  if (now.enabled() && now.mode == r.mode) {
    c.answer = "ENABLED";
    return c;
  }
  FDYNO_ASSIGN_OR_RETURN(int used, in_use());
  const bool fits = used + RuleCount(keys, r.mode) <= kInsightsRuleQuota;
  c.next.mode = r.mode;
  c.next.updated_ms = now_ms;
  c.next.status = fits ? InsightsStatus::kEnabled : InsightsStatus::kFailed;
  // A mode change keeps the rules (and the time in their names); new rules are named now.
  if (!now.enabled()) c.next.rules_ms = now_ms;
  c.answer = "ENABLING";
  c.writes = true;
  return c;
}

std::string RenderUpdate(const Target& t, const Change& c) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  WriteTarget(w, t);
  w.Key("ContributorInsightsStatus");
  Str(w, c.answer);
  if (c.show_mode) {
    w.Key("ContributorInsightsMode");
    Str(w, ModeText(c.next.mode));
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

Result<std::string> UpdateContributorInsights(Services& s, const RequestContext& ctx,
                                              const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(UpdateRequest r, ParseUpdate(ctx, body));
  const int64_t now_ms = s.clock->WallMillis();
  Change change;
  std::optional<store::TableInfo> written;
  FDYNO_RETURN_IF_ERROR(kv::Run(
      *s.db, RunOptionsFor(ctx, s, false),
      [&](kv::Transaction& txn, const kv::Attempt& attempt) -> Status {
        written.reset();
        FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const store::TableInfo> t,
                               s.catalog->Find(txn, CallerScope(ctx), r.target.table));
        if (!Settled(t)) return TableNotFound(r.target.table);
        store::TableInfo updated = *t;
        FDYNO_ASSIGN_OR_RETURN(InsightsSettings * settings, SettingsOf(updated, r.target));
        // After an ambiguous commit, settings stamped with this request's time are its own.
        if (attempt.maybe_committed && settings->updated_ms == now_ms) {
          change = {*settings, r.enable ? "ENABLING" : "DISABLING", false, true};
          return Status::Ok();
        }
        if (r.enable) {
          FDYNO_RETURN_IF_ERROR(CheckEnableState(updated, r.target));
        }
        FDYNO_ASSIGN_OR_RETURN(change, Decide(*settings, r, now_ms, KeysOf(updated, r.target), [&] {
                                 return RulesInUse(s, txn, CallerScope(ctx), r.target);
                               }));
        if (!change.writes) return Status::Ok();
        *settings = change.next;
        written = updated;
        return s.catalog->Update(txn, updated);
      }));
  if (written && s.insights != nullptr) s.insights->Forget(*written, r.target.index);
  return RenderUpdate(r.target, change);
}

// ---- DescribeContributorInsights -------------------------------------------------------------

std::string RenderDescription(store::TableInfo& table, const Target& t,
                              const InsightsSettings& settings) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  WriteTarget(w, t);
  if (settings.enabled()) {
    w.Key("ContributorInsightsRuleList");
    w.StartArray();
    for (const std::string& rule : RuleNames(table, t.index, settings)) Str(w, rule);
    w.EndArray();
  }
  w.Key("ContributorInsightsStatus");
  Str(w, StatusText(settings.status));
  if (settings.updated_ms != 0) {
    w.Key("LastUpdateDateTime");
    WriteSeconds(w, settings.updated_ms);
  }
  if (settings.status == InsightsStatus::kFailed) {
    w.Key("FailureException");
    w.StartObject();
    w.Key("ExceptionName");
    Str(w, "LimitExceededException");
    w.Key("ExceptionDescription");
    Str(w,
        "Amazon CloudWatch Contributor Insights rule limit reached. Please disable Contributor "
        "Insights for other tables/indexes OR disable other CloudWatch Contributor Insights rules "
        "before retrying.");
    w.EndObject();
  }
  if (settings.updated_ms != 0) {
    w.Key("ContributorInsightsMode");
    Str(w, ModeText(settings.mode));
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

Result<std::string> DescribeContributorInsights(Services& s, const RequestContext& ctx,
                                                const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(Target target, ReadTarget(ctx, body, "DescribeContributorInsights"));
  FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const store::TableInfo> t,
                         ReadTable(s, ctx, target.table));
  store::TableInfo table = *t;
  FDYNO_ASSIGN_OR_RETURN(InsightsSettings * settings, SettingsOf(table, target));
  return RenderDescription(table, target, *settings);
}

// ---- ListContributorInsights -----------------------------------------------------------------

struct ListRequest {
  std::optional<std::string> table;
  std::optional<Target> after;  // NextToken: the last resource of the previous page
  int64_t limit = 100;
};

std::string NextToken(const Target& last) {
  return model::Base64Encode(last.table + "\n" + last.index);
}

Result<Target> ReadNextToken(std::string_view token) {
  std::optional<std::string> text = model::Base64Decode(token);
  const size_t newline = text ? text->find('\n') : std::string::npos;
  if (newline == std::string::npos || newline == 0) {
    return Error::Validation("Invalid NextToken: " + std::string(token));
  }
  return Target{text->substr(0, newline), text->substr(newline + 1)};
}

Result<ListRequest> ParseList(const RequestContext& ctx, const Value& body) {
  ListRequest r;
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> table, GetString(body, "TableName"));
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> token, GetString(body, "NextToken"));
  FDYNO_ASSIGN_OR_RETURN(std::optional<int64_t> limit, GetInteger(body, "MaxResults"));
  if (limit) {
    ConstraintErrors e;
    e.MaxValue("maxResults", *limit, 100);
    FDYNO_RETURN_IF_ERROR(e.ToStatus());
    if (*limit > 0) r.limit = *limit;
  }
  if (table) {
    FDYNO_ASSIGN_OR_RETURN(std::string name,
                           ResolveTableName(ctx, *table, "ListContributorInsights"));
    r.table = std::move(name);
  }
  if (token) {
    FDYNO_ASSIGN_OR_RETURN(r.after, ReadNextToken(*token));
  }
  return r;
}

struct Summary {
  Target target;
  InsightsSettings settings;
};

// The listed resources of `table` (those not DISABLED): the table, then its global secondary
// indexes in order; after `after` when it names one of this table's.
void AppendListed(const store::TableInfo& table, const std::optional<Target>& after,
                  std::vector<Summary>* out) {
  bool past = !after || after->table != table.name;
  auto add = [&](const std::string& index, const InsightsSettings& settings) {
    if (past && settings.status != InsightsStatus::kDisabled) {
      out->push_back({{table.name, index}, settings});
    }
    if (!past && after->index == index) past = true;
  };
  add("", table.insights);
  for (const store::SecondaryIndex& i : table.global_indexes) add(i.name, i.insights);
}

// Up to `limit + 1` listed resources (the one more says whether there is a next page).
Result<std::vector<Summary>> Listed(const Services& s, kv::Transaction& txn,
                                    store::TableScope scope, const ListRequest& r) {
  std::vector<Summary> out;
  auto visit = [&](const std::string& name) -> Status {
    FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const store::TableInfo> t,
                           s.catalog->Find(txn, scope, name));
    if (t) AppendListed(*t, r.after, &out);
    return Status::Ok();
  };
  if (r.table) {
    FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const store::TableInfo> t,
                           s.catalog->Find(txn, scope, *r.table));
    if (!t) return TableNotFound(*r.table);
    AppendListed(*t, r.after, &out);
    return out;
  }
  // The token's own table may have resources left after its last one.
  if (r.after) FDYNO_RETURN_IF_ERROR(visit(r.after->table));
  std::string start = r.after ? r.after->table : "";
  while (static_cast<int64_t>(out.size()) <= r.limit) {
    FDYNO_ASSIGN_OR_RETURN(store::TableNamePage page,
                           s.catalog->List(txn, scope, start, kListPageCatalogNames));
    for (const std::string& name : page.names) FDYNO_RETURN_IF_ERROR(visit(name));
    if (!page.more || page.names.empty()) break;
    start = page.names.back();
  }
  return out;
}

std::string RenderList(std::vector<Summary> listed, int64_t limit) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("ContributorInsightsSummaries");
  w.StartArray();
  const bool more = static_cast<int64_t>(listed.size()) > limit;
  if (more) listed.resize(limit);
  for (const Summary& e : listed) {
    w.StartObject();
    WriteTarget(w, e.target);
    w.Key("ContributorInsightsStatus");
    Str(w, StatusText(e.settings.status));
    w.Key("ContributorInsightsMode");
    Str(w, ModeText(e.settings.mode));
    w.EndObject();
  }
  w.EndArray();
  if (more) {
    w.Key("NextToken");
    Str(w, NextToken(listed.back().target));
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

Result<std::string> ListContributorInsights(Services& s, const RequestContext& ctx,
                                            const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(ListRequest r, ParseList(ctx, body));
  FDYNO_ASSIGN_OR_RETURN(
      std::vector<Summary> listed,
      kv::Run(*s.db, RunOptionsFor(ctx, s, true), [&](kv::Transaction& txn, const kv::Attempt&) {
        return Listed(s, txn, CallerScope(ctx), r);
      }));
  return RenderList(std::move(listed), r.limit);
}

}  // namespace

void RegisterInsightsOperations(OperationRegistry& registry, const Services& services) {
  auto s = std::make_shared<Services>(services);
  registry.Register("UpdateContributorInsights", Bind(s, &UpdateContributorInsights));
  registry.Register("DescribeContributorInsights", Bind(s, &DescribeContributorInsights));
  registry.Register("ListContributorInsights", Bind(s, &ListContributorInsights));
}

}  // namespace fdyno::api
