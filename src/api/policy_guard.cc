#include "api/policy_guard.h"

#include <rapidjson/document.h>

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "api/run_options.h"
#include "api/table_arn.h"
#include "kv/run.h"
#include "store/catalog.h"
#include "store/policies.h"

namespace fdyno::api {
namespace {

using rapidjson::Value;

std::string_view View(const Value& v) { return {v.GetString(), v.GetStringLength()}; }

const Value* Member(const Value& obj, const char* name) {
  if (!obj.IsObject()) return nullptr;
  auto it = obj.FindMember(name);
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

// One table a request addresses.
struct Target {
  std::string owner;  // the table's account
  std::string table;
  std::string index;                // a read through this index
  std::vector<const Value*> items;  // the keys or items it names (LeadingKeys)
  const Value* request = nullptr;   // the request object naming it (Attributes)
  bool single_item = false;         // GetItem, PutItem, UpdateItem, DeleteItem
};

// A TableName or ResourceArn: its account (another one's only through an ARN) and table name.
// An ARN fdyno cannot read, or of another partition or region, is left to the operation, which
// answers its own error.
std::pair<std::string, std::string> Owner(const RequestContext& ctx, std::string_view name) {
  if (!name.starts_with("arn:")) return {ctx.account_id, std::string(name)};
  const std::optional<std::array<std::string, 6>> parts = SplitArn(name);
  if (!parts || (*parts)[1] != "aws" || (*parts)[2] != "dynamodb" || (*parts)[3] != ctx.region ||
      !(*parts)[5].starts_with("table/")) {
    return {ctx.account_id, std::string(name)};
  }
  const std::string& resource = (*parts)[5];
  return {(*parts)[4], resource.substr(6, resource.find('/', 6) - 6)};
}

void AddTarget(const RequestContext& ctx, const Value& named_by, std::string_view name,
               std::vector<Target>& out) {
  auto [owner, table] = Owner(ctx, name);
  Target t{std::move(owner), std::move(table), "", {}, &named_by, false};
  if (const Value* index = Member(named_by, "IndexName"); index && index->IsString()) {
    t.index = std::string(View(*index));
  }
  out.push_back(std::move(t));
}

// BatchGetItem's {"t": {"Keys": [...]}} and BatchWriteItem's {"t": [{"PutRequest": ...}]}.
void BatchTargets(const RequestContext& ctx, const Value& items, std::vector<Target>& out) {
  for (const auto& m : items.GetObject()) {
    AddTarget(ctx, m.value, View(m.name), out);
    if (const Value* keys = Member(m.value, "Keys"); keys && keys->IsArray()) {
      for (const Value& k : keys->GetArray()) out.back().items.push_back(&k);
    }
    if (m.value.IsArray()) {
      for (const Value& w : m.value.GetArray()) {
        const Value* put = Member(w, "PutRequest");
        const Value* del = Member(w, "DeleteRequest");
        if (const Value* item = put ? Member(*put, "Item") : nullptr)
          out.back().items.push_back(item);
        if (const Value* key = del ? Member(*del, "Key") : nullptr) out.back().items.push_back(key);
      }
    }
  }
}

std::vector<Target> Targets(const RequestContext& ctx, const Value& body) {
  std::vector<Target> out;
  if (!body.IsObject()) return out;
  if (const Value* name = Member(body, "TableName"); name && name->IsString()) {
    AddTarget(ctx, body, View(*name), out);
    const Value* key = Member(body, "Key");
    const Value* item = Member(body, "Item");
    if (key || item) {
      out.back().items.push_back(key ? key : item);
      out.back().single_item = true;
    }
  }
  if (const Value* arn = Member(body, "ResourceArn"); arn && arn->IsString()) {
    AddTarget(ctx, body, View(*arn), out);
  }
  if (const Value* items = Member(body, "RequestItems"); items && items->IsObject()) {
    BatchTargets(ctx, *items, out);
  }
  if (const Value* actions = Member(body, "TransactItems"); actions && actions->IsArray()) {
    for (const Value& a : actions->GetArray()) {
      if (!a.IsObject() || a.MemberCount() != 1) continue;
      const Value& action = a.MemberBegin()->value;
      const Value* name = Member(action, "TableName");
      if (name == nullptr || !name->IsString()) continue;
      AddTarget(ctx, action, View(*name), out);
      const Value* key = Member(action, "Key");
      if (const Value* item = key ? key : Member(action, "Item")) out.back().items.push_back(item);
    }
  }
  return out;
}

// A key attribute's value as condition keys compare it: the string in {"S": ...}, {"N": ...}
// or {"B": ...}.
std::optional<std::string> KeyValue(const Value& item, const std::string& attribute) {
  const Value* v = Member(item, attribute.c_str());
  if (v == nullptr || !v->IsObject() || v->MemberCount() != 1) return std::nullopt;
  const Value& inner = v->MemberBegin()->value;
  if (!inner.IsString()) return std::nullopt;
  return std::string(View(inner));
}

// The top-level attributes a GetItem reads, when it names them; nullopt: the whole item.
std::optional<std::vector<std::string>> ReadAttributes(const Value& request) {
  std::vector<std::string> out;
  if (const Value* list = Member(request, "AttributesToGet"); list && list->IsArray()) {
    for (const Value& a : list->GetArray()) {
      if (a.IsString()) out.emplace_back(View(a));
    }
    return out;
  }
  const Value* projection = Member(request, "ProjectionExpression");
  if (projection == nullptr || !projection->IsString()) return std::nullopt;
  const Value* names = Member(request, "ExpressionAttributeNames");
  std::string_view text = View(*projection);
  while (!text.empty()) {
    const size_t comma = text.find(',');
    std::string_view path = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    while (!path.empty() && path.front() == ' ') path.remove_prefix(1);
    std::string root(path.substr(0, path.find_first_of(".[ ")));
    if (root.starts_with("#")) {
      const Value* resolved = names ? Member(*names, root.c_str()) : nullptr;
      if (resolved == nullptr || !resolved->IsString()) return std::nullopt;
      root = std::string(View(*resolved));
    }
    out.push_back(std::move(root));
  }
  return out;
}

// The condition keys of a request on `table` that fdyno can tell (api/policy_guard.h).
void AddConditionKeys(std::string_view operation, const Target& t, const store::TableInfo& table,
                      AccessRequest& r) {
  std::vector<std::string> leading;
  bool known = !t.items.empty();
  for (const Value* item : t.items) {
    std::optional<std::string> v = KeyValue(*item, table.key_schema.hash.name);
    if (!v) known = false;
    if (v) leading.push_back(std::move(*v));
  }
  if (known && t.index.empty()) {
    r.keys["dynamodb:LeadingKeys"] = std::move(leading);
  } else {
    r.unknown_keys.insert("dynamodb:LeadingKeys");
  }
  std::optional<std::vector<std::string>> attributes;
  if (operation == "PutItem" && t.single_item && t.items[0]->IsObject()) {
    attributes.emplace();
    for (const auto& m : t.items[0]->GetObject()) attributes->emplace_back(View(m.name));
  } else if (operation == "GetItem" && t.request != nullptr) {
    attributes = ReadAttributes(*t.request);
  }
  if (attributes) {
    r.keys["dynamodb:Attributes"] = std::move(*attributes);
  } else {
    r.unknown_keys.insert("dynamodb:Attributes");
  }
}

// Whether the caller may run `operation` on target `t`: the table's policy decides (and for a
// table of another account, must allow).
Status Authorize(const Services& s, kv::Transaction& txn, const RequestContext& ctx,
                 std::string_view operation, const Target& t) {
  const bool foreign = t.owner != ctx.account_id;
  std::string arn = TableArn(ctx.region, t.owner, t.table);
  if (!t.index.empty()) arn += "/index/" + t.index;
  FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const store::TableInfo> table,
                         s.catalog->Find(txn, {t.owner, ctx.region}, t.table));
  std::optional<store::PolicyRecord> policy;
  if (table && table->has_policies) {
    FDYNO_ASSIGN_OR_RETURN(policy, store::ReadPolicy(txn, table->id, ""));
  }
  Decision decision = Decision::kNone;
  if (policy && !policy->deleted) {
    FDYNO_ASSIGN_OR_RETURN(PolicyDocument doc, ParsePolicy(policy->document, PolicyTarget::kTable));
    AccessRequest request = CallerAccess(ctx, operation, arn);
    AddConditionKeys(operation, t, *table, request);
    decision = Evaluate(doc, request);
  }
  if (decision == Decision::kDeny) {
    return NotAuthorized(ctx, operation, arn, "with an explicit deny in a resource-based policy");
  }
  if (foreign && decision != Decision::kAllow) {
    return NotAuthorized(ctx, operation, arn, NoPolicyAllows(operation));
  }
  return Status::Ok();
}

bool IsArn(const Value* name) {
  return name != nullptr && name->IsString() && View(*name).starts_with("arn:");
}

// Whether a TableName of the request (its own, or a transaction action's) is an ARN.
bool NamesTablesByArn(const Value& body) {
  if (!body.IsObject()) return false;
  if (IsArn(Member(body, "TableName"))) return true;
  const Value* actions = Member(body, "TransactItems");
  if (actions == nullptr || !actions->IsArray()) return false;
  for (const Value& a : actions->GetArray()) {
    if (a.IsObject() && a.MemberCount() == 1 &&
        IsArn(Member(a.MemberBegin()->value, "TableName"))) {
      return true;
    }
  }
  return false;
}

// DynamoDB takes a table's ARN wherever it takes its name; the operations read names, so an ARN
// the guard resolved is replaced by the table's name (the operation runs in its account). With
// `own_only`, only the ARNs of the caller's own tables are.
void TableNamesFromArns(const RequestContext& ctx, Value& body,
                        rapidjson::Document::AllocatorType& alloc, bool own_only = false) {
  auto rename = [&](Value& obj) {
    if (!IsArn(Member(obj, "TableName"))) return;
    Value& name = obj["TableName"];
    const auto [owner, table] = Owner(ctx, View(name));
    if (own_only && owner != ctx.account_id) return;
    name.SetString(table.data(), static_cast<rapidjson::SizeType>(table.size()), alloc);
  };
  rename(body);
  if (const Value* actions = Member(body, "TransactItems"); !actions || !actions->IsArray()) return;
  for (Value& a : body["TransactItems"].GetArray()) {
    if (a.IsObject() && a.MemberCount() == 1 && a.MemberBegin()->value.IsObject()) {
      rename(a.MemberBegin()->value);
    }
  }
}

}  // namespace

AccessRequest CallerAccess(const RequestContext& ctx, std::string_view operation,
                           std::string resource) {
  AccessRequest r;
  r.account = ctx.account_id;
  r.principal = "arn:aws:iam::" + ctx.account_id + ":root";
  r.action = "dynamodb:" + std::string(operation);
  r.resource = std::move(resource);
  r.keys["aws:PrincipalAccount"] = {r.account};
  r.keys["aws:PrincipalArn"] = {r.principal};
  return r;
}

namespace {

// What a guarded request runs with: the account it acts in, and its body with the tables named
// by ARN named by name (when it had any).
struct Admission {
  RequestContext ctx;
  std::optional<rapidjson::Document> body;
  const Value& Body(const Value& original) const { return body ? *body : original; }
};

Result<Admission> Admit(const Services& s, const std::string& operation, const RequestContext& ctx,
                        const Value& body) {
  Admission admitted{ctx, std::nullopt};
  const std::vector<Target> targets = Targets(ctx, body);
  if (targets.empty()) return admitted;
  // Every table of one request belongs to one account: the caller's, or another's reached
  // through ARNs, in which the operation then runs.
  const std::string& owner = targets[0].owner;
  // The policy operations answer another account's ARN themselves (DynamoDB's
  // ValidationException: only the owner may call them).
  if (owner != ctx.account_id && operation.ends_with("ResourcePolicy")) return admitted;
  for (const Target& t : targets) {
    if (t.owner != owner) {
      return NotAuthorized(ctx, operation, TableArn(ctx.region, t.owner, t.table),
                           NoPolicyAllows(operation));
    }
  }
  FDYNO_RETURN_IF_ERROR(kv::Run(*s.db, RunOptionsFor(ctx, s, true),
                                [&](kv::Transaction& txn, const kv::Attempt&) -> Status {
                                  for (const Target& t : targets) {
                                    FDYNO_RETURN_IF_ERROR(Authorize(s, txn, ctx, operation, t));
                                  }
                                  return Status::Ok();
                                }));
  admitted.ctx.account_id = owner;
  if (NamesTablesByArn(body)) {
    admitted.body.emplace();
    admitted.body->CopyFrom(body, admitted.body->GetAllocator());
    TableNamesFromArns(ctx, *admitted.body, admitted.body->GetAllocator());
  }
  return admitted;
}

}  // namespace

Handler GuardHandler(const Services& services, std::string operation, Handler inner) {
  auto s = std::make_shared<Services>(services);
  return [s, operation = std::move(operation), inner = std::move(inner)](
             const RequestContext& ctx, const Value& body) -> Result<std::string> {
    FDYNO_ASSIGN_OR_RETURN(Admission admitted, Admit(*s, operation, ctx, body));
    return inner(admitted.ctx, admitted.Body(body));
  };
}

AsyncHandler GuardAsyncHandler(const Services& services, std::string operation,
                               AsyncHandler inner) {
  auto s = std::make_shared<Services>(services);
  return [s, operation = std::move(operation), inner = std::move(inner)](
             const RequestContext& ctx, const Value& body, Respond respond) {
    Result<Admission> admitted = Admit(*s, operation, ctx, body);
    if (!admitted.ok()) return respond(std::move(admitted).error());
    inner(admitted->ctx, admitted->Body(body), std::move(respond));
  };
}

namespace {

// The body with the caller's own tables named by name (nullopt: it names none by ARN).
std::optional<rapidjson::Document> OwnTablesByName(const RequestContext& ctx, const Value& body) {
  if (!NamesTablesByArn(body)) return std::nullopt;
  std::optional<rapidjson::Document> renamed(std::in_place);
  renamed->CopyFrom(body, renamed->GetAllocator());
  TableNamesFromArns(ctx, *renamed, renamed->GetAllocator(), /*own_only=*/true);
  return renamed;
}

}  // namespace

Handler OwnTableArnsHandler(Handler inner) {
  return [inner = std::move(inner)](const RequestContext& ctx,
                                    const Value& body) -> Result<std::string> {
    const std::optional<rapidjson::Document> renamed = OwnTablesByName(ctx, body);
    return inner(ctx, renamed ? *renamed : body);
  };
}

AsyncHandler OwnTableArnsAsyncHandler(AsyncHandler inner) {
  return [inner = std::move(inner)](const RequestContext& ctx, const Value& body, Respond respond) {
    const std::optional<rapidjson::Document> renamed = OwnTablesByName(ctx, body);
    inner(ctx, renamed ? *renamed : body, std::move(respond));
  };
}

}  // namespace fdyno::api
