#include "store/catalog.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <array>
#include <cstring>
#include <random>
#include <utility>

#include "base/stop_flag.h"
#include "kv/run.h"
#include "store/layout.h"
#include "store/vector_index_record.h"

namespace fdyno::store {
namespace {

// Catalog record and tag-set format version (first byte of the value). Persisted.
// Table record format versions. Version 2 adds the stream id and the TTL settings; version 1
// records (no such members) still read. Version 3 is a version 2 record with vector indexes
// ("vector_indexes"): only tables that have some are written so, and binaries that predate
// them reject it. Persisted: never renumber.
constexpr uint8_t kTableRecordVersion1 = 1;
constexpr uint8_t kTableRecordVersion = 2;
constexpr uint8_t kTableRecordVersion3 = 3;
constexpr uint8_t kTagsRecordVersion = 1;
// Pending-purge marker format version. Persisted.
constexpr uint8_t kPurgeMarkerVersion = 1;

// Catalog format versions (the value of the format key). 1: tables global, keyed by name
// (no format key was written); 2: tables keyed by (account, name). Persisted.
constexpr uint8_t kCatalogFormatAccounts = 2;
constexpr uint8_t kCatalogFormat = kCatalogFormatAccounts;

// Inner layout of the catalog subspace. Persisted: never renumber or reuse.
enum class CatalogPart : int64_t {
  kTableByName = 1,     // format 1 only: (1, 1, name) -> table record; moved by Migrate
  kNextTableId = 2,     // (1, 2) -> 8-byte little-endian counter
  kTags = 3,            // (1, 3, table_id) -> tag set
  kPendingPurge = 4,    // (1, 4, table_id) -> purge marker
  kTableByAccount = 5,  // (1, 5, account, name) -> table record
  kFormat = 6,          // (1, 6) -> catalog format version, one byte
  kPolicies = 7,        // (1, 7, table_id, slot) -> resource policy (store/policies.h)
  kPurgeHold = 8,       // (1, 8, table_id) -> empty: the dropped table's purge waits
};

int64_t Part(CatalogPart p) { return static_cast<int64_t>(p); }

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void WriteStr(Writer& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

std::string_view ProjectionTypeName(ProjectionType t) {
  switch (t) {
    case ProjectionType::kAll:
      return "ALL";
    case ProjectionType::kKeysOnly:
      return "KEYS_ONLY";
    case ProjectionType::kInclude:
      return "INCLUDE";
  }
  return "ALL";
}

std::string_view StreamViewTypeName(StreamViewType t) {
  switch (t) {
    case StreamViewType::kNewImage:
      return "NEW_IMAGE";
    case StreamViewType::kOldImage:
      return "OLD_IMAGE";
    case StreamViewType::kNewAndOldImages:
      return "NEW_AND_OLD_IMAGES";
    case StreamViewType::kKeysOnly:
      return "KEYS_ONLY";
  }
  return "NEW_AND_OLD_IMAGES";
}

std::string_view StatusName(TableStatus s) {
  switch (s) {
    case TableStatus::kCreating:
      return "CREATING";
    case TableStatus::kUpdating:
      return "UPDATING";
    case TableStatus::kDeleting:
      return "DELETING";
    case TableStatus::kActive:
      return "ACTIVE";
  }
  return "ACTIVE";
}

std::string_view IndexStatusName(IndexStatus s) {
  switch (s) {
    case IndexStatus::kCreating:
      return "CREATING";
    case IndexStatus::kUpdating:
      return "UPDATING";
    case IndexStatus::kDeleting:
      return "DELETING";
    case IndexStatus::kActive:
      return "ACTIVE";
  }
  return "ACTIVE";
}

void WriteAttr(Writer& w, const AttributeDefinition& a) {
  w.StartObject();
  w.Key("name");
  WriteStr(w, a.name);
  w.Key("type");
  WriteStr(w, ScalarTypeName(a.type));
  w.EndObject();
}

// A role with one attribute is that attribute's object; a multi-attribute key's roles are
// arrays, which a binary without multi-attribute keys rejects (fails closed) rather than
// reading as a one-attribute key.
void WriteKeyRole(Writer& w, const std::vector<AttributeDefinition>& attrs, bool multi) {
  if (!multi) return WriteAttr(w, attrs[0]);
  w.StartArray();
  for (const auto& a : attrs) WriteAttr(w, a);
  w.EndArray();
}

void WriteKeySchema(Writer& w, const KeySchema& k) {
  const bool multi = k.multi_attribute();
  w.StartObject();
  w.Key("hash");
  WriteKeyRole(w, k.HashAttributes(), multi);
  if (k.range) {
    w.Key("range");
    WriteKeyRole(w, k.RangeAttributes(), multi);
  }
  w.EndObject();
}

void WriteThroughput(Writer& w, const Throughput& t) {
  w.StartObject();
  w.Key("read");
  w.Int64(t.read_capacity_units);
  w.Key("write");
  w.Int64(t.write_capacity_units);
  w.Key("last_increase_ms");
  w.Int64(t.last_increase_ms);
  w.Key("last_decrease_ms");
  w.Int64(t.last_decrease_ms);
  w.Key("decreases_today");
  w.Int64(t.number_of_decreases_today);
  w.EndObject();
}

// A pair of units (OnDemandThroughput, WarmThroughput) as the optional member `key`,
// {"read": integer, "write": integer}; absent when both are 0.
void WriteUnits(Writer& w, const char* key, int64_t read, int64_t write) {
  if (read == 0 && write == 0) return;
  w.Key(key);
  w.StartObject();
  w.Key("read");
  w.Int64(read);
  w.Key("write");
  w.Int64(write);
  w.EndObject();
}

void WriteCapacitySettings(Writer& w, const OnDemandLimits& on_demand, const WarmThroughput& warm) {
  WriteUnits(w, "on_demand", on_demand.max_read_request_units, on_demand.max_write_request_units);
  WriteUnits(w, "warm", warm.read_units_per_second, warm.write_units_per_second);
}

constexpr std::array<std::pair<std::string_view, InsightsStatus>, 3> kInsightsStatuses = {{
    {"DISABLED", InsightsStatus::kDisabled},
    {"ENABLED", InsightsStatus::kEnabled},
    {"FAILED", InsightsStatus::kFailed},
}};
constexpr std::array<std::pair<std::string_view, InsightsMode>, 2> kInsightsModes = {{
    {"ACCESSED_AND_THROTTLED_KEYS", InsightsMode::kAccessedAndThrottledKeys},
    {"THROTTLED_KEYS", InsightsMode::kThrottledKeys},
}};

template <typename E, size_t N>
std::string_view EnumName(E value, const std::array<std::pair<std::string_view, E>, N>& table) {
  for (const auto& [text, v] : table) {
    if (v == value) return text;
  }
  return table[0].first;
}

// Absent while never configured (records before Contributor Insights read so).
void WriteInsights(Writer& w, const InsightsSettings& i) {
  if (i.updated_ms == 0) return;
  w.Key("insights");
  w.StartObject();
  w.Key("status");
  WriteStr(w, EnumName(i.status, kInsightsStatuses));
  w.Key("mode");
  WriteStr(w, EnumName(i.mode, kInsightsModes));
  w.Key("updated_ms");
  w.Int64(i.updated_ms);
  w.Key("rules_ms");
  w.Int64(i.rules_ms);
  w.EndObject();
}

void WriteIndex(Writer& w, const SecondaryIndex& i) {
  w.StartObject();
  w.Key("name");
  WriteStr(w, i.name);
  w.Key("id");
  w.Int64(i.id);
  w.Key("key_schema");
  WriteKeySchema(w, i.key_schema);
  w.Key("projection");
  WriteStr(w, ProjectionTypeName(i.projection.type));
  w.Key("non_key_attributes");
  w.StartArray();
  for (const auto& a : i.projection.non_key_attributes) WriteStr(w, a);
  w.EndArray();
  w.Key("throughput");
  WriteThroughput(w, i.throughput);
  WriteCapacitySettings(w, i.on_demand, i.warm);
  w.Key("status");
  WriteStr(w, IndexStatusName(i.status));
  w.Key("backfilling");
  w.Bool(i.backfilling);
  WriteInsights(w, i.insights);
  w.EndObject();
}

// ---- decoding ----

Error Corrupt(std::string_view what) {
  return Error::Internal("corrupt catalog record: " + std::string(what));
}

Result<const rapidjson::Value*> Field(const rapidjson::Value& obj, const char* name) {
  if (!obj.IsObject()) return Corrupt("expected an object");
  auto it = obj.FindMember(name);
  if (it == obj.MemberEnd()) return Corrupt(std::string("missing ") + name);
  return &it->value;
}

Result<std::string> Str(const rapidjson::Value& obj, const char* name) {
  FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* v, Field(obj, name));
  if (!v->IsString()) return Corrupt(std::string(name) + " is not a string");
  return std::string(v->GetString(), v->GetStringLength());
}

Result<int64_t> Int(const rapidjson::Value& obj, const char* name) {
  FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* v, Field(obj, name));
  if (!v->IsInt64()) return Corrupt(std::string(name) + " is not an integer");
  return v->GetInt64();
}

Result<bool> Bool(const rapidjson::Value& obj, const char* name) {
  FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* v, Field(obj, name));
  if (!v->IsBool()) return Corrupt(std::string(name) + " is not a boolean");
  return v->GetBool();
}

// Optional members default when absent, so later versions of this format can add members
// without a version bump as long as absence keeps the old meaning.
Result<bool> OptBool(const rapidjson::Value& obj, const char* name, bool def) {
  if (!obj.HasMember(name)) return def;
  return Bool(obj, name);
}
Result<int64_t> OptInt(const rapidjson::Value& obj, const char* name, int64_t def) {
  if (!obj.HasMember(name)) return def;
  return Int(obj, name);
}

// An optional array of times (ms), absent: none.
Result<std::vector<int64_t>> OptTimes(const rapidjson::Value& obj, const char* name) {
  std::vector<int64_t> out;
  if (!obj.HasMember(name)) return out;
  const rapidjson::Value& v = obj[name];
  if (!v.IsArray()) return Corrupt(std::string(name) + " is not an array");
  for (const rapidjson::Value& e : v.GetArray()) {
    if (!e.IsInt64()) return Corrupt(std::string(name) + " holds a non-integer");
    out.push_back(e.GetInt64());
  }
  return out;
}

template <typename E, size_t N>
Result<E> EnumFrom(const rapidjson::Value& obj, const char* name,
                   const std::array<std::pair<std::string_view, E>, N>& table) {
  FDYNO_ASSIGN_OR_RETURN(std::string s, Str(obj, name));
  for (const auto& [text, value] : table) {
    if (text == s) return value;
  }
  return Corrupt(std::string("unknown ") + name + " " + s);
}

constexpr std::array<std::pair<std::string_view, ProjectionType>, 3> kProjectionTypes = {{
    {"ALL", ProjectionType::kAll},
    {"KEYS_ONLY", ProjectionType::kKeysOnly},
    {"INCLUDE", ProjectionType::kInclude},
}};
constexpr std::array<std::pair<std::string_view, StreamViewType>, 4> kViewTypes = {{
    {"NEW_IMAGE", StreamViewType::kNewImage},
    {"OLD_IMAGE", StreamViewType::kOldImage},
    {"NEW_AND_OLD_IMAGES", StreamViewType::kNewAndOldImages},
    {"KEYS_ONLY", StreamViewType::kKeysOnly},
}};
constexpr std::array<std::pair<std::string_view, TtlStatus>, 4> kTtlStatuses = {{
    {"DISABLED", TtlStatus::kDisabled},
    {"ENABLING", TtlStatus::kEnabling},
    {"ENABLED", TtlStatus::kEnabled},
    {"DISABLING", TtlStatus::kDisabling},
}};
constexpr std::array<std::pair<std::string_view, TableStatus>, 4> kTableStatuses = {{
    {"CREATING", TableStatus::kCreating},
    {"UPDATING", TableStatus::kUpdating},
    {"DELETING", TableStatus::kDeleting},
    {"ACTIVE", TableStatus::kActive},
}};
constexpr std::array<std::pair<std::string_view, IndexStatus>, 4> kIndexStatuses = {{
    {"CREATING", IndexStatus::kCreating},
    {"UPDATING", IndexStatus::kUpdating},
    {"DELETING", IndexStatus::kDeleting},
    {"ACTIVE", IndexStatus::kActive},
}};
constexpr std::array<std::pair<std::string_view, BillingMode>, 2> kBillingModes = {{
    {"PROVISIONED", BillingMode::kProvisioned},
    {"PAY_PER_REQUEST", BillingMode::kPayPerRequest},
}};
constexpr std::array<std::pair<std::string_view, TableClass>, 2> kTableClasses = {{
    {"STANDARD", TableClass::kStandard},
    {"STANDARD_INFREQUENT_ACCESS", TableClass::kStandardInfrequentAccess},
}};

Result<AttributeDefinition> ReadAttr(const rapidjson::Value& v) {
  AttributeDefinition a;
  FDYNO_ASSIGN_OR_RETURN(a.name, Str(v, "name"));
  FDYNO_ASSIGN_OR_RETURN(std::string type, Str(v, "type"));
  std::optional<ScalarType> t = ParseScalarType(type);
  if (!t) return Corrupt("unknown attribute type " + type);
  a.type = *t;
  return a;
}

// One role of a key schema: an attribute object, or an array of 1 to 4 of them.
Result<std::vector<AttributeDefinition>> ReadKeyRole(const rapidjson::Value& v) {
  std::vector<AttributeDefinition> out;
  if (!v.IsArray()) {
    FDYNO_ASSIGN_OR_RETURN(AttributeDefinition a, ReadAttr(v));
    out.push_back(std::move(a));
    return out;
  }
  if (v.Empty() || v.Size() > model::kMaxKeyAttributesPerRole) {
    return Corrupt("key attribute list of a wrong length");
  }
  for (const auto& e : v.GetArray()) {
    FDYNO_ASSIGN_OR_RETURN(AttributeDefinition a, ReadAttr(e));
    out.push_back(std::move(a));
  }
  return out;
}

Result<KeySchema> ReadKeySchema(const rapidjson::Value& v) {
  KeySchema k;
  FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* hash, Field(v, "hash"));
  FDYNO_ASSIGN_OR_RETURN(std::vector<AttributeDefinition> hashes, ReadKeyRole(*hash));
  k.hash = hashes[0];
  k.more_hash.assign(hashes.begin() + 1, hashes.end());
  if (v.HasMember("range")) {
    FDYNO_ASSIGN_OR_RETURN(std::vector<AttributeDefinition> ranges, ReadKeyRole(v["range"]));
    k.range = ranges[0];
    k.more_range.assign(ranges.begin() + 1, ranges.end());
  }
  return k;
}

Result<Throughput> ReadThroughput(const rapidjson::Value& v) {
  Throughput t;
  FDYNO_ASSIGN_OR_RETURN(t.read_capacity_units, Int(v, "read"));
  FDYNO_ASSIGN_OR_RETURN(t.write_capacity_units, Int(v, "write"));
  FDYNO_ASSIGN_OR_RETURN(t.last_increase_ms, OptInt(v, "last_increase_ms", 0));
  FDYNO_ASSIGN_OR_RETURN(t.last_decrease_ms, OptInt(v, "last_decrease_ms", 0));
  FDYNO_ASSIGN_OR_RETURN(t.number_of_decreases_today, OptInt(v, "decreases_today", 0));
  return t;
}

// The optional member `key` WriteUnits wrote: {0, 0} when absent.
Result<std::pair<int64_t, int64_t>> ReadUnits(const rapidjson::Value& obj, const char* key) {
  if (!obj.HasMember(key)) return std::pair<int64_t, int64_t>{0, 0};
  FDYNO_ASSIGN_OR_RETURN(int64_t read, Int(obj[key], "read"));
  FDYNO_ASSIGN_OR_RETURN(int64_t write, Int(obj[key], "write"));
  return std::pair{read, write};
}

Status ReadCapacitySettings(const rapidjson::Value& obj, OnDemandLimits& on_demand,
                            WarmThroughput& warm) {
  FDYNO_ASSIGN_OR_RETURN(auto limits, ReadUnits(obj, "on_demand"));
  on_demand = {limits.first, limits.second};
  FDYNO_ASSIGN_OR_RETURN(auto units, ReadUnits(obj, "warm"));
  warm = {units.first, units.second};
  return Status::Ok();
}

Result<InsightsSettings> ReadInsights(const rapidjson::Value& obj) {
  InsightsSettings i;
  if (!obj.HasMember("insights")) return i;
  const rapidjson::Value& v = obj["insights"];
  FDYNO_ASSIGN_OR_RETURN(i.status, EnumFrom(v, "status", kInsightsStatuses));
  FDYNO_ASSIGN_OR_RETURN(i.mode, EnumFrom(v, "mode", kInsightsModes));
  FDYNO_ASSIGN_OR_RETURN(i.updated_ms, Int(v, "updated_ms"));
  FDYNO_ASSIGN_OR_RETURN(i.rules_ms, Int(v, "rules_ms"));
  if (i.updated_ms <= 0) return Corrupt("insights");
  return i;
}

Result<SecondaryIndex> ReadIndex(const rapidjson::Value& v) {
  SecondaryIndex i;
  FDYNO_ASSIGN_OR_RETURN(i.name, Str(v, "name"));
  FDYNO_ASSIGN_OR_RETURN(i.id, Int(v, "id"));
  FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* ks, Field(v, "key_schema"));
  FDYNO_ASSIGN_OR_RETURN(i.key_schema, ReadKeySchema(*ks));
  FDYNO_ASSIGN_OR_RETURN(i.projection.type, EnumFrom(v, "projection", kProjectionTypes));
  FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* nka, Field(v, "non_key_attributes"));
  if (!nka->IsArray()) return Corrupt("non_key_attributes is not a list");
  for (const auto& a : nka->GetArray()) {
    if (!a.IsString()) return Corrupt("non_key_attributes member is not a string");
    i.projection.non_key_attributes.emplace_back(a.GetString(), a.GetStringLength());
  }
  FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* tp, Field(v, "throughput"));
  FDYNO_ASSIGN_OR_RETURN(i.throughput, ReadThroughput(*tp));
  FDYNO_RETURN_IF_ERROR(ReadCapacitySettings(v, i.on_demand, i.warm));
  FDYNO_ASSIGN_OR_RETURN(i.status, EnumFrom(v, "status", kIndexStatuses));
  FDYNO_ASSIGN_OR_RETURN(i.backfilling, OptBool(v, "backfilling", false));
  FDYNO_ASSIGN_OR_RETURN(i.insights, ReadInsights(v));
  return i;
}

Result<std::vector<SecondaryIndex>> ReadIndexes(const rapidjson::Value& obj, const char* name) {
  std::vector<SecondaryIndex> out;
  FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* list, Field(obj, name));
  if (!list->IsArray()) return Corrupt(std::string(name) + " is not a list");
  for (const auto& v : list->GetArray()) {
    FDYNO_ASSIGN_OR_RETURN(SecondaryIndex i, ReadIndex(v));
    out.push_back(std::move(i));
  }
  return out;
}

// A catalog counter (metadata version, next table id): absent is 0; malformed fails closed.
Result<uint64_t> CounterValue(const std::optional<std::string>& bytes, const char* what) {
  if (!bytes) return uint64_t{0};
  std::optional<int64_t> v = kv::DecodeCounter(*bytes);
  if (!v) return Error::Internal(std::string("catalog ") + what + " is malformed");
  return static_cast<uint64_t>(*v);
}

// A random version-4 UUID for DescribeTable's TableId.
std::string NewUuid() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  uint64_t a = rng(), b = rng();
  a = (a & 0xFFFFFFFFFFFF0FFFull) | 0x0000000000004000ull;
  b = (b & 0x3FFFFFFFFFFFFFFFull) | 0x8000000000000000ull;
  char buf[37];
  std::snprintf(buf, sizeof(buf), "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xFFFF), static_cast<unsigned>(a & 0xFFFF),
                static_cast<unsigned>(b >> 48),
                static_cast<unsigned long long>(b & 0xFFFFFFFFFFFFull));
  return buf;
}

}  // namespace

const SearchSchemaElement* VectorIndex::Hash() const {
  for (const SearchSchemaElement& e : search_schema) {
    if (e.role == SearchRole::kHash) return &e;
  }
  return nullptr;
}

const VectorIndex* TableInfo::FindVectorIndex(std::string_view index_name) const {
  for (const VectorIndex& v : vector_indexes) {
    if (v.name == index_name) return &v;
  }
  return nullptr;
}

bool TableInfo::CountsKeyAccesses() const {
  if (insights.enabled()) return true;
  for (const SecondaryIndex& i : global_indexes) {
    if (i.insights.enabled()) return true;
  }
  return false;
}

const SecondaryIndex* TableInfo::FindIndex(std::string_view index_name) const {
  for (const auto& i : local_indexes) {
    if (i.name == index_name) return &i;
  }
  for (const auto& i : global_indexes) {
    if (i.name == index_name) return &i;
  }
  return nullptr;
}

std::string NewTableUuid() { return NewUuid(); }

std::string EncodeTableInfo(const TableInfo& t) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  w.Key("account");
  WriteStr(w, t.account);
  w.Key("name");
  WriteStr(w, t.name);
  w.Key("id");
  w.Int64(t.id);
  w.Key("uuid");
  WriteStr(w, t.uuid);
  w.Key("creation_ms");
  w.Int64(t.creation_ms);
  w.Key("status");
  WriteStr(w, StatusName(t.status));
  w.Key("attribute_definitions");
  w.StartArray();
  for (const auto& a : t.attribute_definitions) WriteAttr(w, a);
  w.EndArray();
  w.Key("key_schema");
  WriteKeySchema(w, t.key_schema);
  w.Key("billing_mode");
  WriteStr(w, EnumName(t.billing_mode, kBillingModes));
  w.Key("last_update_to_pay_per_request_ms");
  w.Int64(t.last_update_to_pay_per_request_ms);
  w.Key("throughput");
  WriteThroughput(w, t.throughput);
  w.Key("local_indexes");
  w.StartArray();
  for (const auto& i : t.local_indexes) WriteIndex(w, i);
  w.EndArray();
  w.Key("global_indexes");
  w.StartArray();
  for (const auto& i : t.global_indexes) WriteIndex(w, i);
  w.EndArray();
  if (!t.vector_indexes.empty()) {
    w.Key("vector_indexes");
    WriteVectorIndexes(w, t.vector_indexes);
  }
  w.Key("stream");
  w.StartObject();
  w.Key("enabled");
  w.Bool(t.stream.enabled);
  w.Key("view_type");
  WriteStr(w, StreamViewTypeName(t.stream.view_type));
  w.Key("label");
  WriteStr(w, t.stream.label);
  w.Key("id");
  w.Int64(t.stream.stream_id);
  w.Key("slots");
  w.Int(t.stream.slots);
  w.EndObject();
  w.Key("ttl");
  w.StartObject();
  w.Key("status");
  WriteStr(w, EnumName(t.ttl.status, kTtlStatuses));
  w.Key("attribute");
  WriteStr(w, t.ttl.attribute);
  w.Key("updated_ms");
  w.Int64(t.ttl.updated_ms);
  w.EndObject();
  w.Key("sse");
  w.StartObject();
  w.Key("enabled");
  w.Bool(t.sse.enabled);
  w.Key("kms_master_key_id");
  WriteStr(w, t.sse.kms_master_key_id);
  w.EndObject();
  w.Key("table_class");
  WriteStr(w, EnumName(t.table_class, kTableClasses));
  w.Key("table_class_set");
  w.Bool(t.table_class_set);
  if (!t.table_class_changes_ms.empty()) {
    w.Key("table_class_changes_ms");
    w.StartArray();
    for (int64_t ms : t.table_class_changes_ms) w.Int64(ms);
    w.EndArray();
  }
  w.Key("deletion_protection");
  w.Bool(t.deletion_protection);
  if (t.deletion_protection_ms != 0) {
    w.Key("deletion_protection_ms");
    w.Int64(t.deletion_protection_ms);
  }
  WriteCapacitySettings(w, t.on_demand, t.warm);
  w.Key("next_index_id");
  w.Int64(t.next_index_id);
  if (t.restore) {
    w.Key("restore");
    w.StartObject();
    w.Key("backup");
    WriteStr(w, t.restore->source_backup_id);
    w.Key("table");
    WriteStr(w, t.restore->source_table_name);
    w.Key("time_ms");
    w.Int64(t.restore->restore_ms);
    w.Key("in_progress");
    w.Bool(t.restore->in_progress);
    w.EndObject();
  }
  if (t.pitr.epoch != 0) {
    w.Key("pitr");
    w.StartObject();
    w.Key("enabled");
    w.Bool(t.pitr.enabled);
    w.Key("epoch");
    w.Int64(t.pitr.epoch);
    w.Key("days");
    w.Int64(t.pitr.recovery_days);
    w.Key("since_ms");
    w.Int64(t.pitr.since_ms);
    w.EndObject();
  }
  WriteInsights(w, t.insights);
  if (t.has_policies) {
    w.Key("has_policies");
    w.Bool(true);
  }
  if (!t.kinesis.empty()) {
    w.Key("kinesis");
    w.StartArray();
    for (const KinesisDestination& k : t.kinesis) {
      w.StartObject();
      w.Key("stream_arn");
      WriteStr(w, k.stream_arn);
      w.Key("status");
      WriteStr(w, k.status);
      w.Key("description");
      WriteStr(w, k.description);
      w.Key("precision");
      WriteStr(w, k.precision);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  const uint8_t version = t.vector_indexes.empty() ? kTableRecordVersion : kTableRecordVersion3;
  std::string out(1, static_cast<char>(version));
  out.append(buf.GetString(), buf.GetSize());
  return out;
}

Result<TableInfo> DecodeTableInfo(std::string_view bytes) {
  if (bytes.empty()) return Corrupt("empty");
  const uint8_t version = static_cast<uint8_t>(bytes[0]);
  if (version != kTableRecordVersion && version != kTableRecordVersion1 &&
      version != kTableRecordVersion3) {
    return Error::Internal("unknown catalog record format version " + std::to_string(version));
  }
  rapidjson::Document d;
  d.Parse(bytes.data() + 1, bytes.size() - 1);
  if (d.HasParseError() || !d.IsObject()) return Corrupt("not a JSON object");
  TableInfo t;
  // Absent in records written before tables had accounts: those are the shared account's.
  if (d.HasMember("account")) {
    FDYNO_ASSIGN_OR_RETURN(t.account, Str(d, "account"));
  }
  FDYNO_ASSIGN_OR_RETURN(t.name, Str(d, "name"));
  FDYNO_ASSIGN_OR_RETURN(t.id, Int(d, "id"));
  FDYNO_ASSIGN_OR_RETURN(t.uuid, Str(d, "uuid"));
  FDYNO_ASSIGN_OR_RETURN(t.creation_ms, Int(d, "creation_ms"));
  FDYNO_ASSIGN_OR_RETURN(t.status, EnumFrom(d, "status", kTableStatuses));
  FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* defs, Field(d, "attribute_definitions"));
  if (!defs->IsArray()) return Corrupt("attribute_definitions is not a list");
  for (const auto& a : defs->GetArray()) {
    FDYNO_ASSIGN_OR_RETURN(AttributeDefinition def, ReadAttr(a));
    t.attribute_definitions.push_back(std::move(def));
  }
  FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* ks, Field(d, "key_schema"));
  FDYNO_ASSIGN_OR_RETURN(t.key_schema, ReadKeySchema(*ks));
  FDYNO_ASSIGN_OR_RETURN(t.billing_mode, EnumFrom(d, "billing_mode", kBillingModes));
  FDYNO_ASSIGN_OR_RETURN(t.last_update_to_pay_per_request_ms,
                         OptInt(d, "last_update_to_pay_per_request_ms", 0));
  FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* tp, Field(d, "throughput"));
  FDYNO_ASSIGN_OR_RETURN(t.throughput, ReadThroughput(*tp));
  FDYNO_ASSIGN_OR_RETURN(t.local_indexes, ReadIndexes(d, "local_indexes"));
  FDYNO_ASSIGN_OR_RETURN(t.global_indexes, ReadIndexes(d, "global_indexes"));
  if (version == kTableRecordVersion3) {
    FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* vectors, Field(d, "vector_indexes"));
    FDYNO_ASSIGN_OR_RETURN(t.vector_indexes, ReadVectorIndexes(*vectors));
  }
  FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* stream, Field(d, "stream"));
  FDYNO_ASSIGN_OR_RETURN(t.stream.enabled, Bool(*stream, "enabled"));
  FDYNO_ASSIGN_OR_RETURN(t.stream.view_type, EnumFrom(*stream, "view_type", kViewTypes));
  FDYNO_ASSIGN_OR_RETURN(t.stream.label, Str(*stream, "label"));
  if (version != kTableRecordVersion1) {
    FDYNO_ASSIGN_OR_RETURN(t.stream.stream_id, Int(*stream, "id"));
    FDYNO_ASSIGN_OR_RETURN(int64_t slots, Int(*stream, "slots"));
    if (slots < 1 || slots > 255) return Corrupt("stream slots");
    t.stream.slots = static_cast<int>(slots);
    FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* ttl, Field(d, "ttl"));
    FDYNO_ASSIGN_OR_RETURN(t.ttl.status, EnumFrom(*ttl, "status", kTtlStatuses));
    FDYNO_ASSIGN_OR_RETURN(t.ttl.attribute, Str(*ttl, "attribute"));
    FDYNO_ASSIGN_OR_RETURN(t.ttl.updated_ms, Int(*ttl, "updated_ms"));
  }
  FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* sse, Field(d, "sse"));
  FDYNO_ASSIGN_OR_RETURN(t.sse.enabled, Bool(*sse, "enabled"));
  FDYNO_ASSIGN_OR_RETURN(t.sse.kms_master_key_id, Str(*sse, "kms_master_key_id"));
  FDYNO_ASSIGN_OR_RETURN(t.table_class, EnumFrom(d, "table_class", kTableClasses));
  FDYNO_ASSIGN_OR_RETURN(t.table_class_set, OptBool(d, "table_class_set", false));
  FDYNO_ASSIGN_OR_RETURN(t.table_class_changes_ms, OptTimes(d, "table_class_changes_ms"));
  FDYNO_ASSIGN_OR_RETURN(t.deletion_protection, OptBool(d, "deletion_protection", false));
  FDYNO_ASSIGN_OR_RETURN(t.deletion_protection_ms, OptInt(d, "deletion_protection_ms", 0));
  FDYNO_RETURN_IF_ERROR(ReadCapacitySettings(d, t.on_demand, t.warm));
  FDYNO_ASSIGN_OR_RETURN(t.next_index_id, Int(d, "next_index_id"));
  if (d.HasMember("restore")) {
    const rapidjson::Value& r = d["restore"];
    RestoreSummary summary;
    FDYNO_ASSIGN_OR_RETURN(summary.source_backup_id, Str(r, "backup"));
    FDYNO_ASSIGN_OR_RETURN(summary.source_table_name, Str(r, "table"));
    FDYNO_ASSIGN_OR_RETURN(summary.restore_ms, Int(r, "time_ms"));
    FDYNO_ASSIGN_OR_RETURN(summary.in_progress, Bool(r, "in_progress"));
    t.restore = std::move(summary);
  }
  if (d.HasMember("pitr")) {
    const rapidjson::Value& p = d["pitr"];
    FDYNO_ASSIGN_OR_RETURN(t.pitr.enabled, Bool(p, "enabled"));
    FDYNO_ASSIGN_OR_RETURN(t.pitr.epoch, Int(p, "epoch"));
    FDYNO_ASSIGN_OR_RETURN(t.pitr.recovery_days, Int(p, "days"));
    FDYNO_ASSIGN_OR_RETURN(t.pitr.since_ms, Int(p, "since_ms"));
    if (t.pitr.epoch < 1 || t.pitr.recovery_days < 1 || t.pitr.recovery_days > 35) {
      return Corrupt("pitr");
    }
  }
  FDYNO_ASSIGN_OR_RETURN(t.insights, ReadInsights(d));
  FDYNO_ASSIGN_OR_RETURN(t.has_policies, OptBool(d, "has_policies", false));
  if (d.HasMember("kinesis")) {
    if (!d["kinesis"].IsArray()) return Corrupt("kinesis is not a list");
    for (const auto& k : d["kinesis"].GetArray()) {
      KinesisDestination dest;
      FDYNO_ASSIGN_OR_RETURN(dest.stream_arn, Str(k, "stream_arn"));
      FDYNO_ASSIGN_OR_RETURN(dest.status, Str(k, "status"));
      FDYNO_ASSIGN_OR_RETURN(dest.description, Str(k, "description"));
      FDYNO_ASSIGN_OR_RETURN(dest.precision, Str(k, "precision"));
      t.kinesis.push_back(std::move(dest));
    }
  }
  return t;
}

std::string EncodeTags(const std::vector<Tag>& tags) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartArray();
  for (const auto& t : tags) {
    w.StartArray();
    WriteStr(w, t.key);
    WriteStr(w, t.value);
    w.EndArray();
  }
  w.EndArray();
  std::string out(1, static_cast<char>(kTagsRecordVersion));
  out.append(buf.GetString(), buf.GetSize());
  return out;
}

Result<std::vector<Tag>> DecodeTags(std::string_view bytes) {
  if (bytes.empty() || static_cast<uint8_t>(bytes[0]) != kTagsRecordVersion) {
    return Error::Internal("unknown or corrupt tag record format");
  }
  rapidjson::Document d;
  d.Parse(bytes.data() + 1, bytes.size() - 1);
  if (d.HasParseError() || !d.IsArray()) return Corrupt("tags are not a JSON list");
  std::vector<Tag> tags;
  for (const auto& t : d.GetArray()) {
    if (!t.IsArray() || t.Size() != 2 || !t[0].IsString() || !t[1].IsString()) {
      return Corrupt("tag is not a [key, value] pair");
    }
    tags.push_back({std::string(t[0].GetString(), t[0].GetStringLength()),
                    std::string(t[1].GetString(), t[1].GetStringLength())});
  }
  return tags;
}

// ---- Catalog ----

Catalog::Catalog(Clock* clock, CatalogOptions options)
    : clock_(clock), options_(options), cache_(std::make_shared<Cache>()) {}

std::string Catalog::TableKey(std::string_view account, std::string_view name) {
  return layout::Catalog().Pack(kv::Tuple{Part(CatalogPart::kTableByAccount), account, name});
}
std::string Catalog::LegacyTableKey(std::string_view name) {
  return layout::Catalog().Pack(kv::Tuple{Part(CatalogPart::kTableByName), name});
}
std::string Catalog::FormatKey() {
  return layout::Catalog().Pack(kv::Tuple{Part(CatalogPart::kFormat)});
}
std::string Catalog::TagsKey(int64_t table_id) {
  return layout::Catalog().Pack(kv::Tuple{Part(CatalogPart::kTags), table_id});
}
std::string Catalog::PolicyKey(int64_t table_id, std::string_view slot) {
  return layout::Catalog().Pack(kv::Tuple{Part(CatalogPart::kPolicies), table_id, slot});
}
std::string Catalog::PendingPurgeKey(int64_t table_id) {
  return layout::Catalog().Pack(kv::Tuple{Part(CatalogPart::kPendingPurge), table_id});
}
std::string Catalog::PurgeHoldKey(int64_t table_id) {
  return layout::Catalog().Pack(kv::Tuple{Part(CatalogPart::kPurgeHold), table_id});
}
std::string Catalog::NextTableIdKey() {
  return layout::Catalog().Pack(kv::Tuple{Part(CatalogPart::kNextTableId)});
}

namespace {

// The cache's key of (account, name): the account's length first, so that no two pairs meet.
std::string CacheKey(std::string_view account, std::string_view name) {
  std::string key = std::to_string(account.size());
  key += ':';
  key += account;
  key += name;
  return key;
}

// The table names in `space` from key `begin` on, at most `limit`, each decoded from its key's
// tuple (inside `space`) by `decode`; `more` when names are left after them.
template <typename Page, typename Decode>
Result<Page> NamePage(kv::Transaction& txn, const kv::Subspace& space, const std::string& begin,
                      int limit, const Decode& decode) {
  kv::RangeOptions opts;
  opts.limit = limit + 1;
  FDYNO_ASSIGN_OR_RETURN(kv::RangeResult range, txn.GetRange(begin, space.Range().second, opts));
  Page page;
  for (const auto& kv : range.kvs) {
    if (static_cast<int>(page.names.size()) == limit) {
      page.more = true;
      break;
    }
    FDYNO_ASSIGN_OR_RETURN(kv::Tuple t, space.Unpack(kv.key));
    FDYNO_ASSIGN_OR_RETURN(auto name, decode(t));
    page.names.push_back(std::move(name));
  }
  return page;
}

// One migration step: moves up to `batch` format 1 records to the shared account; when none is
// left, records the format. Returns the number moved (0: the catalog is current).
Result<int> MigrateBatch(kv::Transaction& txn, int batch) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> format, txn.Get(Catalog::FormatKey()));
  if (format) {
    if (format->size() != 1) return Error::Internal("catalog format key is malformed");
    const auto version = static_cast<uint8_t>((*format)[0]);
    if (version > kCatalogFormat) {
      return Error::Internal("catalog format " + std::to_string(version) +
                             " is newer than this binary's (" + std::to_string(kCatalogFormat) +
                             "): use a newer fdyno");
    }
  }
  const kv::Subspace legacy = layout::Catalog().Sub(kv::Tuple{Part(CatalogPart::kTableByName)});
  const auto [begin, end] = legacy.Range();
  kv::RangeOptions opts;
  opts.limit = batch;
  FDYNO_ASSIGN_OR_RETURN(kv::RangeResult range, txn.GetRange(begin, end, opts));
  for (const kv::KeyValue& kv : range.kvs) {
    FDYNO_ASSIGN_OR_RETURN(kv::Tuple t, legacy.Unpack(kv.key));
    FDYNO_ASSIGN_OR_RETURN(std::string name, t.GetString(0));
    const std::string key = Catalog::TableKey(kSharedAccount, name);
    FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> taken, txn.Get(key));
    if (taken) {
      return Error::Internal("catalog migration: table " + name + " exists both before and " +
                             "after accounts; both records are left in place");
    }
    txn.Set(key, kv.value);  // unchanged: a record without "account" is the shared account's
    txn.Clear(kv.key);
  }
  if (range.kvs.empty() && format != std::string(1, static_cast<char>(kCatalogFormat))) {
    txn.Set(Catalog::FormatKey(), std::string(1, static_cast<char>(kCatalogFormat)));
  }
  if (!range.kvs.empty()) {
    txn.AtomicOp(kv::MutationType::kAdd, layout::MetadataVersionKey(), kv::EncodeCounter(1));
  }
  return static_cast<int>(range.kvs.size());
}

}  // namespace

Result<int> Catalog::Migrate(kv::Database& db, int batch) {
  int moved = 0;
  while (true) {
    FDYNO_ASSIGN_OR_RETURN(int n, kv::Run(db, [&](kv::Transaction& txn, const kv::Attempt&) {
                             return MigrateBatch(txn, batch);
                           }));
    if (n == 0) return moved;
    moved += n;
  }
}

Result<uint64_t> Catalog::ReadVersion(kv::Transaction& txn) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> v, txn.Get(layout::MetadataVersionKey()));
  return CounterValue(v, "metadata version");
}

void Catalog::BumpVersion(kv::Transaction& txn) {
  txn.AtomicOp(kv::MutationType::kAdd, layout::MetadataVersionKey(), kv::EncodeCounter(1));
}

Result<std::shared_ptr<const TableInfo>> Catalog::Find(kv::Transaction& txn,
                                                       std::string_view account,
                                                       std::string_view name) {
  FDYNO_ASSIGN_OR_RETURN(uint64_t version, ReadVersion(txn));
  const std::string cache_key = CacheKey(account, name);
  std::shared_ptr<Cache> cache;
  {
    std::lock_guard<std::mutex> lock(mu_);
    cache = cache_;
  }
  if (cache->version == version) {
    auto it = cache->tables.find(cache_key);
    if (it != cache->tables.end()) return it->second;
  }
  // Not cached at this version: read the record in this transaction. The version read above
  // guarantees the record belongs to `version` (every record change bumps it).
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> bytes, txn.Get(TableKey(account, name)));
  std::shared_ptr<const TableInfo> info;
  if (bytes) {
    FDYNO_ASSIGN_OR_RETURN(TableInfo decoded, DecodeTableInfo(*bytes));
    if (decoded.account != account || decoded.name != name) {
      return Error::Internal("catalog record of " + std::string(name) + " names another table");
    }
    info = std::make_shared<const TableInfo>(std::move(decoded));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (version < cache_->version) return info;
  // Absent names are remembered only up to a bound: names a caller makes up must not grow
  // the cache (or the copy below) without limit. Past it a miss is one more record read.
  const bool stale = version > cache_->version;
  if (!info && !stale && cache_->absent >= kMaxCachedAbsentNames) return info;
  // Copy-on-write: readers holding the old map keep a consistent snapshot.
  auto next = stale ? std::make_shared<Cache>() : std::make_shared<Cache>(*cache_);
  next->version = version;
  if (next->tables.emplace(cache_key, info).second && !info) ++next->absent;
  cache_ = std::move(next);
  return info;
}

size_t Catalog::CachedNames() {
  std::lock_guard<std::mutex> lock(mu_);
  return cache_->tables.size();
}

Result<std::shared_ptr<const TableInfo>> Catalog::FindCreated(kv::Transaction& txn,
                                                              std::string_view account,
                                                              std::string_view name,
                                                              std::string_view uuid) {
  FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const TableInfo> t, Find(txn, account, name));
  if (t && !uuid.empty() && t->uuid == uuid) return t;
  return std::shared_ptr<const TableInfo>();
}

Result<std::shared_ptr<const TableInfo>> Catalog::Create(kv::Transaction& txn, TableInfo info,
                                                         const std::vector<Tag>& tags,
                                                         std::string_view uuid) {
  if (info.account.empty()) return Error::Internal("a table must belong to an account");
  const std::string key = TableKey(info.account, info.name);
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> existing, txn.Get(key));
  if (existing) return Error::ResourceInUse("Table already exists: " + info.name);
  // The id counter is read (not blindly added) so that concurrent creates conflict and each
  // gets a distinct id; creates are rare.
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> counter, txn.Get(NextTableIdKey()));
  FDYNO_ASSIGN_OR_RETURN(uint64_t last_id, CounterValue(counter, "next table id"));
  const uint64_t id = last_id + 1;
  txn.Set(NextTableIdKey(), kv::EncodeCounter(static_cast<int64_t>(id)));
  info.id = static_cast<int64_t>(id);
  info.uuid = uuid.empty() ? NewUuid() : std::string(uuid);
  info.creation_ms = clock_->WallMillis();
  info.next_index_id = 1;
  for (auto* list : {&info.local_indexes, &info.global_indexes}) {
    for (auto& index : *list) index.id = info.next_index_id++;
  }
  for (VectorIndex& index : info.vector_indexes) index.id = info.next_index_id++;
  txn.Set(key, EncodeTableInfo(info));
  if (!tags.empty()) txn.Set(TagsKey(info.id), EncodeTags(tags));
  BumpVersion(txn);
  return std::make_shared<const TableInfo>(std::move(info));
}

Status Catalog::Update(kv::Transaction& txn, const TableInfo& info) {
  txn.Set(TableKey(info.account, info.name), EncodeTableInfo(info));
  BumpVersion(txn);
  return Status::Ok();
}

Status Catalog::Drop(kv::Transaction& txn, const TableInfo& info, bool hold) {
  txn.Clear(TableKey(info.account, info.name));
  txn.Clear(TagsKey(info.id));
  auto [policies_begin, policies_end] =
      layout::Catalog().Range(kv::Tuple{Part(CatalogPart::kPolicies), info.id});
  txn.ClearRange(policies_begin, policies_end);
  txn.Set(PendingPurgeKey(info.id), std::string(1, static_cast<char>(kPurgeMarkerVersion)));
  if (hold) txn.Set(PurgeHoldKey(info.id), "");
  BumpVersion(txn);
  return Status::Ok();
}

void Catalog::ReleaseDropped(kv::Transaction& txn, int64_t table_id) {
  txn.Clear(PurgeHoldKey(table_id));
}

Result<TableNamePage> Catalog::List(kv::Transaction& txn, std::string_view account,
                                    std::string_view exclusive_start, int limit) {
  const kv::Subspace by_name =
      layout::Catalog().Sub(kv::Tuple{Part(CatalogPart::kTableByAccount), account});
  // After the start name: its packed key followed by 0x00 sorts after it and before every
  // other name that extends it.
  const std::string begin = exclusive_start.empty()
                                ? by_name.Range().first
                                : by_name.Pack(kv::Tuple{exclusive_start}) + '\0';
  return NamePage<TableNamePage>(txn, by_name, begin, limit,
                                 [](const kv::Tuple& t) { return t.GetString(0); });
}

Result<QualifiedNamePage> Catalog::ListAll(kv::Transaction& txn, const QualifiedName* after,
                                           int limit) {
  const kv::Subspace all = layout::Catalog().Sub(kv::Tuple{Part(CatalogPart::kTableByAccount)});
  const std::string begin = after == nullptr
                                ? all.Range().first
                                : all.Pack(kv::Tuple{after->account, after->name}) + '\0';
  return NamePage<QualifiedNamePage>(txn, all, begin, limit,
                                     [](const kv::Tuple& t) -> Result<QualifiedName> {
                                       FDYNO_ASSIGN_OR_RETURN(std::string account, t.GetString(0));
                                       FDYNO_ASSIGN_OR_RETURN(std::string name, t.GetString(1));
                                       return QualifiedName{std::move(account), std::move(name)};
                                     });
}

Result<std::vector<Tag>> Catalog::GetTags(kv::Transaction& txn, int64_t table_id) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> bytes, txn.Get(TagsKey(table_id)));
  if (!bytes) return std::vector<Tag>();
  return DecodeTags(*bytes);
}

Status Catalog::SetTags(kv::Transaction& txn, int64_t table_id, const std::vector<Tag>& tags) {
  if (tags.empty()) {
    txn.Clear(TagsKey(table_id));
  } else {
    txn.Set(TagsKey(table_id), EncodeTags(tags));
  }
  return Status::Ok();
}

}  // namespace fdyno::store

namespace fdyno::store {

std::string Catalog::PurgeLeaseKey(int64_t table_id) {
  return LeaseKey(kv::Tuple{"purge", table_id});
}

Result<std::optional<bool>> Catalog::PurgeOne(kv::Database& db, int64_t table_id,
                                              const LeaseOptions& lease) {
  // Not a structured binding: clang 14 cannot capture one in the lambda.
  const auto range = layout::Table(table_id).Range();
  const std::string& begin = range.first;
  const std::string& end = range.second;
  // One bounded transaction: clear up to purge_batch_keys keys of the table, or, when none
  // are left, forget the pending purge. Nothing writes under a dropped table's id (writers
  // conflict on the metadata version key), so snapshot reads suffice.
  return kv::Run(db, [&](kv::Transaction& txn, const kv::Attempt&) -> Result<std::optional<bool>> {
    // The fence: this transaction commits only while this owner holds the table's lease.
    FDYNO_ASSIGN_OR_RETURN(bool held, TakeLease(txn, PurgeLeaseKey(table_id), lease));
    if (!held) return std::optional<bool>();
    kv::RangeOptions opts;
    opts.limit = options_.purge_batch_keys;
    opts.snapshot = true;
    FDYNO_ASSIGN_OR_RETURN(kv::RangeResult page, txn.GetRange(begin, end, opts));
    if (page.kvs.empty()) {
      txn.Clear(PendingPurgeKey(table_id));
      txn.Clear(PurgeLeaseKey(table_id));
      return std::optional<bool>(true);
    }
    std::string stop = page.more ? page.kvs.back().key + std::string(1, '\0') : end;
    txn.ClearRange(begin, stop);
    return std::optional<bool>(false);
  });
}

Result<int> Catalog::PurgeDropped(kv::Database& db, const LeaseOptions& lease,
                                  const std::atomic<bool>* stop) {
  kv::Subspace pending = layout::Catalog().Sub(kv::Tuple{Part(CatalogPart::kPendingPurge)});
  const auto range = pending.Range();  // not a structured binding: captured below
  const std::string& begin = range.first;
  const std::string& end = range.second;
  FDYNO_ASSIGN_OR_RETURN(
      std::vector<int64_t> ids,
      kv::Run(db, [&](kv::Transaction& txn, const kv::Attempt&) -> Result<std::vector<int64_t>> {
        std::vector<int64_t> out;
        FDYNO_ASSIGN_OR_RETURN(kv::RangeResult r, txn.GetRange(begin, end));
        for (const auto& kv : r.kvs) {
          FDYNO_ASSIGN_OR_RETURN(kv::Tuple t, pending.Unpack(kv.key));
          FDYNO_ASSIGN_OR_RETURN(int64_t id, t.GetInt(0));
          // A held purge waits (written with the marker, so seen with it).
          FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> held, txn.Get(PurgeHoldKey(id)));
          if (!held) out.push_back(id);
        }
        return out;
      }));
  int done = 0;
  for (int64_t id : ids) {
    // Each round removes at least one key, finishes, or finds the table another owner's.
    while (!StopRequested(stop)) {
      FDYNO_ASSIGN_OR_RETURN(std::optional<bool> finished, PurgeOne(db, id, lease));
      if (!finished) break;
      if (*finished) {
        ++done;
        break;
      }
    }
  }
  return done;
}

}  // namespace fdyno::store
