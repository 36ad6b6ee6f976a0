#include "api/policy_ops.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <vector>

#include "api/json_util.h"
#include "api/policy_document.h"
#include "api/policy_guard.h"
#include "api/run_options.h"
#include "api/table_arn.h"
#include "base/time_text.h"
#include "kv/run.h"
#include "store/policies.h"

namespace fdyno::api {
namespace {

using rapidjson::Value;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

constexpr std::string_view kNoPolicy = "NO_POLICY";
constexpr std::string_view kInvalid = "One or more parameter values were invalid: ";

// What a ResourceArn names: a table, or its stream labelled `slot`.
struct PolicyResource {
  std::string arn;
  std::string table;
  std::string slot;  // empty: the table
  PolicyTarget target() const {
    return slot.empty() ? PolicyTarget::kTable : PolicyTarget::kStream;
  }
};

Result<PolicyResource> ParseResourceArn(const RequestContext& ctx, std::string_view arn) {
  const std::string a(arn);
  if (!a.starts_with("arn:"))
    return Error::Validation(std::string(kInvalid) + "ARNs must start with 'arn:': " + a);
  std::vector<std::string> parts;
  size_t pos = 0;
  for (int i = 0; i < 5; ++i) {
    const size_t colon = a.find(':', pos);
    if (colon == std::string::npos) {
      return Error::Validation(std::string(kInvalid) + "Invalid resource Arn: " + a);
    }
    parts.push_back(a.substr(pos, colon - pos));
    pos = colon + 1;
  }
  const std::string resource = a.substr(pos);
  if (!IsDynamoDbResourceArn(parts[2], resource)) {
    return Error::Validation(std::string(kInvalid) +
                             "Provided Arn is not a DynamoDB resource arn: " + a);
  }
  if (parts[1] != "aws" || parts[3] != ctx.region) {
    return Error::Validation(std::string(kInvalid) + "Invalid resource Arn: " + a);
  }
  if (parts[4] != ctx.account_id) {
    return Error::Validation(
        "This action is only supported by accounts that match the resource owner\u2019s account.");
  }
  PolicyResource r{a, resource.substr(6), ""};
  const size_t slash = r.table.find('/');
  if (slash != std::string::npos) {
    const std::string rest = r.table.substr(slash);
    r.table.resize(slash);
    if (!rest.starts_with("/stream/") || rest.size() == 8) {
      return Error::Validation(std::string(kInvalid) +
                               "Invalid resource arn provided, only table or stream is accepted. "
                               "Provided resource arn: " +
                               a);
    }
    r.slot = rest.substr(8);
  }
  return r;
}

struct PolicyRequest {
  PolicyResource resource;
  std::optional<std::string> policy;
  std::optional<std::string> expected;
  bool confirm = false;
};

Result<PolicyRequest> ParseRequest(const RequestContext& ctx, const Value& body, bool with_policy) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> arn, GetString(body, "ResourceArn"));
  std::optional<std::string_view> policy, expected;
  std::optional<bool> confirm;
  if (with_policy) {
    FDYNO_ASSIGN_OR_RETURN(policy, GetString(body, "Policy"));
    FDYNO_ASSIGN_OR_RETURN(expected, GetString(body, "ExpectedRevisionId"));
    FDYNO_ASSIGN_OR_RETURN(confirm, GetBool(body, "ConfirmRemoveSelfResourceAccess"));
  } else if (body.HasMember("ExpectedRevisionId")) {
    FDYNO_ASSIGN_OR_RETURN(expected, GetString(body, "ExpectedRevisionId"));
  }
  ConstraintErrors e;
  e.NotNull("resourceArn", arn.has_value());
  if (arn) {
    e.MinLength("resourceArn", *arn, 1);
    e.MaxLength("resourceArn", *arn, 1283);
  }
  if (with_policy) e.NotNull("policy", policy.has_value());
  if (expected) {
    e.MinLength("expectedRevisionId", *expected, 1);
    e.MaxLength("expectedRevisionId", *expected, 255);
  }
  FDYNO_RETURN_IF_ERROR(e.ToStatus());
  PolicyRequest r;
  FDYNO_ASSIGN_OR_RETURN(r.resource, ParseResourceArn(ctx, *arn));
  if (policy) r.policy = std::string(*policy);
  if (expected) r.expected = std::string(*expected);
  r.confirm = confirm.value_or(false);
  return r;
}

Error PolicyNotFound(std::string_view detail) {
  return Error::Make(
      ErrorType::kPolicyNotFound,
      "Resource-based policy not found for the provided ResourceArn: " + std::string(detail));
}

// The table a policy request names, and for a stream slot its latest stream.
Result<std::shared_ptr<const store::TableInfo>> FindResource(const Services& s,
                                                             kv::Transaction& txn,
                                                             const RequestContext& ctx,
                                                             const PolicyResource& r) {
  FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const store::TableInfo> t,
                         s.catalog->Find(txn, CallerScope(ctx), r.table));
  if (!Settled(t)) return TableNotFound(r.table);
  if (!r.slot.empty() && r.slot != t->stream.label) {
    return Error::ResourceNotFound("Requested resource not found: Stream: " + r.slot +
                                   " not found for Table: " + r.table);
  }
  return t;
}

// ExpectedRevisionId against the current record (`live`: a policy is attached).
Status CheckExpected(const PolicyRequest& r, const std::optional<store::PolicyRecord>& current) {
  if (!r.expected) return Status::Ok();
  const bool live = current && !current->deleted;
  if (*r.expected == kNoPolicy && !live) return Status::Ok();
  const std::string asked = "Requested update for policy with revision id " + *r.expected;
  if (!live) {
    return PolicyNotFound(asked + ", but table " + r.resource.table +
                          " has no associated resource-based policy");
  }
  if (std::to_string(current->revision_ms) != *r.expected) {
    return PolicyNotFound(asked + ", but the policy associated to target table " +
                          r.resource.table + " has revision id " +
                          std::to_string(current->revision_ms));
  }
  return Status::Ok();
}

// DynamoDB's interval between two changes of one policy.
Status CheckInterval(const Services& s, const PolicyRequest& r,
                     const std::optional<store::PolicyRecord>& current, int64_t now_ms) {
  if (!current || now_ms >= current->revision_ms + s.policy_update_interval_ms) {
    return Status::Ok();
  }
  const std::string what =
      r.resource.slot.empty() ? "table " + r.resource.table : "stream " + r.resource.slot;
  return Error::Make(ErrorType::kThrottling,
                     "Resource-based policy for " + what + " modified within the previous " +
                         std::to_string(s.policy_update_interval_ms) +
                         " milliseconds. Please try again after " +
                         Iso8601Millis(current->revision_ms + s.policy_update_interval_ms) + ".");
}

// Whether any slot of the table (its own, its latest stream's) still holds a policy once `slot`
// holds `record`.
Result<bool> AnyPolicyLeft(kv::Transaction& txn, const store::TableInfo& t, std::string_view slot,
                           const store::PolicyRecord& record) {
  if (!record.deleted) return true;
  std::vector<std::string_view> others;
  if (!slot.empty()) others.push_back("");
  if (!t.stream.label.empty() && t.stream.label != slot) others.push_back(t.stream.label);
  for (std::string_view other : others) {
    FDYNO_ASSIGN_OR_RETURN(std::optional<store::PolicyRecord> p,
                           store::ReadPolicy(txn, t.id, other));
    if (p && !p->deleted) return true;
  }
  return false;
}

// Writes `record` to the resource's slot and keeps the table's has_policies true to it.
Status Store(const Services& s, kv::Transaction& txn, const store::TableInfo& t,
             const PolicyResource& r, const store::PolicyRecord& record) {
  store::WritePolicy(txn, t.id, r.slot, record);
  FDYNO_ASSIGN_OR_RETURN(bool any, AnyPolicyLeft(txn, t, r.slot, record));
  if (any == t.has_policies) return Status::Ok();
  store::TableInfo updated = t;
  updated.has_policies = any;
  return s.catalog->Update(txn, updated);
}

std::string RevisionAnswer(std::optional<int64_t> revision) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  if (revision) {
    w.Key("RevisionId");
    Str(w, std::to_string(*revision));
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

Result<std::string> PutResourcePolicy(Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(PolicyRequest r, ParseRequest(ctx, body, true));
  FDYNO_ASSIGN_OR_RETURN(PolicyDocument doc, ParsePolicy(*r.policy, r.resource.target()));
  if (!r.confirm &&
      Evaluate(doc, CallerAccess(ctx, "PutResourcePolicy", r.resource.arn)) == Decision::kDeny) {
    return Error::Make(ErrorType::kAccessDenied,
                       "The new resource policy will not allow you to update the resource policy "
                       "in the future.");
  }
  const int64_t now_ms = s.clock->WallMillis();
  FDYNO_ASSIGN_OR_RETURN(
      int64_t revision,
      kv::Run(*s.db, RunOptionsFor(ctx, s, false),
              [&](kv::Transaction& txn, const kv::Attempt&) -> Result<int64_t> {
                FDYNO_ASSIGN_OR_RETURN(auto t, FindResource(s, txn, ctx, r.resource));
                FDYNO_ASSIGN_OR_RETURN(std::optional<store::PolicyRecord> current,
                                       store::ReadPolicy(txn, t->id, r.resource.slot));
                FDYNO_RETURN_IF_ERROR(CheckExpected(r, current));
                // The same document again (after an ambiguous commit too): nothing changes.
                if (current && !current->deleted && current->document == doc.canonical &&
                    current->version_given == doc.version_given) {
                  return current->revision_ms;
                }
                FDYNO_RETURN_IF_ERROR(CheckInterval(s, r, current, now_ms));
                const int64_t rev = current ? std::max(now_ms, current->revision_ms + 1) : now_ms;
                FDYNO_RETURN_IF_ERROR(
                    Store(s, txn, *t, r.resource, {doc.canonical, doc.version_given, rev, false}));
                return rev;
              }));
  return RevisionAnswer(revision);
}

Result<std::string> GetResourcePolicy(Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(PolicyRequest r, ParseRequest(ctx, body, false));
  FDYNO_ASSIGN_OR_RETURN(
      std::optional<store::PolicyRecord> current,
      kv::Run(*s.db, RunOptionsFor(ctx, s, true),
              [&](kv::Transaction& txn,
                  const kv::Attempt&) -> Result<std::optional<store::PolicyRecord>> {
                FDYNO_ASSIGN_OR_RETURN(auto t, FindResource(s, txn, ctx, r.resource));
                return store::ReadPolicy(txn, t->id, r.resource.slot);
              }));
  if (!current || current->deleted) return PolicyNotFound(r.resource.arn);
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("Policy");
  Str(w, current->document);
  w.Key("RevisionId");
  Str(w, std::to_string(current->revision_ms));
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

Result<std::string> DeleteResourcePolicy(Services& s, const RequestContext& ctx,
                                         const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(PolicyRequest r, ParseRequest(ctx, body, false));
  const int64_t now_ms = s.clock->WallMillis();
  FDYNO_ASSIGN_OR_RETURN(
      std::optional<int64_t> revision,
      kv::Run(*s.db, RunOptionsFor(ctx, s, false),
              [&](kv::Transaction& txn, const kv::Attempt&) -> Result<std::optional<int64_t>> {
                FDYNO_ASSIGN_OR_RETURN(auto t, FindResource(s, txn, ctx, r.resource));
                FDYNO_ASSIGN_OR_RETURN(std::optional<store::PolicyRecord> current,
                                       store::ReadPolicy(txn, t->id, r.resource.slot));
                FDYNO_RETURN_IF_ERROR(CheckExpected(r, current));
                if (!current) return std::optional<int64_t>();  // never had one
                // Deleted already: the deletion's revision.
                if (current->deleted) return std::optional<int64_t>(current->revision_ms);
                FDYNO_RETURN_IF_ERROR(CheckInterval(s, r, current, now_ms));
                const int64_t rev = std::max(now_ms, current->revision_ms + 1);
                FDYNO_RETURN_IF_ERROR(Store(s, txn, *t, r.resource, {"", true, rev, true}));
                return std::optional<int64_t>(current->revision_ms);
              }));
  return RevisionAnswer(revision);
}

}  // namespace

void WriteTablePolicy(kv::Transaction& txn, int64_t table_id, const PolicyDocument& doc,
                      int64_t now_ms) {
  store::WritePolicy(txn, table_id, "", {doc.canonical, doc.version_given, now_ms, false});
}

void RegisterPolicyOperations(OperationRegistry& registry, const Services& services) {
  auto s = std::make_shared<Services>(services);
  registry.Register("PutResourcePolicy", Bind(s, &PutResourcePolicy));
  registry.Register("GetResourcePolicy", Bind(s, &GetResourcePolicy));
  registry.Register("DeleteResourcePolicy", Bind(s, &DeleteResourcePolicy));
}

}  // namespace fdyno::api
