#include "api/table_request.h"

#include <utility>

namespace fdyno::api::tables {
namespace {

using rapidjson::Value;

std::string Path(std::string_view parent, std::string_view member) {
  return parent.empty() ? std::string(member) : std::string(parent) + "." + std::string(member);
}

// How DynamoDB prints a list of key schema elements in a constraint message.
std::string RenderKeySchema(const std::vector<KeyElementIn>& ks) {
  std::string out = "[";
  for (size_t i = 0; i < ks.size(); ++i) {
    if (i > 0) out += ", ";
    out += "KeySchemaElement(attributeName=" + ks[i].name.value_or("null") +
           ", keyType=" + ks[i].key_type.value_or("null") + ")";
  }
  return out + "]";
}

}  // namespace

Result<std::optional<std::vector<KeyElementIn>>> ParseKeySchema(const Value& obj) {
  FDYNO_ASSIGN_OR_RETURN(auto elements, GetStructList(obj, "KeySchema", "KeySchemaElement"));
  if (!elements) return std::optional<std::vector<KeyElementIn>>();
  std::vector<KeyElementIn> out;
  for (const Value* e : *elements) {
    KeyElementIn k;
    if (e->IsObject()) {
      FDYNO_ASSIGN_OR_RETURN(k.name, GetOwnedString(*e, "AttributeName"));
      FDYNO_ASSIGN_OR_RETURN(k.key_type, GetOwnedString(*e, "KeyType"));
    }
    out.push_back(std::move(k));
  }
  return std::optional<std::vector<KeyElementIn>>(std::move(out));
}

Result<std::optional<ThroughputIn>> ParseThroughput(const Value& obj, std::string_view name) {
  FDYNO_ASSIGN_OR_RETURN(const Value* v, GetStruct(obj, name, "ProvisionedThroughput"));
  if (v == nullptr) return std::optional<ThroughputIn>();
  ThroughputIn t;
  FDYNO_ASSIGN_OR_RETURN(t.read, GetLong(*v, "ReadCapacityUnits"));
  FDYNO_ASSIGN_OR_RETURN(t.write, GetLong(*v, "WriteCapacityUnits"));
  return std::optional<ThroughputIn>(t);
}

Result<std::optional<OnDemandIn>> ParseOnDemand(const Value& obj) {
  FDYNO_ASSIGN_OR_RETURN(const Value* v,
                         GetStruct(obj, "OnDemandThroughput", "OnDemandThroughput"));
  if (v == nullptr) return std::optional<OnDemandIn>();
  OnDemandIn o;
  FDYNO_ASSIGN_OR_RETURN(o.max_read, GetLong(*v, "MaxReadRequestUnits"));
  FDYNO_ASSIGN_OR_RETURN(o.max_write, GetLong(*v, "MaxWriteRequestUnits"));
  return std::optional<OnDemandIn>(o);
}

Result<std::optional<WarmIn>> ParseWarm(const Value& obj) {
  FDYNO_ASSIGN_OR_RETURN(const Value* v, GetStruct(obj, "WarmThroughput", "WarmThroughput"));
  if (v == nullptr) return std::optional<WarmIn>();
  WarmIn w;
  FDYNO_ASSIGN_OR_RETURN(w.read, GetLong(*v, "ReadUnitsPerSecond"));
  FDYNO_ASSIGN_OR_RETURN(w.write, GetLong(*v, "WriteUnitsPerSecond"));
  return std::optional<WarmIn>(w);
}

void ApplyOnDemand(const OnDemandIn& in, store::OnDemandLimits& limits) {
  auto apply = [](std::optional<int64_t> v, int64_t& stored) {
    if (v) stored = *v == -1 ? 0 : *v;
  };
  apply(in.max_read, limits.max_read_request_units);
  apply(in.max_write, limits.max_write_request_units);
}

Result<std::optional<std::vector<IndexIn>>> ParseIndexes(const Value& body, std::string_view name,
                                                         std::string_view type_name, bool global) {
  FDYNO_ASSIGN_OR_RETURN(auto elements, GetStructList(body, name, type_name));
  if (!elements) return std::optional<std::vector<IndexIn>>();
  std::vector<IndexIn> out;
  for (const Value* e : *elements) {
    IndexIn index;
    if (e->IsObject()) {
      FDYNO_ASSIGN_OR_RETURN(index.name, GetOwnedString(*e, "IndexName"));
      FDYNO_ASSIGN_OR_RETURN(index.key_schema, ParseKeySchema(*e));
      FDYNO_ASSIGN_OR_RETURN(index.projection, ParseProjection(*e));
      if (global) {
        FDYNO_ASSIGN_OR_RETURN(index.throughput, ParseThroughput(*e, "ProvisionedThroughput"));
        FDYNO_ASSIGN_OR_RETURN(index.on_demand, ParseOnDemand(*e));
        FDYNO_ASSIGN_OR_RETURN(index.warm, ParseWarm(*e));
      }
    }
    out.push_back(std::move(index));
  }
  return std::optional<std::vector<IndexIn>>(std::move(out));
}

Result<std::optional<std::vector<AttributeIn>>> ParseAttributeDefinitions(const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(auto elements,
                         GetStructList(body, "AttributeDefinitions", "AttributeDefinition"));
  if (!elements) return std::optional<std::vector<AttributeIn>>();
  std::vector<AttributeIn> out;
  for (const Value* e : *elements) {
    AttributeIn a;
    if (e->IsObject()) {
      FDYNO_ASSIGN_OR_RETURN(a.name, GetOwnedString(*e, "AttributeName"));
      FDYNO_ASSIGN_OR_RETURN(a.type, GetOwnedString(*e, "AttributeType"));
    }
    out.push_back(std::move(a));
  }
  return std::optional<std::vector<AttributeIn>>(std::move(out));
}

Result<std::optional<StreamIn>> ParseStream(const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(const Value* v,
                         GetStruct(body, "StreamSpecification", "StreamSpecification"));
  if (v == nullptr) return std::optional<StreamIn>();
  StreamIn s;
  FDYNO_ASSIGN_OR_RETURN(s.enabled, GetBool(*v, "StreamEnabled"));
  FDYNO_ASSIGN_OR_RETURN(s.view_type, GetOwnedString(*v, "StreamViewType"));
  return std::optional<StreamIn>(std::move(s));
}

Result<std::optional<SseIn>> ParseSse(const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(const Value* v, GetStruct(body, "SSESpecification", "SSESpecification"));
  if (v == nullptr) return std::optional<SseIn>();
  SseIn s;
  FDYNO_ASSIGN_OR_RETURN(s.enabled, GetBool(*v, "Enabled"));
  FDYNO_ASSIGN_OR_RETURN(s.sse_type, GetOwnedString(*v, "SSEType"));
  FDYNO_ASSIGN_OR_RETURN(s.kms_key, GetOwnedString(*v, "KMSMasterKeyId"));
  return std::optional<SseIn>(std::move(s));
}

Result<std::optional<std::vector<TagIn>>> ParseTags(const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(auto elements, GetStructList(body, "Tags", "Tag"));
  if (!elements) return std::optional<std::vector<TagIn>>();
  std::vector<TagIn> out;
  for (const Value* e : *elements) {
    TagIn t;
    if (e->IsObject()) {
      FDYNO_ASSIGN_OR_RETURN(t.key, GetOwnedString(*e, "Key"));
      FDYNO_ASSIGN_OR_RETURN(t.value, GetOwnedString(*e, "Value"));
    }
    out.push_back(std::move(t));
  }
  return std::optional<std::vector<TagIn>>(std::move(out));
}

void CheckKeySchemaConstraints(ConstraintErrors& e,
                               const std::optional<std::vector<KeyElementIn>>& ks,
                               const std::string& path, bool check_key_type_enum,
                               size_t max_length) {
  e.NotNull(path, ks.has_value());
  if (!ks) return;
  if (ks->empty()) {
    e.Add(path, "[]", "Member must have length greater than or equal to 1");
  } else if (ks->size() > max_length) {
    e.Add(path, RenderKeySchema(*ks),
          "Member must have length less than or equal to " + std::to_string(max_length));
  }
  for (size_t i = 0; i < ks->size(); ++i) {
    const KeyElementIn& k = (*ks)[i];
    std::string p = MemberPath(path, i);
    e.NotNull(Path(p, "attributeName"), k.name.has_value());
    if (k.name) {
      e.MinLength(Path(p, "attributeName"), *k.name, 1);
      e.MaxLength(Path(p, "attributeName"), *k.name, 255);
    }
    e.NotNull(Path(p, "keyType"), k.key_type.has_value());
    if (k.key_type && check_key_type_enum)
      e.Enum(Path(p, "keyType"), *k.key_type, {"HASH", "RANGE"});
  }
}

void CheckThroughputConstraints(ConstraintErrors& e, const std::optional<ThroughputIn>& t,
                                const std::string& path) {
  if (!t) return;
  e.NotNull(Path(path, "writeCapacityUnits"), t->write.has_value());
  if (t->write) e.MinValue(Path(path, "writeCapacityUnits"), *t->write, 1);
  e.NotNull(Path(path, "readCapacityUnits"), t->read.has_value());
  if (t->read) e.MinValue(Path(path, "readCapacityUnits"), *t->read, 1);
}

void CheckIndexNameConstraints(ConstraintErrors& e, const std::optional<std::string>& name,
                               const std::string& path) {
  e.NotNull(path, name.has_value());
  if (!name) return;
  e.MinLength(path, *name, 3);
  e.MaxLength(path, *name, 255);
  e.Pattern(path, *name, IsValidTableNameChars(*name), kNamePattern);
}

void CheckIndexConstraints(ConstraintErrors& e, const std::optional<std::vector<IndexIn>>& indexes,
                           const std::string& path, bool global) {
  if (!indexes) return;
  for (size_t i = 0; i < indexes->size(); ++i) {
    const IndexIn& index = (*indexes)[i];
    std::string p = MemberPath(path, i);
    CheckIndexNameConstraints(e, index.name, Path(p, "indexName"));
    CheckKeySchemaConstraints(e, index.key_schema, Path(p, "keySchema"), false,
                              global ? kMaxGlobalIndexKeySchema : kMaxKeySchema);
    e.NotNull(Path(p, "projection"), index.projection.has_value());
    if (index.projection) CheckProjectionConstraints(e, *index.projection, Path(p, "projection"));
    if (global) CheckThroughputConstraints(e, index.throughput, Path(p, "provisionedThroughput"));
  }
}

void CheckAttributeDefinitionConstraints(ConstraintErrors& e,
                                         const std::optional<std::vector<AttributeIn>>& defs) {
  if (!defs) return;
  for (size_t i = 0; i < defs->size(); ++i) {
    const AttributeIn& a = (*defs)[i];
    std::string p = MemberPath("attributeDefinitions", i);
    // DynamoDB reports the type before the name.
    e.NotNull(Path(p, "attributeType"), a.type.has_value());
    if (a.type) e.Enum(Path(p, "attributeType"), *a.type, {"B", "N", "S"});
    e.NotNull(Path(p, "attributeName"), a.name.has_value());
    if (a.name) {
      e.MinLength(Path(p, "attributeName"), *a.name, 1);
      e.MaxLength(Path(p, "attributeName"), *a.name, 255);
    }
  }
}

void CheckStreamConstraints(ConstraintErrors& e, const std::optional<StreamIn>& stream) {
  if (!stream) return;
  e.NotNull("streamSpecification.streamEnabled", stream->enabled.has_value());
  if (stream->view_type) {
    e.Enum("streamSpecification.streamViewType", *stream->view_type,
           {"OLD_IMAGE", "KEYS_ONLY", "NEW_AND_OLD_IMAGES", "NEW_IMAGE"});
  }
}

void CheckSseConstraints(ConstraintErrors& e, const std::optional<SseIn>& sse,
                         std::string_view path) {
  if (sse && sse->sse_type) e.Enum(Path(path, "sSEType"), *sse->sse_type, {"AES256", "KMS"});
  if (sse && sse->kms_key) e.MinLength(Path(path, "kMSMasterKeyId"), *sse->kms_key, 1);
}

}  // namespace fdyno::api::tables
