#include "store/vector_index_record.h"

#include <array>
#include <string>
#include <string_view>
#include <utility>

namespace fdyno::store {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;
using rapidjson::Value;

// Names as stored. Persisted: never change a spelling.
constexpr std::array<std::pair<std::string_view, DistanceFunction>, 3> kDistances = {{
    {"COSINE", DistanceFunction::kCosine},
    {"DOT_PRODUCT", DistanceFunction::kDotProduct},
    {"EUCLIDEAN", DistanceFunction::kEuclidean},
}};
constexpr std::array<std::pair<std::string_view, SearchRole>, 2> kRoles = {{
    {"HASH", SearchRole::kHash},
    {"INLINE_FILTER", SearchRole::kInlineFilter},
}};
constexpr std::array<std::pair<std::string_view, ProjectionType>, 3> kProjections = {{
    {"ALL", ProjectionType::kAll},
    {"KEYS_ONLY", ProjectionType::kKeysOnly},
    {"INCLUDE", ProjectionType::kInclude},
}};
constexpr std::array<std::pair<std::string_view, IndexStatus>, 4> kStatuses = {{
    {"CREATING", IndexStatus::kCreating},
    {"UPDATING", IndexStatus::kUpdating},
    {"DELETING", IndexStatus::kDeleting},
    {"ACTIVE", IndexStatus::kActive},
}};

template <typename E, size_t N>
std::string_view NameOf(E value, const std::array<std::pair<std::string_view, E>, N>& table) {
  for (const auto& [text, v] : table) {
    if (v == value) return text;
  }
  return table[0].first;
}

void Str(Writer& w, std::string_view s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

Error Corrupt(std::string_view what) {
  return Error::Internal("corrupt catalog record: vector index " + std::string(what));
}

Result<const Value*> Member(const Value& obj, const char* name) {
  if (!obj.IsObject()) return Corrupt("is not an object");
  auto it = obj.FindMember(name);
  if (it == obj.MemberEnd()) return Corrupt(std::string("lacks ") + name);
  return &it->value;
}

Result<std::string> StrOf(const Value& obj, const char* name) {
  FDYNO_ASSIGN_OR_RETURN(const Value* v, Member(obj, name));
  if (!v->IsString()) return Corrupt(std::string(name) + " is not a string");
  return std::string(v->GetString(), v->GetStringLength());
}

Result<int64_t> IntOf(const Value& obj, const char* name) {
  FDYNO_ASSIGN_OR_RETURN(const Value* v, Member(obj, name));
  if (!v->IsInt64()) return Corrupt(std::string(name) + " is not an integer");
  return v->GetInt64();
}

template <typename E, size_t N>
Result<E> EnumOf(const Value& obj, const char* name,
                 const std::array<std::pair<std::string_view, E>, N>& table) {
  FDYNO_ASSIGN_OR_RETURN(std::string s, StrOf(obj, name));
  for (const auto& [text, v] : table) {
    if (text == s) return v;
  }
  return Corrupt(std::string("has an unknown ") + name + " " + s);
}

void WriteOne(Writer& w, const VectorIndex& v) {
  w.StartObject();
  w.Key("name");
  Str(w, v.name);
  w.Key("id");
  w.Int64(v.id);
  w.Key("attribute");
  Str(w, v.attribute);
  w.Key("dimensions");
  w.Int64(v.dimensions);
  w.Key("distance");
  Str(w, NameOf(v.distance, kDistances));
  w.Key("search_schema");
  w.StartArray();
  for (const SearchSchemaElement& e : v.search_schema) {
    w.StartObject();
    w.Key("name");
    Str(w, e.attribute.name);
    w.Key("type");
    Str(w, ScalarTypeName(e.attribute.type));
    w.Key("role");
    Str(w, NameOf(e.role, kRoles));
    w.EndObject();
  }
  w.EndArray();
  w.Key("projection");
  Str(w, NameOf(v.projection.type, kProjections));
  w.Key("non_key_attributes");
  w.StartArray();
  for (const std::string& a : v.projection.non_key_attributes) Str(w, a);
  w.EndArray();
  w.Key("status");
  Str(w, NameOf(v.status, kStatuses));
  w.Key("backfilling");
  w.Bool(v.backfilling);
  w.EndObject();
}

Result<SearchSchemaElement> ReadElement(const Value& e) {
  SearchSchemaElement out;
  FDYNO_ASSIGN_OR_RETURN(out.attribute.name, StrOf(e, "name"));
  FDYNO_ASSIGN_OR_RETURN(std::string type, StrOf(e, "type"));
  std::optional<ScalarType> t = ParseScalarType(type);
  if (!t) return Corrupt("has an unknown attribute type " + type);
  out.attribute.type = *t;
  FDYNO_ASSIGN_OR_RETURN(out.role, EnumOf(e, "role", kRoles));
  return out;
}

Result<VectorIndex> ReadOne(const Value& v) {
  VectorIndex out;
  FDYNO_ASSIGN_OR_RETURN(out.name, StrOf(v, "name"));
  FDYNO_ASSIGN_OR_RETURN(out.id, IntOf(v, "id"));
  FDYNO_ASSIGN_OR_RETURN(out.attribute, StrOf(v, "attribute"));
  FDYNO_ASSIGN_OR_RETURN(out.dimensions, IntOf(v, "dimensions"));
  if (out.dimensions < 1) return Corrupt("has no dimensions");
  FDYNO_ASSIGN_OR_RETURN(out.distance, EnumOf(v, "distance", kDistances));
  FDYNO_ASSIGN_OR_RETURN(const Value* schema, Member(v, "search_schema"));
  if (!schema->IsArray()) return Corrupt("search_schema is not a list");
  for (const Value& e : schema->GetArray()) {
    FDYNO_ASSIGN_OR_RETURN(SearchSchemaElement element, ReadElement(e));
    out.search_schema.push_back(std::move(element));
  }
  FDYNO_ASSIGN_OR_RETURN(out.projection.type, EnumOf(v, "projection", kProjections));
  FDYNO_ASSIGN_OR_RETURN(const Value* nka, Member(v, "non_key_attributes"));
  if (!nka->IsArray()) return Corrupt("non_key_attributes is not a list");
  for (const Value& a : nka->GetArray()) {
    if (!a.IsString()) return Corrupt("non_key_attributes member is not a string");
    out.projection.non_key_attributes.emplace_back(a.GetString(), a.GetStringLength());
  }
  FDYNO_ASSIGN_OR_RETURN(out.status, EnumOf(v, "status", kStatuses));
  FDYNO_ASSIGN_OR_RETURN(const Value* backfilling, Member(v, "backfilling"));
  if (!backfilling->IsBool()) return Corrupt("backfilling is not a boolean");
  out.backfilling = backfilling->GetBool();
  return out;
}

}  // namespace

void WriteVectorIndexes(Writer& w, const std::vector<VectorIndex>& indexes) {
  w.StartArray();
  for (const VectorIndex& v : indexes) WriteOne(w, v);
  w.EndArray();
}

Result<std::vector<VectorIndex>> ReadVectorIndexes(const Value& list) {
  if (!list.IsArray()) return Corrupt("list is not a list");
  std::vector<VectorIndex> out;
  for (const Value& v : list.GetArray()) {
    FDYNO_ASSIGN_OR_RETURN(VectorIndex index, ReadOne(v));
    out.push_back(std::move(index));
  }
  return out;
}

}  // namespace fdyno::store
