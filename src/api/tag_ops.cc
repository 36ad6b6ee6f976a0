// TagResource, UntagResource and ListTagsOfResource: a table's tags, addressed by its ARN.
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/json_util.h"
#include "api/table_arn.h"
#include "api/table_handlers.h"
#include "api/table_request.h"
#include "api/table_rules.h"
#include "kv/run.h"

namespace fdyno::api::tables {
namespace {

using rapidjson::Value;
using store::TableInfo;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

Result<std::optional<std::vector<std::string>>> StringList(const Value& obj,
                                                           std::string_view name) {
  FDYNO_ASSIGN_OR_RETURN(const Value* list, GetList(obj, name));
  if (list == nullptr) return std::optional<std::vector<std::string>>();
  std::vector<std::string> out;
  for (const Value& v : list->GetArray()) {
    FDYNO_RETURN_IF_ERROR(CheckShape(v, JsonShape::kString));
    out.push_back(v.IsString() ? std::string(AsStringView(v)) : std::string());
  }
  return std::optional<std::vector<std::string>>(std::move(out));
}

Error ArnNotFound(const std::string& arn) {
  return Error::ResourceNotFound("Requested resource not found: ResourceArn: " + arn +
                                 " not found");
}

// The ResourceArn member (type-checked); its constraints go to `e`.
Result<std::optional<std::string_view>> ReadResourceArn(const Value& body, ConstraintErrors& e) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> arn, GetString(body, "ResourceArn"));
  e.NotNull("resourceArn", arn.has_value());
  if (arn) {
    e.MinLength("resourceArn", *arn, 1);
    e.MaxLength("resourceArn", *arn, 1283);
  }
  return arn;
}

}  // namespace

Result<std::string> TagResource(Services& s, const RequestContext& ctx, const Value& body) {
  ConstraintErrors e;
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> arn, ReadResourceArn(body, e));
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::vector<TagIn>> tags, ParseTags(body));
  e.NotNull("tags", tags.has_value());
  FDYNO_RETURN_IF_ERROR(e.ToStatus());
  FDYNO_ASSIGN_OR_RETURN(ArnTarget target, ParseTableArn(ctx, *arn, "TagResource"));
  if (tags->empty()) return Error::Validation("Atleast one Tag needs to be provided as Input.");
  FDYNO_ASSIGN_OR_RETURN(std::vector<store::Tag> add, ResolveTags(*tags));
  FDYNO_RETURN_IF_ERROR(kv::Run(
      *s.db, RunOptionsFor(ctx, s), [&](kv::Transaction& txn, const kv::Attempt&) -> Status {
        FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const TableInfo> t,
                               s.catalog->Find(txn, CallerScope(ctx), target.table));
        if (!Settled(t)) return ArnNotFound(target.arn);
        FDYNO_ASSIGN_OR_RETURN(std::vector<store::Tag> current, s.catalog->GetTags(txn, t->id));
        for (const store::Tag& tag : add) {
          auto it = std::find_if(current.begin(), current.end(),
                                 [&](const store::Tag& c) { return c.key == tag.key; });
          if (it != current.end()) {
            it->value = tag.value;
          } else {
            current.push_back(tag);
          }
        }
        if (current.size() > kMaxTags) return TooManyTags();
        return s.catalog->SetTags(txn, t->id, current);
      }));
  // TagResource and UntagResource have no output: DynamoDB answers with an empty body.
  return std::string();
}

Result<std::string> UntagResource(Services& s, const RequestContext& ctx, const Value& body) {
  ConstraintErrors e;
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> arn, ReadResourceArn(body, e));
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::vector<std::string>> keys, StringList(body, "TagKeys"));
  e.NotNull("tagKeys", keys.has_value());
  FDYNO_RETURN_IF_ERROR(e.ToStatus());
  FDYNO_ASSIGN_OR_RETURN(ArnTarget target, ParseTableArn(ctx, *arn, "UntagResource"));
  if (keys->empty()) return Error::Validation("Atleast one Tag Key needs to be provided as Input.");
  for (const std::string& key : *keys) {
    FDYNO_RETURN_IF_ERROR(CheckTagKey(key));
  }
  if (keys->size() > kMaxTags) return TooManyTags();
  FDYNO_RETURN_IF_ERROR(kv::Run(
      *s.db, RunOptionsFor(ctx, s), [&](kv::Transaction& txn, const kv::Attempt&) -> Status {
        FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const TableInfo> t,
                               s.catalog->Find(txn, CallerScope(ctx), target.table));
        if (!Settled(t)) return ArnNotFound(target.arn);
        FDYNO_ASSIGN_OR_RETURN(std::vector<store::Tag> current, s.catalog->GetTags(txn, t->id));
        std::erase_if(current, [&](const store::Tag& c) {
          return std::find(keys->begin(), keys->end(), c.key) != keys->end();
        });
        return s.catalog->SetTags(txn, t->id, current);
      }));
  return std::string();
}

Result<std::string> ListTagsOfResource(Services& s, const RequestContext& ctx, const Value& body) {
  ConstraintErrors e;
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> arn, ReadResourceArn(body, e));
  // NextToken is accepted and type-checked; every table's tags fit in one page.
  FDYNO_RETURN_IF_ERROR(GetString(body, "NextToken"));
  FDYNO_RETURN_IF_ERROR(e.ToStatus());
  FDYNO_ASSIGN_OR_RETURN(ArnTarget target, ParseTableArn(ctx, *arn, "ListTagsOfResource"));
  kv::RunOptions options = RunOptionsFor(ctx, s);
  options.read_only = true;
  FDYNO_ASSIGN_OR_RETURN(
      std::vector<store::Tag> tags,
      kv::Run(*s.db, options,
              [&](kv::Transaction& txn, const kv::Attempt&) -> Result<std::vector<store::Tag>> {
                FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const TableInfo> t,
                                       s.catalog->Find(txn, CallerScope(ctx), target.table));
                if (!Settled(t)) return ArnNotFound(target.arn);
                return s.catalog->GetTags(txn, t->id);
              }));
  // At most 50 tags: one page, no NextToken.
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("Tags");
  w.StartArray();
  for (const auto& t : tags) {
    w.StartObject();
    w.Key("Key");
    Str(w, t.key);
    w.Key("Value");
    Str(w, t.value);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return JsonText(buffer);
}

}  // namespace fdyno::api::tables
