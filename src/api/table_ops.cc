#include "api/table_ops.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/json_util.h"
#include "api/projection_request.h"
#include "api/table_arn.h"
#include "api/table_render.h"
#include "api/vector_table_ops.h"
#include "base/metrics.h"
#include "base/utf8.h"
#include "kv/run.h"
#include "store/streams.h"

namespace fdyno::api {
namespace {

using rapidjson::Value;
using store::TableInfo;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

// DynamoDB's per-table limits.
constexpr size_t kMaxLocalIndexes = 5;
constexpr size_t kMaxGlobalIndexes = 20;
constexpr size_t kMaxTags = 50;
constexpr int64_t kMaxCapacityUnits = 1'000'000'000'000;
constexpr std::string_view kInvalid = "One or more parameter values were invalid: ";
constexpr std::string_view kNamePattern = "[a-zA-Z0-9_.-]+";

Error Invalid(std::string_view detail) {
  return Error::Validation(std::string(kInvalid) + std::string(detail));
}

// DeleteTable and UpdateTable of a table still CREATING (being restored).
Status CheckNotCreating(const TableInfo& t) {
  if (t.status != store::TableStatus::kCreating) return Status::Ok();
  return Error::ResourceInUse(
      "Attempt to change a resource which is still in use: Table is being created: " + t.name);
}

kv::RunOptions RunOptionsFor(const RequestContext& ctx, const Services& s) {
  kv::RunOptions options;
  if (ctx.deadline != std::chrono::steady_clock::time_point{}) options.deadline = ctx.deadline;
  options.clock = s.clock;
  return options;
}

std::string Json(const rapidjson::StringBuffer& buffer) {
  return std::string(buffer.GetString(), buffer.GetSize());
}

void Str(Writer& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

// ==== deserialization: the request members, type-checked ===================================

struct KeyElementIn {
  std::optional<std::string> name;
  std::optional<std::string> key_type;
};
struct AttributeIn {
  std::optional<std::string> name;
  std::optional<std::string> type;
};
struct ThroughputIn {
  std::optional<int64_t> read;
  std::optional<int64_t> write;
};
struct IndexIn {
  std::optional<std::string> name;
  std::optional<std::vector<KeyElementIn>> key_schema;
  std::optional<ProjectionIn> projection;
  std::optional<ThroughputIn> throughput;
};
struct StreamIn {
  std::optional<bool> enabled;
  std::optional<std::string> view_type;
};
struct SseIn {
  std::optional<bool> enabled;
  std::optional<std::string> sse_type;
  std::optional<std::string> kms_key;
};
struct TagIn {
  std::optional<std::string> key;
  std::optional<std::string> value;
};

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

struct OnDemandIn {
  std::optional<int64_t> max_read;
  std::optional<int64_t> max_write;
};

Result<std::optional<OnDemandIn>> ParseOnDemand(const Value& obj) {
  FDYNO_ASSIGN_OR_RETURN(const Value* v,
                         GetStruct(obj, "OnDemandThroughput", "OnDemandThroughput"));
  if (v == nullptr) return std::optional<OnDemandIn>();
  OnDemandIn o;
  FDYNO_ASSIGN_OR_RETURN(o.max_read, GetLong(*v, "MaxReadRequestUnits"));
  FDYNO_ASSIGN_OR_RETURN(o.max_write, GetLong(*v, "MaxWriteRequestUnits"));
  return std::optional<OnDemandIn>(o);
}

// Applies an OnDemandThroughput member-wise over `limits`: a given member replaces the stored
// one, -1 removes it.
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

// ==== constraints (collected together) ======================================================

std::string Path(std::string_view parent, std::string_view member) {
  return parent.empty() ? std::string(member) : std::string(parent) + "." + std::string(member);
}
std::string MemberPath(std::string_view list_path, size_t index) {
  return std::string(list_path) + "." + std::to_string(index + 1) + ".member";
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

// The longest key schema of a table or local index, and of a global secondary index (four
// partition and four sort key attributes).
constexpr size_t kMaxKeySchema = 2;
constexpr size_t kMaxGlobalIndexKeySchema = 2 * model::kMaxKeyAttributesPerRole;

void CheckKeySchemaConstraints(ConstraintErrors& e,
                               const std::optional<std::vector<KeyElementIn>>& ks,
                               const std::string& path, bool check_key_type_enum,
                               size_t max_length = kMaxKeySchema) {
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
  e.Pattern(path, *name, IsValidTableNameChars(*name), kNamePattern);
  e.MinLength(path, *name, 3);
  e.MaxLength(path, *name, 255);
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

void CheckTagConstraints(ConstraintErrors& e, const std::optional<std::vector<TagIn>>& tags) {
  if (!tags) return;
  for (size_t i = 0; i < tags->size(); ++i) {
    const TagIn& t = (*tags)[i];
    std::string p = MemberPath("tags", i);
    e.NotNull(Path(p, "key"), t.key.has_value());
    if (t.key) {
      e.MinLength(Path(p, "key"), *t.key, 1);
      e.MaxLength(Path(p, "key"), *t.key, 128);
    }
    e.NotNull(Path(p, "value"), t.value.has_value());
    if (t.value) e.MaxLength(Path(p, "value"), *t.value, 256);
  }
}

// ==== semantic rules ========================================================================

// Java's HashSet iteration order for strings (bucket of the spread String.hashCode, then
// insertion order): DynamoDB prints some sets of attribute names in this order.
std::vector<std::string> JavaHashSetOrder(const std::vector<std::string>& items) {
  size_t buckets = 16;
  while (static_cast<double>(items.size()) > static_cast<double>(buckets) * 0.75) buckets *= 2;
  auto bucket = [&](const std::string& s) {
    uint32_t h = 0;
    // String.hashCode over UTF-16 code units; names are ASCII in practice, and for non-ASCII
    // bytes this still yields a deterministic order.
    for (unsigned char c : s) h = 31 * h + c;
    h ^= h >> 16;
    return h & (buckets - 1);
  };
  std::vector<std::pair<size_t, size_t>> order;  // (bucket, insertion index)
  for (size_t i = 0; i < items.size(); ++i) order.emplace_back(bucket(items[i]), i);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (const auto& [b, i] : order) out.push_back(items[i]);
  return out;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out = "[";
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += ", ";
    out += names[i];
  }
  return out + "]";
}

const AttributeIn* FindDefinition(const std::vector<AttributeIn>& defs, const std::string& name) {
  for (const auto& d : defs) {
    if (d.name && *d.name == name) return &d;
  }
  return nullptr;
}

// The definitions of a request whose constraints passed (names present, types valid).
std::vector<store::AttributeDefinition> TypedDefinitions(const std::vector<AttributeIn>& defs) {
  std::vector<store::AttributeDefinition> out;
  for (const AttributeIn& d : defs) out.push_back({*d.name, *store::ParseScalarType(*d.type)});
  return out;
}

std::vector<std::string> DefinitionNames(const std::vector<AttributeIn>& defs) {
  std::vector<std::string> out;
  for (const auto& d : defs) out.push_back(d.name.value_or(""));
  return out;
}

std::vector<std::string> KeyNames(const std::vector<KeyElementIn>& ks) {
  std::vector<std::string> out;
  for (const auto& k : ks) out.push_back(k.name.value_or(""));
  return out;
}

// Whether `ks` is a multi-attribute key: more than one HASH or more than one RANGE element.
bool IsMultiAttributeKey(const std::vector<KeyElementIn>& ks) {
  const auto hashes = std::count_if(ks.begin(), ks.end(),
                                    [](const KeyElementIn& k) { return *k.key_type == "HASH"; });
  return hashes > 1 || static_cast<size_t>(hashes) + 1 < ks.size();
}

// The rules of a multi-attribute global secondary index key: HASH elements first, at most four
// of each type, every attribute once.
Status CheckMultiAttributeKey(const std::vector<KeyElementIn>& ks) {
  std::set<std::string> names;
  size_t hashes = 0, ranges = 0;
  for (const KeyElementIn& k : ks) {
    if (!names.insert(*k.name).second) {
      return Error::Validation("Invalid KeySchema: Duplicate attribute name in KeySchema: " +
                               *k.name);
    }
    if (*k.key_type == "HASH") {
      if (ranges > 0) {
        return Error::Validation(
            "Invalid KeySchema: All HASH KeySchemaElements must come before the RANGE "
            "KeySchemaElements");
      }
      ++hashes;
    } else {
      ++ranges;
    }
  }
  if (hashes > model::kMaxKeyAttributesPerRole) {
    return Error::Validation("Invalid KeySchema: A KeySchema can have at most 4 HASH elements");
  }
  if (ranges > model::kMaxKeyAttributesPerRole) {
    return Error::Validation("Invalid KeySchema: A KeySchema can have at most 4 RANGE elements");
  }
  return Status();
}

// Key schema rules shared by tables and indexes; on success, the resolved schema. Only a
// global secondary index (`multi_attribute_ok`) may have a multi-attribute key.
Result<store::KeySchema> ResolveKeySchema(const std::vector<KeyElementIn>& ks,
                                          const std::vector<AttributeIn>& defs,
                                          bool multi_attribute_ok = false) {
  for (const auto& k : ks) {
    if (FindDefinition(defs, *k.name) == nullptr) {
      return Invalid("Some index key attributes are not defined in AttributeDefinitions. Keys: " +
                     JoinNames(KeyNames(ks)) +
                     ", AttributeDefinitions: " + JoinNames(DefinitionNames(defs)));
    }
  }
  auto attr = [&](const KeyElementIn& k) {
    const AttributeIn* d = FindDefinition(defs, *k.name);
    return store::AttributeDefinition{*k.name, *store::ParseScalarType(*d->type)};
  };
  if (multi_attribute_ok && *ks[0].key_type == "HASH" && IsMultiAttributeKey(ks)) {
    FDYNO_RETURN_IF_ERROR(CheckMultiAttributeKey(ks));
    store::KeySchema out;
    out.hash = attr(ks[0]);
    for (size_t i = 1; i < ks.size(); ++i) {
      if (*ks[i].key_type == "HASH") {
        out.more_hash.push_back(attr(ks[i]));
      } else if (!out.range) {
        out.range = attr(ks[i]);
      } else {
        out.more_range.push_back(attr(ks[i]));
      }
    }
    return out;
  }
  if (ks.size() == 2 && *ks[0].name == *ks[1].name) {
    return Error::Validation(
        "Both the Hash Key and the Range Key element in the KeySchema have the "
        "same name");
  }
  if (*ks[0].key_type != "HASH") {
    return Error::Validation(
        "Invalid KeySchema: The first KeySchemaElement is not a HASH key type");
  }
  if (ks.size() == 2 && *ks[1].key_type != "RANGE") {
    return Error::Validation(
        "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type");
  }
  store::KeySchema out;
  out.hash = attr(ks[0]);
  if (ks.size() == 2) out.range = attr(ks[1]);
  return out;
}

// Tag rules of TagResource and CreateTable (after the constraints).
bool IsValidTagChar(unsigned char c) {
  return std::isalnum(c) || c >= 0x80 || c == ' ' || c == '_' || c == '.' || c == ':' || c == '/' ||
         c == '=' || c == '+' || c == '-' || c == '@';
}

Result<std::vector<store::Tag>> ResolveTags(const std::vector<TagIn>& in) {
  std::vector<store::Tag> out;
  std::set<std::string> seen;
  for (const TagIn& t : in) {
    const std::string& key = *t.key;
    if (key.empty() || Utf16Length(key) > 128 ||
        !std::all_of(key.begin(), key.end(), [](char c) { return IsValidTagChar(c); })) {
      return Error::Validation("The Tag Key provided is invalid, Key: " + key);
    }
    if (key.rfind("aws:", 0) == 0) {
      return Error::Validation("Tag Key cannot be prefixed with aws:, Key: " + key);
    }
    if (!t.value || Utf16Length(*t.value) > 256 ||
        !std::all_of(t.value->begin(), t.value->end(), [](char c) { return IsValidTagChar(c); })) {
      return Error::Validation("The Tag Value provided is invalid, Value: " +
                               t.value.value_or("null"));
    }
    if (!seen.insert(key).second) {
      return Error::Validation("Duplicate Tag Keys provided as input: Duplicate Tag Key found " +
                               key);
    }
    out.push_back({key, *t.value});
  }
  return out;
}

Error TooManyTags() {
  return Error::Validation("Number of Tags exceed the current limit for the provided ResourceArn");
}

std::optional<store::StreamViewType> ParseViewType(std::string_view s) {
  if (s == "NEW_IMAGE") return store::StreamViewType::kNewImage;
  if (s == "OLD_IMAGE") return store::StreamViewType::kOldImage;
  if (s == "NEW_AND_OLD_IMAGES") return store::StreamViewType::kNewAndOldImages;
  if (s == "KEYS_ONLY") return store::StreamViewType::kKeysOnly;
  return std::nullopt;
}

std::optional<store::TableClass> ParseTableClass(std::string_view s) {
  if (s == "STANDARD") return store::TableClass::kStandard;
  if (s == "STANDARD_INFREQUENT_ACCESS") return store::TableClass::kStandardInfrequentAccess;
  return std::nullopt;
}

Error InvalidTableClass() {
  return Error::Validation(
      "Invalid table-class parameter provided. Please try again with a valid table-class value: "
      "[STANDARD, STANDARD_INFREQUENT_ACCESS].");
}

// SSESpecification rules shared by CreateTable and UpdateTable.
Status CheckSse(const SseIn& sse) {
  bool enabled = sse.enabled.value_or(false);
  if (!enabled && sse.sse_type) return Invalid("SSEType can not be specified if Enabled is false");
  if (!enabled && sse.kms_key) {
    return Invalid("KMSMasterKeyId can not be specified if Enabled is false");
  }
  if (sse.sse_type && *sse.sse_type == "AES256") return Invalid("SSEType AES256 is not supported");
  return Status::Ok();
}

// DynamoDB's LatestStreamLabel: the stream's creation time, ISO 8601 with milliseconds, UTC.
std::string StreamLabel(int64_t wall_ms) {
  std::time_t secs = static_cast<std::time_t>(wall_ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[80];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03d", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<int>(wall_ms % 1000));
  return buf;
}

// The time a StreamLabel spells (0 for an empty or malformed one).
int64_t LabelMillis(const std::string& label) {
  std::tm tm{};
  int ms = 0;
  if (std::sscanf(label.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3d", &tm.tm_year, &tm.tm_mon,
                  &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) != 7) {
    return 0;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<int64_t>(timegm(&tm)) * 1000 + ms;
}

// ==== CreateTable ===========================================================================

struct CreateTableRequest {
  std::optional<std::vector<AttributeIn>> attribute_definitions;
  std::optional<std::string> table_name;
  std::optional<std::vector<KeyElementIn>> key_schema;
  std::optional<std::vector<IndexIn>> local_indexes;
  std::optional<std::vector<IndexIn>> global_indexes;
  std::optional<std::string> billing_mode;
  std::optional<ThroughputIn> throughput;
  std::optional<StreamIn> stream;
  std::optional<SseIn> sse;
  std::optional<std::vector<TagIn>> tags;
  std::optional<std::string> table_class;
  std::optional<bool> deletion_protection;
  std::optional<OnDemandIn> on_demand;
  std::optional<std::vector<VectorIndexIn>> vector_indexes;
};

Result<CreateTableRequest> ParseCreateTable(const Value& body) {
  CreateTableRequest r;
  FDYNO_ASSIGN_OR_RETURN(r.attribute_definitions, ParseAttributeDefinitions(body));
  FDYNO_ASSIGN_OR_RETURN(r.table_name, GetOwnedString(body, "TableName"));
  FDYNO_ASSIGN_OR_RETURN(r.key_schema, ParseKeySchema(body));
  FDYNO_ASSIGN_OR_RETURN(r.local_indexes,
                         ParseIndexes(body, "LocalSecondaryIndexes", "LocalSecondaryIndex", false));
  FDYNO_ASSIGN_OR_RETURN(
      r.global_indexes, ParseIndexes(body, "GlobalSecondaryIndexes", "GlobalSecondaryIndex", true));
  FDYNO_ASSIGN_OR_RETURN(r.billing_mode, GetOwnedString(body, "BillingMode"));
  FDYNO_ASSIGN_OR_RETURN(r.throughput, ParseThroughput(body, "ProvisionedThroughput"));
  FDYNO_ASSIGN_OR_RETURN(r.stream, ParseStream(body));
  FDYNO_ASSIGN_OR_RETURN(r.sse, ParseSse(body));
  FDYNO_ASSIGN_OR_RETURN(r.tags, ParseTags(body));
  FDYNO_ASSIGN_OR_RETURN(r.table_class, GetOwnedString(body, "TableClass"));
  FDYNO_ASSIGN_OR_RETURN(r.deletion_protection, GetBool(body, "DeletionProtectionEnabled"));
  FDYNO_ASSIGN_OR_RETURN(r.on_demand, ParseOnDemand(body));
  FDYNO_ASSIGN_OR_RETURN(r.vector_indexes, ParseVectorIndexes(body));
  return r;
}

void CheckAttributeDefinitionConstraints(ConstraintErrors& e,
                                         const std::optional<std::vector<AttributeIn>>& defs) {
  if (!defs) return;
  for (size_t i = 0; i < defs->size(); ++i) {
    const AttributeIn& a = (*defs)[i];
    std::string p = MemberPath("attributeDefinitions", i);
    e.NotNull(Path(p, "attributeName"), a.name.has_value());
    if (a.name) {
      e.MinLength(Path(p, "attributeName"), *a.name, 1);
      e.MaxLength(Path(p, "attributeName"), *a.name, 255);
    }
    e.NotNull(Path(p, "attributeType"), a.type.has_value());
    if (a.type) e.Enum(Path(p, "attributeType"), *a.type, {"B", "N", "S"});
  }
}

Status CheckCreateTableConstraints(const CreateTableRequest& r) {
  ConstraintErrors e;
  e.NotNull("attributeDefinitions", r.attribute_definitions.has_value());
  CheckAttributeDefinitionConstraints(e, r.attribute_definitions);
  if (r.billing_mode) e.Enum("billingMode", *r.billing_mode, {"PROVISIONED", "PAY_PER_REQUEST"});
  CheckThroughputConstraints(e, r.throughput, "provisionedThroughput");
  CheckKeySchemaConstraints(e, r.key_schema, "keySchema", true);
  CheckIndexConstraints(e, r.local_indexes, "localSecondaryIndexes", false);
  CheckIndexConstraints(e, r.global_indexes, "globalSecondaryIndexes", true);
  CheckVectorIndexConstraints(e, r.vector_indexes);
  if (r.stream) {
    e.NotNull("streamSpecification.streamEnabled", r.stream->enabled.has_value());
    if (r.stream->view_type) {
      e.Enum("streamSpecification.streamViewType", *r.stream->view_type,
             {"NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES", "KEYS_ONLY"});
    }
  }
  if (r.sse && r.sse->sse_type)
    e.Enum("sSESpecification.sSEType", *r.sse->sse_type, {"AES256", "KMS"});
  CheckTagConstraints(e, r.tags);
  return e.ToStatus();
}

// Checks the semantic rules in DynamoDB's order and builds the table to create.
Result<std::pair<TableInfo, std::vector<store::Tag>>> PlanCreateTable(const CreateTableRequest& r,
                                                                      int64_t now_ms) {
  TableInfo t;
  t.name = *r.table_name;
  t.status = store::TableStatus::kActive;
  const bool on_demand = r.billing_mode && *r.billing_mode == "PAY_PER_REQUEST";
  if (on_demand) {
    if (r.throughput) {
      return Invalid(
          "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when "
          "BillingMode is PAY_PER_REQUEST");
    }
    t.billing_mode = store::BillingMode::kPayPerRequest;
    t.last_update_to_pay_per_request_ms = now_ms;
  } else {
    if (!r.throughput || !r.throughput->read || !r.throughput->write) {
      return Invalid(
          "ReadCapacityUnits and WriteCapacityUnits must both be specified when "
          "BillingMode is PROVISIONED");
    }
    if (*r.throughput->read > kMaxCapacityUnits) {
      return Error::Validation("Given value " + std::to_string(*r.throughput->read) +
                               " for ReadCapacityUnits is out of bounds");
    }
    if (*r.throughput->write > kMaxCapacityUnits) {
      return Error::Validation("Given value " + std::to_string(*r.throughput->write) +
                               " for WriteCapacityUnits is out of bounds");
    }
    t.throughput.read_capacity_units = *r.throughput->read;
    t.throughput.write_capacity_units = *r.throughput->write;
  }

  const std::vector<AttributeIn>& defs = *r.attribute_definitions;
  {
    std::set<std::string> seen;
    for (const auto& d : defs) {
      if (!seen.insert(*d.name).second) {
        return Error::Validation("Attribute Name is duplicated: " + *d.name);
      }
    }
  }
  const std::vector<KeyElementIn>& ks = *r.key_schema;
  if (ks.size() > defs.size()) {
    return Error::Validation("Invalid KeySchema: Some index key attribute have no definition");
  }
  FDYNO_ASSIGN_OR_RETURN(t.key_schema, ResolveKeySchema(ks, defs));
  const bool has_indexes =
      r.local_indexes.has_value() || r.global_indexes.has_value() || r.vector_indexes.has_value();
  if (!has_indexes && ks.size() != defs.size()) {
    return Invalid(
        "Number of attributes in KeySchema does not exactly match number of attributes "
        "defined in AttributeDefinitions");
  }

  std::set<std::string> index_names;
  std::vector<std::string> used = KeyNames(ks);
  auto note_used = [&](const store::KeySchema& k) {
    for (const model::KeyAttribute& a : k.Attributes()) {
      if (std::find(used.begin(), used.end(), a.name) == used.end()) used.push_back(a.name);
    }
  };
  if (r.local_indexes) {
    if (r.local_indexes->empty()) return Invalid("List of LocalSecondaryIndexes is empty");
    if (!t.key_schema.range) {
      return Invalid(
          "Table KeySchema does not have a range key, which is required when "
          "specifying a LocalSecondaryIndex");
    }
    for (const IndexIn& in : *r.local_indexes) {
      FDYNO_ASSIGN_OR_RETURN(store::KeySchema iks, ResolveKeySchema(*in.key_schema, defs));
      if (!iks.range) {
        return Invalid("Index KeySchema does not have a range key for index: " + *in.name);
      }
      if (iks.hash.name != t.key_schema.hash.name) {
        return Invalid(
            "Index KeySchema does not have the same leading hash key as table KeySchema "
            "for index: " +
            *in.name + ". index hash key: " + iks.hash.name +
            ", table hash key: " + t.key_schema.hash.name);
      }
      FDYNO_ASSIGN_OR_RETURN(store::Projection projection, ResolveProjection(*in.projection));
      if (!index_names.insert(*in.name).second) {
        return Invalid("Duplicate index name: " + *in.name);
      }
      store::SecondaryIndex index;
      index.name = *in.name;
      index.key_schema = std::move(iks);
      index.projection = std::move(projection);
      note_used(index.key_schema);
      t.local_indexes.push_back(std::move(index));
    }
    if (r.local_indexes->size() > kMaxLocalIndexes) {
      return Invalid("Number of LocalSecondaryIndexes exceeds per-table limit of 5");
    }
  }
  if (r.global_indexes) {
    if (r.global_indexes->empty()) return Invalid("List of GlobalSecondaryIndexes is empty");
    for (const IndexIn& in : *r.global_indexes) {
      FDYNO_ASSIGN_OR_RETURN(store::KeySchema iks, ResolveKeySchema(*in.key_schema, defs, true));
      FDYNO_ASSIGN_OR_RETURN(store::Projection projection, ResolveProjection(*in.projection));
      store::SecondaryIndex index;
      if (on_demand && in.throughput) {
        return Invalid("ProvisionedThroughput should not be specified for index: " + *in.name +
                       " when BillingMode is PAY_PER_REQUEST");
      }
      if (!on_demand) {
        if (!in.throughput) {
          return Invalid("ProvisionedThroughput is not specified for index: " + *in.name);
        }
        index.throughput.read_capacity_units = *in.throughput->read;
        index.throughput.write_capacity_units = *in.throughput->write;
      }
      if (!index_names.insert(*in.name).second) {
        return Invalid("Duplicate index name: " + *in.name);
      }
      index.name = *in.name;
      index.key_schema = std::move(iks);
      index.projection = std::move(projection);
      note_used(index.key_schema);
      t.global_indexes.push_back(std::move(index));
    }
    if (r.global_indexes->size() > kMaxGlobalIndexes) {
      return Invalid("GlobalSecondaryIndex count exceeds the per-table limit of 20");
    }
  }
  if (r.vector_indexes) {
    FDYNO_ASSIGN_OR_RETURN(
        t.vector_indexes,
        PlanCreateVectorIndexes(*r.vector_indexes, TypedDefinitions(defs), t, index_names, used));
  }
  if (has_indexes && used.size() != defs.size()) {
    return Invalid("Some AttributeDefinitions are not used. AttributeDefinitions: " +
                   JoinNames(DefinitionNames(defs)) +
                   ", keys used: " + JoinNames(JavaHashSetOrder(used)));
  }
  for (const auto& d : defs) {
    t.attribute_definitions.push_back({*d.name, *store::ParseScalarType(*d.type)});
  }

  if (r.stream) {
    bool enabled = *r.stream->enabled;
    if (enabled && !r.stream->view_type) {
      return Invalid("Table is being created with a stream enabled, UpdateViewType is required");
    }
    if (!enabled && r.stream->view_type) {
      return Invalid(
          "Table is being created with a stream disabled, UpdateViewType should not "
          "be specified");
    }
    if (enabled) {
      t.stream.enabled = true;
      t.stream.view_type = *ParseViewType(*r.stream->view_type);
      t.stream.label = StreamLabel(now_ms);
    }
  }
  if (r.sse) {
    FDYNO_RETURN_IF_ERROR(CheckSse(*r.sse));
    if (r.sse->enabled.value_or(false)) {
      t.sse.enabled = true;
      t.sse.kms_master_key_id = r.sse->kms_key.value_or("");
    }
  }
  if (r.table_class) {
    std::optional<store::TableClass> c = ParseTableClass(*r.table_class);
    if (!c) return InvalidTableClass();
    t.table_class = *c;
    t.table_class_set = true;
  }
  t.deletion_protection = r.deletion_protection.value_or(false);
  if (r.on_demand) ApplyOnDemand(*r.on_demand, t.on_demand);

  std::vector<store::Tag> tags;
  if (r.tags) {
    FDYNO_ASSIGN_OR_RETURN(tags, ResolveTags(*r.tags));
    if (tags.size() > kMaxTags) return TooManyTags();
  }
  return std::make_pair(std::move(t), std::move(tags));
}

Result<std::string> CreateTable(Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(CreateTableRequest r, ParseCreateTable(body));
  FDYNO_RETURN_IF_ERROR(ValidateControlPlaneTableName(r.table_name));
  FDYNO_RETURN_IF_ERROR(CheckCreateTableConstraints(r));
  FDYNO_ASSIGN_OR_RETURN(auto plan, PlanCreateTable(r, s.clock->WallMillis()));
  const std::string uuid = store::NewTableUuid();
  FDYNO_ASSIGN_OR_RETURN(
      std::shared_ptr<const TableInfo> created,
      kv::Run(*s.db, RunOptionsFor(ctx, s),
              [&](kv::Transaction& txn,
                  const kv::Attempt& attempt) -> Result<std::shared_ptr<const TableInfo>> {
                if (attempt.maybe_committed) {  // the table an earlier attempt made, if any
                  FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const TableInfo> mine,
                                         s.catalog->FindCreated(txn, plan.first.name, uuid));
                  if (mine) return mine;
                }
                FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const TableInfo> t,
                                       s.catalog->Create(txn, plan.first, plan.second, uuid));
                if (!t->stream.enabled) return t;
                // The table's stream, created with it (its id is in the table record).
                TableInfo with_stream = *t;
                FDYNO_RETURN_IF_ERROR(store::SyncStream(txn, nullptr, &with_stream, s.stream_slots,
                                                        s.clock->WallMillis()));
                FDYNO_RETURN_IF_ERROR(s.catalog->Update(txn, with_stream));
                return std::make_shared<const TableInfo>(std::move(with_stream));
              }));
  spdlog::info("created table {} (id {}, account {})", created->name, created->id, ctx.account_id);
  return DescriptionResponse("TableDescription", ctx, *created, store::TableStatus::kCreating);
}

}  // namespace

Result<TableInfo> PlanImportedTable(const Value& params, int64_t now_ms) {
  FDYNO_ASSIGN_OR_RETURN(CreateTableRequest r, ParseCreateTable(params));
  FDYNO_RETURN_IF_ERROR(ValidateControlPlaneTableName(r.table_name));
  FDYNO_RETURN_IF_ERROR(CheckCreateTableConstraints(r));
  FDYNO_ASSIGN_OR_RETURN(auto plan, PlanCreateTable(r, now_ms));
  plan.first.status = store::TableStatus::kCreating;
  return std::move(plan.first);
}

namespace {

// ==== DescribeTable, DeleteTable ==========================================================

Result<std::string> DescribeTable(Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(std::string name, ReadExistingTableName(ctx, body, "DescribeTable"));
  // The table and its item counts (store/item_counts.h) as of one snapshot.
  struct Described {
    std::shared_ptr<const TableInfo> table;
    store::ItemCounts counts;
  };
  kv::RunOptions options = RunOptionsFor(ctx, s);
  options.read_only = true;
  FDYNO_ASSIGN_OR_RETURN(
      Described d,
      kv::Run(*s.db, options, [&](kv::Transaction& txn, const kv::Attempt&) -> Result<Described> {
        Described out;
        FDYNO_ASSIGN_OR_RETURN(out.table, s.catalog->Find(txn, name));
        if (out.table) {
          FDYNO_ASSIGN_OR_RETURN(out.counts, store::ReadItemCounts(txn, *out.table));
        }
        return out;
      }));
  if (!d.table) return TableNotFound(name);
  return DescriptionResponse("Table", ctx, *d.table, d.table->status, &d.counts);
}

// fdyno_table_purges_total: dropped tables whose data was removed.
Counter& PurgesCounter() {
  static Counter& purges = []() -> Counter& {
    Metrics::Global().Describe("fdyno_table_purges", "Dropped tables whose data has been removed.");
    return Metrics::Global().GetCounter("fdyno_table_purges");
  }();
  return purges;
}

Result<std::string> DeleteTable(Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(std::string name, ReadExistingTableName(ctx, body, "DeleteTable"));
  std::shared_ptr<const TableInfo> seen;  // what the latest attempt dropped
  FDYNO_ASSIGN_OR_RETURN(
      std::shared_ptr<const TableInfo> dropped,
      kv::Run(*s.db, RunOptionsFor(ctx, s),
              [&](kv::Transaction& txn,
                  const kv::Attempt& attempt) -> Result<std::shared_ptr<const TableInfo>> {
                FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const TableInfo> t,
                                       s.catalog->Find(txn, name));
                // After an ambiguous commit, the table being gone (or replaced) is the
                // earlier attempt's drop.
                if (attempt.maybe_committed && seen && (!t || t->uuid != seen->uuid)) return seen;
                if (!t) return TableNotFound(name);
                FDYNO_RETURN_IF_ERROR(CheckNotCreating(*t));
                if (t->deletion_protection) {
                  return Error::Validation(
                      "Resource cannot be deleted as it is currently protected against deletion. "
                      "Disable deletion protection first.");
                }
                FDYNO_RETURN_IF_ERROR(s.catalog->Drop(txn, *t));
                seen = t;
                // Its stream stays readable for 24 hours, closed.
                FDYNO_RETURN_IF_ERROR(store::SyncStream(txn, t.get(), nullptr, s.stream_slots,
                                                        s.clock->WallMillis()));
                return t;
              }));
  spdlog::info("deleted table {} (id {}, account {})", name, dropped->id, ctx.account_id);
  if (s.purge_on_delete) {
    // The table is gone for every reader once the drop committed; removing its data is
    // housekeeping. A failure leaves the pending-purge marker for the next PurgeDropped.
    const auto start = std::chrono::steady_clock::now();
    Result<int> purged = s.catalog->PurgeDropped(*s.db);
    if (!purged.ok()) {
      spdlog::warn("DeleteTable {}: data removal deferred: {}", name, purged.error().message);
    } else {
      PurgesCounter().Add(*purged);
      spdlog::info("purged the data of {} dropped table(s) in {} ms", *purged,
                   std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::steady_clock::now() - start)
                       .count());
    }
  }
  return DescriptionResponse("TableDescription", ctx, *dropped, store::TableStatus::kDeleting);
}

// ==== ListTables ============================================================================

Result<std::string> ListTables(Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> start,
                         GetString(body, "ExclusiveStartTableName"));
  FDYNO_ASSIGN_OR_RETURN(std::optional<int64_t> limit, GetInteger(body, "Limit"));
  ConstraintErrors e;
  if (start) {
    e.Pattern("exclusiveStartTableName", *start, IsValidTableNameChars(*start), kNamePattern);
    e.MinLength("exclusiveStartTableName", *start, 3);
    e.MaxLength("exclusiveStartTableName", *start, 255);
  }
  if (limit) {
    e.MinValue("limit", *limit, 1);
    e.MaxValue("limit", *limit, 100);
  }
  FDYNO_RETURN_IF_ERROR(e.ToStatus());
  std::string start_name(start.value_or(""));
  int page_size = static_cast<int>(limit.value_or(100));
  kv::RunOptions options = RunOptionsFor(ctx, s);
  options.read_only = true;
  FDYNO_ASSIGN_OR_RETURN(store::TableNamePage page,
                         kv::Run(*s.db, options, [&](kv::Transaction& txn, const kv::Attempt&) {
                           return s.catalog->List(txn, start_name, page_size);
                         }));
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("TableNames");
  w.StartArray();
  for (const auto& n : page.names) Str(w, n);
  w.EndArray();
  if (page.more && !page.names.empty()) {
    w.Key("LastEvaluatedTableName");
    Str(w, page.names.back());
  }
  w.EndObject();
  return Json(buffer);
}

// ==== UpdateTable ===========================================================================

struct GsiUpdateIn {
  std::optional<std::string> update_name;
  std::optional<ThroughputIn> update_throughput;
  bool has_update = false;
  bool has_create = false;
  std::optional<std::string> create_name;
  IndexIn create;  // KeySchema, Projection, ProvisionedThroughput of a Create
  bool has_delete = false;
  std::optional<std::string> delete_name;
};

struct UpdateTableRequest {
  std::optional<std::string> table_name;
  std::optional<std::vector<AttributeIn>> attribute_definitions;
  std::optional<std::string> billing_mode;
  std::optional<ThroughputIn> throughput;
  std::optional<std::vector<GsiUpdateIn>> gsi_updates;
  std::optional<StreamIn> stream;
  std::optional<SseIn> sse;
  const Value* replica_updates = nullptr;
  std::optional<std::string> table_class;
  std::optional<bool> deletion_protection;
  std::optional<OnDemandIn> on_demand;
  std::optional<std::vector<VectorIndexUpdateIn>> vector_updates;
};

Result<UpdateTableRequest> ParseUpdateTable(const Value& body) {
  UpdateTableRequest r;
  FDYNO_ASSIGN_OR_RETURN(r.attribute_definitions, ParseAttributeDefinitions(body));
  FDYNO_ASSIGN_OR_RETURN(r.table_name, GetOwnedString(body, "TableName"));
  FDYNO_ASSIGN_OR_RETURN(r.billing_mode, GetOwnedString(body, "BillingMode"));
  FDYNO_ASSIGN_OR_RETURN(r.throughput, ParseThroughput(body, "ProvisionedThroughput"));
  FDYNO_ASSIGN_OR_RETURN(auto updates, GetStructList(body, "GlobalSecondaryIndexUpdates",
                                                     "GlobalSecondaryIndexUpdate"));
  if (updates) {
    r.gsi_updates.emplace();
    for (const Value* u : *updates) {
      GsiUpdateIn g;
      if (u->IsObject()) {
        FDYNO_ASSIGN_OR_RETURN(const Value* up,
                               GetStruct(*u, "Update", "UpdateGlobalSecondaryIndexAction"));
        if (up != nullptr) {
          g.has_update = true;
          FDYNO_ASSIGN_OR_RETURN(g.update_name, GetOwnedString(*up, "IndexName"));
          FDYNO_ASSIGN_OR_RETURN(g.update_throughput,
                                 ParseThroughput(*up, "ProvisionedThroughput"));
        }
        FDYNO_ASSIGN_OR_RETURN(const Value* cr,
                               GetStruct(*u, "Create", "CreateGlobalSecondaryIndexAction"));
        if (cr != nullptr) {
          g.has_create = true;
          FDYNO_ASSIGN_OR_RETURN(g.create_name, GetOwnedString(*cr, "IndexName"));
          g.create.name = g.create_name;
          FDYNO_ASSIGN_OR_RETURN(g.create.key_schema, ParseKeySchema(*cr));
          FDYNO_ASSIGN_OR_RETURN(g.create.projection, ParseProjection(*cr));
          FDYNO_ASSIGN_OR_RETURN(g.create.throughput,
                                 ParseThroughput(*cr, "ProvisionedThroughput"));
        }
        FDYNO_ASSIGN_OR_RETURN(const Value* de,
                               GetStruct(*u, "Delete", "DeleteGlobalSecondaryIndexAction"));
        if (de != nullptr) {
          g.has_delete = true;
          FDYNO_ASSIGN_OR_RETURN(g.delete_name, GetOwnedString(*de, "IndexName"));
        }
      }
      r.gsi_updates->push_back(std::move(g));
    }
  }
  FDYNO_ASSIGN_OR_RETURN(r.stream, ParseStream(body));
  FDYNO_ASSIGN_OR_RETURN(r.sse, ParseSse(body));
  FDYNO_ASSIGN_OR_RETURN(r.replica_updates, GetList(body, "ReplicaUpdates"));
  FDYNO_ASSIGN_OR_RETURN(r.table_class, GetOwnedString(body, "TableClass"));
  FDYNO_ASSIGN_OR_RETURN(r.deletion_protection, GetBool(body, "DeletionProtectionEnabled"));
  FDYNO_ASSIGN_OR_RETURN(r.on_demand, ParseOnDemand(body));
  FDYNO_ASSIGN_OR_RETURN(r.vector_updates, ParseVectorIndexUpdates(body));
  return r;
}

Status CheckUpdateTableRequest(const UpdateTableRequest& r) {
  ConstraintErrors e;
  CheckAttributeDefinitionConstraints(e, r.attribute_definitions);
  CheckThroughputConstraints(e, r.throughput, "provisionedThroughput");
  if (r.billing_mode) e.Enum("billingMode", *r.billing_mode, {"PROVISIONED", "PAY_PER_REQUEST"});
  if (r.gsi_updates) {
    for (size_t i = 0; i < r.gsi_updates->size(); ++i) {
      const GsiUpdateIn& g = (*r.gsi_updates)[i];
      std::string p = MemberPath("globalSecondaryIndexUpdates", i);
      if (g.has_update) {
        CheckIndexNameConstraints(e, g.update_name, p + ".update.indexName");
        e.NotNull(p + ".update.provisionedThroughput", g.update_throughput.has_value());
        CheckThroughputConstraints(e, g.update_throughput, p + ".update.provisionedThroughput");
      }
      if (g.has_create) {
        CheckIndexNameConstraints(e, g.create_name, p + ".create.indexName");
        if (g.create.key_schema) {
          CheckKeySchemaConstraints(e, g.create.key_schema, p + ".create.keySchema", false,
                                    kMaxGlobalIndexKeySchema);
        }
        if (g.create.projection) {
          CheckProjectionConstraints(e, *g.create.projection, p + ".create.projection");
        }
      }
      if (g.has_delete) CheckIndexNameConstraints(e, g.delete_name, p + ".delete.indexName");
    }
  }
  if (r.stream) {
    e.NotNull("streamSpecification.streamEnabled", r.stream->enabled.has_value());
    if (r.stream->view_type) {
      e.Enum("streamSpecification.streamViewType", *r.stream->view_type,
             {"NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES", "KEYS_ONLY"});
    }
  }
  if (r.sse && r.sse->sse_type)
    e.Enum("sSESpecification.sSEType", *r.sse->sse_type, {"AES256", "KMS"});
  CheckVectorIndexUpdateConstraints(e, r.vector_updates);
  FDYNO_RETURN_IF_ERROR(e.ToStatus());

  const bool gsi = r.gsi_updates && !r.gsi_updates->empty();
  const size_t vector_changes = CountVectorIndexChanges(r.vector_updates);
  if (!r.throughput && !r.billing_mode && !r.stream && !gsi && !r.sse && !r.replica_updates &&
      !r.deletion_protection && !r.table_class && !r.on_demand && vector_changes == 0) {
    return Error::Validation(
        "At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, "
        "GlobalSecondaryIndexUpdates, SSESpecification, ReplicaUpdates, MultiAccountReplicaReady, "
        "ReplicaTransitRoleArn, MultiRegionConsistency, DeletionProtectionEnabled, "
        "OnDemandThroughput, WarmThroughput or TableClass is required");
  }
  if (r.billing_mode && *r.billing_mode == "PROVISIONED" && !r.throughput) {
    return Invalid("ProvisionedThroughput must be specified when BillingMode is PROVISIONED");
  }
  if (r.throughput) {
    if (*r.throughput->read > kMaxCapacityUnits) {
      return Error::Validation("Given value " + std::to_string(*r.throughput->read) +
                               " for ReadCapacityUnits is out of bounds");
    }
    if (*r.throughput->write > kMaxCapacityUnits) {
      return Error::Validation("Given value " + std::to_string(*r.throughput->write) +
                               " for WriteCapacityUnits is out of bounds");
    }
  }
  if (r.gsi_updates) {
    std::set<std::string> names;
    for (const GsiUpdateIn& g : *r.gsi_updates) {
      int actions = int{g.has_update} + int{g.has_create} + int{g.has_delete};
      if (actions == 0) {
        return Invalid(
            "One of GlobalSecondaryIndexUpdate.Update, GlobalSecondaryIndexUpdate.Create, "
            "GlobalSecondaryIndexUpdate.Delete must not be null");
      }
      if (actions > 1) {
        return Invalid(
            "Only one global secondary index action is allowed per "
            "GlobalSecondaryIndexUpdate object");
      }
      const std::string& name = g.has_update   ? *g.update_name
                                : g.has_create ? *g.create_name
                                               : *g.delete_name;
      if (!names.insert(name).second) {
        return Invalid(
            "Only one global secondary index update per index is allowed "
            "simultaneously. Index: " +
            name);
      }
    }
  }
  if (r.vector_updates) FDYNO_RETURN_IF_ERROR(CheckVectorIndexUpdates(*r.vector_updates));
  // Kinds of change that must come alone (vector index changes count as index changes).
  const bool iops = r.throughput || r.billing_mode;
  const bool gsi_create_delete =
      vector_changes > 0 ||
      (r.gsi_updates &&
       std::any_of(r.gsi_updates->begin(), r.gsi_updates->end(),
                   [](const GsiUpdateIn& g) { return g.has_create || g.has_delete; }));
  const int kinds = int{iops} + int{r.stream.has_value()} + int{gsi || vector_changes > 0} +
                    int{r.sse.has_value()} + int{r.table_class.has_value()} +
                    int{r.deletion_protection.has_value()} + int{r.replica_updates != nullptr};
  if (r.sse && kinds > 1) {
    return Invalid("Server-Side Encryption modification must be the only operation in the request");
  }
  if (r.table_class && kinds > 1) {
    return Invalid("TableClass modification must be the only operation in the request");
  }
  if (r.deletion_protection && kinds > 1) {
    return Invalid("DeletionProtection modification must be the only operation in the request");
  }
  if (iops && r.stream) return Invalid("You cannot modify stream status while updating table IOPS");
  if (iops && gsi_create_delete) {
    return Invalid("You cannot create or delete index while updating table IOPS");
  }
  if (r.stream && gsi_create_delete) {
    return Invalid("You cannot create or delete index while changing stream status");
  }
  if (r.table_class && !ParseTableClass(*r.table_class)) return InvalidTableClass();
  if (r.sse) FDYNO_RETURN_IF_ERROR(CheckSse(*r.sse));
  if (r.stream) {
    if (*r.stream->enabled && !r.stream->view_type) {
      return Invalid("If stream is being enabled then UpdateViewType is required");
    }
    if (!*r.stream->enabled && r.stream->view_type) {
      return Invalid("If stream is being disabled, then UpdateViewType must not be specified");
    }
  }
  if (r.replica_updates) {
    return Invalid("Replica modification is not supported: this server has one region");
  }
  if (gsi_create_delete && r.gsi_updates) {
    // Online index changes (workers/backfill.h): Create needs its key schema and projection.
    for (const GsiUpdateIn& g : *r.gsi_updates) {
      if (g.has_create && (!g.create.key_schema || !g.create.projection)) {
        return Invalid("Both KeySchema and Projection are required to create index: " +
                       *g.create_name);
      }
    }
  }
  if (gsi_create_delete) {
    // One index (secondary or vector) is created or deleted at a time.
    const size_t online =
        vector_changes +
        (r.gsi_updates
             ? std::count_if(r.gsi_updates->begin(), r.gsi_updates->end(),
                             [](const GsiUpdateIn& g) { return g.has_create || g.has_delete; })
             : 0);
    if (online > 1) {
      return Error::Make(ErrorType::kLimitExceeded,
                         "Subscriber limit exceeded: Only 1 online index can be created or "
                         "deleted simultaneously per table");
    }
  }
  return Status::Ok();
}

bool SameUtcDay(int64_t a_ms, int64_t b_ms) { return a_ms / 86'400'000 == b_ms / 86'400'000; }

// Applies a throughput change, keeping DynamoDB's increase/decrease bookkeeping.
void ChangeThroughput(store::Throughput& t, int64_t read, int64_t write, int64_t now_ms) {
  if (read > t.read_capacity_units || write > t.write_capacity_units) t.last_increase_ms = now_ms;
  if (read < t.read_capacity_units || write < t.write_capacity_units) {
    t.number_of_decreases_today =
        (t.last_decrease_ms != 0 && SameUtcDay(t.last_decrease_ms, now_ms))
            ? t.number_of_decreases_today + 1
            : 1;
    t.last_decrease_ms = now_ms;
  }
  t.read_capacity_units = read;
  t.write_capacity_units = write;
}

std::string ThroughputUnchanged(std::string_view what, const store::Throughput& cur,
                                const ThroughputIn& req) {
  std::string r = std::to_string(*req.read), w = std::to_string(*req.write);
  std::string cr = std::to_string(cur.read_capacity_units);
  std::string cw = std::to_string(cur.write_capacity_units);
  return "The provisioned throughput for the " + std::string(what) +
         " will not change. The requested value equals the current value. Current "
         "ReadCapacityUnits provisioned for the " +
         std::string(what == "table" ? "table" : "index") + ": " + cr +
         ". Requested ReadCapacityUnits: " + r +
         ". Current WriteCapacityUnits provisioned for the " +
         std::string(what == "table" ? "table" : "index") + ": " + cw +
         ". Requested WriteCapacityUnits: " + w +
         ". Refer to the Amazon DynamoDB Developer Guide for current limits and how to request "
         "higher limits.";
}

// The new table, or the error DynamoDB gives for this change of `current`.
Result<std::pair<TableInfo, bool>> PlanUpdateTable(const UpdateTableRequest& r,
                                                   const TableInfo& current, int64_t now_ms) {
  TableInfo t = current;
  bool updating = false;  // the response reports UPDATING
  const bool was_on_demand = current.billing_mode == store::BillingMode::kPayPerRequest;
  const bool on_demand = r.billing_mode ? *r.billing_mode == "PAY_PER_REQUEST" : was_on_demand;
  if (r.throughput && on_demand) {
    return Invalid(
        "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when "
        "BillingMode is PAY_PER_REQUEST");
  }
  if (on_demand && !was_on_demand) {
    t.billing_mode = store::BillingMode::kPayPerRequest;
    t.last_update_to_pay_per_request_ms = now_ms;
    ChangeThroughput(t.throughput, 0, 0, now_ms);
    for (auto& g : t.global_indexes) ChangeThroughput(g.throughput, 0, 0, now_ms);
    updating = true;
  } else if (!on_demand && was_on_demand) {
    // Every GSI needs its throughput in GlobalSecondaryIndexUpdates.
    std::vector<std::string> missing;
    for (const auto& g : current.global_indexes) {
      bool given = r.gsi_updates &&
                   std::any_of(r.gsi_updates->begin(), r.gsi_updates->end(), [&](const auto& u) {
                     return u.has_update && *u.update_name == g.name;
                   });
      if (!given) missing.push_back(g.name);
    }
    if (!missing.empty()) {
      std::string names;
      for (const auto& n : missing) names += (names.empty() ? "" : ",") + n;
      return Invalid("ProvisionedThroughput must be specified for index: " + names);
    }
    t.billing_mode = store::BillingMode::kProvisioned;
    t.throughput.read_capacity_units = *r.throughput->read;
    t.throughput.write_capacity_units = *r.throughput->write;
    updating = true;
  } else if (r.throughput) {
    if (*r.throughput->read == current.throughput.read_capacity_units &&
        *r.throughput->write == current.throughput.write_capacity_units) {
      return Error::Validation(ThroughputUnchanged("table", current.throughput, *r.throughput));
    }
    ChangeThroughput(t.throughput, *r.throughput->read, *r.throughput->write, now_ms);
    updating = true;
  }
  if (r.gsi_updates) {
    for (const GsiUpdateIn& u : *r.gsi_updates) {
      if (u.has_create) {
        // A new GSI: CREATING and backfilling; the index worker fills it, then marks it ACTIVE.
        const std::string& name = *u.create_name;
        if (current.FindIndex(name) != nullptr) {
          return Invalid("Attempting to create an index which already exists");
        }
        // The new index's key attributes must be defined in this request, even those the
        // table already defines, and with the types they already have.
        std::vector<AttributeIn> defs;
        if (r.attribute_definitions) defs = *r.attribute_definitions;
        for (const AttributeIn& d : defs) {
          for (const auto& known : current.attribute_definitions) {
            if (known.name == *d.name && store::ScalarTypeName(known.type) != *d.type) {
              return Invalid("Cannot change the type of attribute " + known.name + " from " +
                             std::string(store::ScalarTypeName(known.type)) + " to " + *d.type);
            }
          }
        }
        FDYNO_ASSIGN_OR_RETURN(store::KeySchema iks,
                               ResolveKeySchema(*u.create.key_schema, defs, true));
        FDYNO_ASSIGN_OR_RETURN(store::Projection projection,
                               ResolveProjection(*u.create.projection));
        if (on_demand && u.create.throughput) {
          return Invalid("ProvisionedThroughput should not be specified for index: " + name +
                         " when BillingMode is PAY_PER_REQUEST");
        }
        if (!on_demand && !u.create.throughput) {
          return Invalid("ProvisionedThroughput is not specified for index: " + name);
        }
        store::SecondaryIndex index;
        index.name = name;
        index.id = t.next_index_id++;
        for (const model::KeyAttribute& k : iks.Attributes()) {
          bool known = std::any_of(t.attribute_definitions.begin(), t.attribute_definitions.end(),
                                   [&](const auto& d) { return d.name == k.name; });
          if (!known) t.attribute_definitions.push_back(k);
        }
        index.key_schema = std::move(iks);
        index.projection = std::move(projection);
        if (u.create.throughput) {
          index.throughput.read_capacity_units = *u.create.throughput->read;
          index.throughput.write_capacity_units = *u.create.throughput->write;
        }
        index.status = store::IndexStatus::kCreating;
        index.backfilling = true;
        t.global_indexes.push_back(std::move(index));
        updating = true;
        continue;
      }
      if (u.has_delete) {
        const std::string& name = *u.delete_name;
        auto it = std::find_if(t.global_indexes.begin(), t.global_indexes.end(),
                               [&](const auto& g) { return g.name == name; });
        if (it == t.global_indexes.end()) {
          return Error::ResourceNotFound("Requested resource not found: Index: " + name +
                                         " not found");
        }
        it->status = store::IndexStatus::kDeleting;  // removed by the index worker
        updating = true;
        continue;
      }
      const std::string& name = *u.update_name;
      auto it = std::find_if(t.global_indexes.begin(), t.global_indexes.end(),
                             [&](const auto& g) { return g.name == name; });
      if (it == t.global_indexes.end()) {
        if (current.FindIndex(name) != nullptr) {
          return Error::Validation("Cannot update an index that is not a GlobalSecondaryIndex: " +
                                   name);
        }
        return Error::ResourceNotFound("Requested resource not found: Index: " + name +
                                       " not found");
      }
      if (on_demand) {
        return Invalid("The only Updates for index: " + name +
                       " when TableThroughputMode is PAY_PER_REQUEST can be to "
                       "OnDemandThroughput, WarmThroughput");
      }
      if (!was_on_demand && *u.update_throughput->read == it->throughput.read_capacity_units &&
          *u.update_throughput->write == it->throughput.write_capacity_units) {
        return Error::Validation(
            ThroughputUnchanged("index " + name, it->throughput, *u.update_throughput));
      }
      if (was_on_demand) {
        it->throughput.read_capacity_units = *u.update_throughput->read;
        it->throughput.write_capacity_units = *u.update_throughput->write;
      } else {
        ChangeThroughput(it->throughput, *u.update_throughput->read, *u.update_throughput->write,
                         now_ms);
      }
      updating = true;
    }
  }
  if (r.stream) {
    if (*r.stream->enabled) {
      if (current.stream.enabled) {
        return Error::Validation("Table already has an enabled stream: TableName: " + current.name);
      }
      t.stream.enabled = true;
      t.stream.view_type = *ParseViewType(*r.stream->view_type);
      // Each stream has its own label (its ARN): one enabled again within the same millisecond
      // as the last one gets the next millisecond.
      t.stream.label = StreamLabel(now_ms);
      if (t.stream.label <= current.stream.label) {
        t.stream.label = StreamLabel(std::max(now_ms, LabelMillis(current.stream.label)) + 1);
      }
    } else {
      if (!current.stream.enabled) {
        return Error::Validation("Table has no stream to disable: TableName: " + current.name);
      }
      t.stream.enabled = false;
    }
    updating = true;
  }
  if (r.sse) {
    bool enable = r.sse->enabled.value_or(false);
    if (!enable) {
      if (!current.sse.enabled) return Invalid("Table is already encrypted by default");
      t.sse = {};
    } else {
      std::string key = r.sse->kms_key.value_or("");
      if (current.sse.enabled && current.sse.kms_master_key_id == key) {
        return Invalid(
            "Table is already encrypted with given KMSMasterKeyId. Use KMSMasterKeyId "
            "parameter if you want to change Master Key");
      }
      t.sse = {true, key};
    }
    updating = true;
  }
  if (r.table_class) {
    t.table_class = *ParseTableClass(*r.table_class);
    t.table_class_set = true;
    updating = true;
  }
  if (r.vector_updates) {
    std::vector<store::AttributeDefinition> defs;
    if (r.attribute_definitions) defs = TypedDefinitions(*r.attribute_definitions);
    FDYNO_RETURN_IF_ERROR(ApplyVectorIndexUpdates(*r.vector_updates, defs, t));
    updating = true;
  }
  FDYNO_RETURN_IF_ERROR(CheckVectorIndexBilling(t));
  if (r.deletion_protection) t.deletion_protection = *r.deletion_protection;
  if (r.on_demand) ApplyOnDemand(*r.on_demand, t.on_demand);
  return std::make_pair(std::move(t), updating);
}

Result<std::string> UpdateTable(Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(UpdateTableRequest r, ParseUpdateTable(body));
  FDYNO_ASSIGN_OR_RETURN(std::string name, ResolveTableName(ctx, r.table_name, "UpdateTable"));
  FDYNO_RETURN_IF_ERROR(CheckUpdateTableRequest(r));
  const int64_t now_ms = s.clock->WallMillis();
  std::optional<std::pair<TableInfo, bool>> written;  // what the latest attempt wrote
  FDYNO_ASSIGN_OR_RETURN(
      auto updated,
      kv::Run(*s.db, RunOptionsFor(ctx, s),
              [&](kv::Transaction& txn,
                  const kv::Attempt& attempt) -> Result<std::pair<TableInfo, bool>> {
                FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const TableInfo> t,
                                       s.catalog->Find(txn, name));
                if (!t) return TableNotFound(name);
                // After an ambiguous commit, the record the earlier attempt wrote is its
                // success (applying the request again would fail on its own effect).
                if (attempt.maybe_committed && written &&
                    store::EncodeTableInfo(*t) == store::EncodeTableInfo(written->first)) {
                  return *written;
                }
                FDYNO_RETURN_IF_ERROR(CheckNotCreating(*t));
                FDYNO_ASSIGN_OR_RETURN(auto plan, PlanUpdateTable(r, *t, now_ms));
                FDYNO_RETURN_IF_ERROR(
                    store::SyncStream(txn, t.get(), &plan.first, s.stream_slots, now_ms));
                FDYNO_RETURN_IF_ERROR(s.catalog->Update(txn, plan.first));
                written = plan;
                return plan;
              }));
  return DescriptionResponse("TableDescription", ctx, updated.first,
                             updated.second ? store::TableStatus::kUpdating : updated.first.status);
}

// ==== tags ==================================================================================

Error ArnNotFound(const std::string& arn) {
  return Error::ResourceNotFound("Requested resource not found: ResourcArn: " + arn + " not found");
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

Result<std::string> TagResource(Services& s, const RequestContext& ctx, const Value& body) {
  ConstraintErrors e;
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> arn, ReadResourceArn(body, e));
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::vector<TagIn>> tags, ParseTags(body));
  e.NotNull("tags", tags.has_value());
  CheckTagConstraints(e, tags);
  FDYNO_RETURN_IF_ERROR(e.ToStatus());
  FDYNO_ASSIGN_OR_RETURN(ArnTarget target, ParseTableArn(ctx, *arn, "TagResource"));
  if (tags->empty()) return Error::Validation("Atleast one Tag needs to be provided as Input.");
  FDYNO_ASSIGN_OR_RETURN(std::vector<store::Tag> add, ResolveTags(*tags));
  FDYNO_RETURN_IF_ERROR(kv::Run(
      *s.db, RunOptionsFor(ctx, s), [&](kv::Transaction& txn, const kv::Attempt&) -> Status {
        FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const TableInfo> t,
                               s.catalog->Find(txn, target.table));
        if (!t) return ArnNotFound(target.arn);
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
  if (keys) {
    for (size_t i = 0; i < keys->size(); ++i) {
      e.MinLength(MemberPath("tagKeys", i), (*keys)[i], 1);
      e.MaxLength(MemberPath("tagKeys", i), (*keys)[i], 128);
    }
  }
  FDYNO_RETURN_IF_ERROR(e.ToStatus());
  FDYNO_ASSIGN_OR_RETURN(ArnTarget target, ParseTableArn(ctx, *arn, "UntagResource"));
  if (keys->empty()) return Error::Validation("Atleast one Tag Key needs to be provided as Input.");
  FDYNO_RETURN_IF_ERROR(kv::Run(
      *s.db, RunOptionsFor(ctx, s), [&](kv::Transaction& txn, const kv::Attempt&) -> Status {
        FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const TableInfo> t,
                               s.catalog->Find(txn, target.table));
        if (!t) return ArnNotFound(target.arn);
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
                                       s.catalog->Find(txn, target.table));
                if (!t) return ArnNotFound(target.arn);
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
  return Json(buffer);
}

}  // namespace

void RegisterTableOperations(OperationRegistry& registry, const Services& services) {
  auto s = std::make_shared<Services>(services);
  auto bind = [s](Result<std::string> (*fn)(Services&, const RequestContext&, const Value&)) {
    return [s, fn](const RequestContext& ctx, const Value& body) { return fn(*s, ctx, body); };
  };
  registry.Register("CreateTable", bind(&CreateTable));
  registry.Register("DescribeTable", bind(&DescribeTable));
  registry.Register("ListTables", bind(&ListTables));
  registry.Register("DeleteTable", bind(&DeleteTable));
  registry.Register("UpdateTable", bind(&UpdateTable));
  registry.Register("TagResource", bind(&TagResource));
  registry.Register("UntagResource", bind(&UntagResource));
  registry.Register("ListTagsOfResource", bind(&ListTagsOfResource));
}

}  // namespace fdyno::api
