#include "api/vector_table_ops.h"

#include <algorithm>
#include <utility>

#include "api/table_rules.h"

namespace fdyno::api {
namespace {

using rapidjson::Value;
using tables::IndexAlreadyExists;
using tables::Invalid;

// Limits where DynamoDB's documentation gives none (docs/compatibility.md).
constexpr int64_t kMaxDimensions = 16000;
constexpr size_t kMaxVectorIndexes = 20;
constexpr size_t kMaxProjectedAttributes = 20;

Result<VectorIndexIn> ParseOne(const Value& v) {
  VectorIndexIn in;
  if (!v.IsObject()) return in;
  FDYNO_ASSIGN_OR_RETURN(in.name, GetOwnedString(v, "IndexName"));
  FDYNO_ASSIGN_OR_RETURN(const Value* attr,
                         GetStruct(v, "VectorAttribute", "VectorAttributeDefinition"));
  if (attr != nullptr) {
    in.has_attribute = true;
    FDYNO_ASSIGN_OR_RETURN(in.attribute, GetOwnedString(*attr, "AttributeName"));
  }
  FDYNO_ASSIGN_OR_RETURN(in.dimensions, GetInteger(v, "Dimensions"));
  FDYNO_ASSIGN_OR_RETURN(in.distance, GetOwnedString(v, "DistanceFunction"));
  FDYNO_ASSIGN_OR_RETURN(in.projection, ParseProjection(v));
  FDYNO_ASSIGN_OR_RETURN(auto schema, GetStructList(v, "SearchSchema", "SearchSchemaElement"));
  if (schema) {
    in.search_schema.emplace();
    for (const Value* e : *schema) {
      SearchSchemaElementIn element;
      if (e->IsObject()) {
        FDYNO_ASSIGN_OR_RETURN(element.name, GetOwnedString(*e, "AttributeName"));
        FDYNO_ASSIGN_OR_RETURN(element.type, GetOwnedString(*e, "SearchSchemaElementType"));
      }
      in.search_schema->push_back(std::move(element));
    }
  }
  return in;
}

void CheckName(ConstraintErrors& e, const std::optional<std::string>& name,
               const std::string& path) {
  e.NotNull(path, name.has_value());
  if (!name) return;
  e.Pattern(path, *name, IsValidTableNameChars(*name), "[a-zA-Z0-9_.-]+");
  e.MinLength(path, *name, 3);
  e.MaxLength(path, *name, 255);
}

void CheckOne(ConstraintErrors& e, const VectorIndexIn& in, const std::string& p) {
  CheckName(e, in.name, p + ".indexName");
  e.NotNull(p + ".vectorAttribute", in.has_attribute);
  if (in.has_attribute) {
    e.NotNull(p + ".vectorAttribute.attributeName", in.attribute.has_value());
    if (in.attribute) {
      e.MinLength(p + ".vectorAttribute.attributeName", *in.attribute, 1);
      e.MaxLength(p + ".vectorAttribute.attributeName", *in.attribute, 255);
    }
  }
  e.NotNull(p + ".dimensions", in.dimensions.has_value());
  if (in.dimensions) e.MinValue(p + ".dimensions", *in.dimensions, 1);
  e.NotNull(p + ".distanceFunction", in.distance.has_value());
  if (in.distance) {
    e.Enum(p + ".distanceFunction", *in.distance, {"COSINE", "DOT_PRODUCT", "EUCLIDEAN"});
  }
  e.NotNull(p + ".projection", in.projection.has_value());
  if (in.projection) CheckProjectionConstraints(e, *in.projection, p + ".projection");
  if (!in.search_schema) return;
  if (in.search_schema->empty()) {
    e.Add(p + ".searchSchema", "[]", "Member must have length greater than or equal to 1");
  }
  for (size_t i = 0; i < in.search_schema->size(); ++i) {
    const SearchSchemaElementIn& s = (*in.search_schema)[i];
    const std::string sp = MemberPath(p + ".searchSchema", i);
    e.NotNull(sp + ".attributeName", s.name.has_value());
    if (s.name) {
      e.MinLength(sp + ".attributeName", *s.name, 1);
      e.MaxLength(sp + ".attributeName", *s.name, 255);
    }
    e.NotNull(sp + ".searchSchemaElementType", s.type.has_value());
    if (s.type) e.Enum(sp + ".searchSchemaElementType", *s.type, {"HASH", "INLINE_FILTER"});
  }
}

// REQUIRES: `name` is one of the model's VectorDistanceFunction values.
store::DistanceFunction DistanceOf(const std::string& name) {
  return name == "COSINE"        ? store::DistanceFunction::kCosine
         : name == "DOT_PRODUCT" ? store::DistanceFunction::kDotProduct
                                 : store::DistanceFunction::kEuclidean;
}

std::optional<store::ScalarType> TypeOf(const std::vector<store::AttributeDefinition>& defs,
                                        const std::string& name) {
  for (const store::AttributeDefinition& d : defs) {
    if (d.name == name) return d.type;
  }
  return std::nullopt;
}

// Whether `name` is a key attribute of the table or of one of its secondary indexes.
bool IsKeyAttribute(const store::TableInfo& t, const std::string& name) {
  auto in = [&](const store::KeySchema& k) {
    for (const model::KeyAttribute& a : k.Attributes()) {
      if (a.name == name) return true;
    }
    return false;
  };
  if (in(t.key_schema)) return true;
  for (const auto* list : {&t.local_indexes, &t.global_indexes}) {
    for (const store::SecondaryIndex& i : *list) {
      if (in(i.key_schema)) return true;
    }
  }
  return false;
}

Result<std::vector<store::SearchSchemaElement>> ResolveSearchSchema(
    const VectorIndexIn& in, const std::vector<store::AttributeDefinition>& defs) {
  std::vector<store::SearchSchemaElement> out;
  if (!in.search_schema) return out;
  int hashes = 0;
  for (const SearchSchemaElementIn& s : *in.search_schema) {
    std::optional<store::ScalarType> type = TypeOf(defs, *s.name);
    if (!type) {
      return Error::Validation(
          "One element in SearchSchema is not defined in attribute definitions");
    }
    for (const store::SearchSchemaElement& seen : out) {
      if (seen.attribute.name == *s.name) {
        return Invalid("Duplicate attribute in SearchSchema: " + *s.name +
                       " for index: " + *in.name);
      }
    }
    const bool hash = *s.type == "HASH";
    if (hash && ++hashes > 1) {
      return Invalid("SearchSchema has more than one HASH element for index: " + *in.name);
    }
    out.push_back(
        {{*s.name, *type}, hash ? store::SearchRole::kHash : store::SearchRole::kInlineFilter});
  }
  return out;
}

// One index, checked against the table `t` as it will be (its other vector indexes included).
Result<store::VectorIndex> PlanOne(const VectorIndexIn& in,
                                   const std::vector<store::AttributeDefinition>& defs,
                                   const store::TableInfo& t) {
  const std::string& name = *in.name;
  if (t.billing_mode != store::BillingMode::kPayPerRequest) {
    return Invalid(
        "Vector indexes are only supported on tables with BillingMode "
        "PAY_PER_REQUEST. IndexName: " +
        name);
  }
  if (*in.dimensions > kMaxDimensions) {
    return Invalid("Dimensions " + std::to_string(*in.dimensions) +
                   " exceeds the limit of 16000 for index: " + name);
  }
  store::VectorIndex v;
  v.name = name;
  v.attribute = *in.attribute;
  v.dimensions = *in.dimensions;
  v.distance = DistanceOf(*in.distance);
  FDYNO_ASSIGN_OR_RETURN(v.search_schema, ResolveSearchSchema(in, defs));
  if (IsKeyAttribute(t, v.attribute) ||
      std::any_of(v.search_schema.begin(), v.search_schema.end(),
                  [&](const auto& e) { return e.attribute.name == v.attribute; })) {
    return Invalid("The vector attribute " + v.attribute +
                   " cannot be a key or SearchSchema attribute. IndexName: " + name);
  }
  for (const store::VectorIndex& other : t.vector_indexes) {
    if (other.attribute == v.attribute && other.dimensions != v.dimensions) {
      return Invalid("Vector indexes on attribute " + v.attribute +
                     " must have the same Dimensions. IndexName: " + name);
    }
  }
  FDYNO_ASSIGN_OR_RETURN(v.projection, ResolveProjection(*in.projection));
  size_t projected = 1 + v.projection.non_key_attributes.size();
  for (const store::SearchSchemaElement& e : v.search_schema) {
    if (e.role == store::SearchRole::kInlineFilter) ++projected;
  }
  if (projected > kMaxProjectedAttributes) {
    return Invalid("Number of projected attributes of index: " + name +
                   " exceeds the per-index limit of 20 (the vector attribute and each "
                   "INLINE_FILTER count as one)");
  }
  return v;
}

Result<std::optional<std::vector<VectorIndexIn>>> ParseList(const Value& body,
                                                            std::string_view member) {
  FDYNO_ASSIGN_OR_RETURN(auto elements, GetStructList(body, member, "VectorIndex"));
  if (!elements) return std::optional<std::vector<VectorIndexIn>>();
  std::vector<VectorIndexIn> out;
  for (const Value* e : *elements) {
    FDYNO_ASSIGN_OR_RETURN(VectorIndexIn in, ParseOne(*e));
    out.push_back(std::move(in));
  }
  return std::optional<std::vector<VectorIndexIn>>(std::move(out));
}

void CheckList(ConstraintErrors& e, const std::optional<std::vector<VectorIndexIn>>& indexes,
               const std::string& path) {
  if (!indexes) return;
  for (size_t i = 0; i < indexes->size(); ++i) CheckOne(e, (*indexes)[i], MemberPath(path, i));
}

// Whether an index of the restored table: built, and not being deleted.
bool IsRestorable(const store::VectorIndex& v) {
  return v.status != store::IndexStatus::kDeleting && !v.backfilling;
}

// The member of the override `in` that differs from `v`'s definition, or empty when it matches.
Result<std::string> FirstDifference(const VectorIndexIn& in, const store::VectorIndex& v) {
  if (*in.attribute != v.attribute) return std::string("VectorAttribute");
  if (*in.dimensions != v.dimensions) return std::string("Dimensions");
  if (DistanceOf(*in.distance) != v.distance) return std::string("DistanceFunction");
  std::vector<std::pair<std::string, std::string>> given, stored;
  if (in.search_schema) {
    for (const SearchSchemaElementIn& s : *in.search_schema) given.emplace_back(*s.name, *s.type);
  }
  for (const store::SearchSchemaElement& s : v.search_schema) {
    stored.emplace_back(s.attribute.name,
                        s.role == store::SearchRole::kHash ? "HASH" : "INLINE_FILTER");
  }
  std::sort(given.begin(), given.end());
  std::sort(stored.begin(), stored.end());
  if (given != stored) return std::string("SearchSchema");
  FDYNO_ASSIGN_OR_RETURN(store::Projection p, ResolveProjection(*in.projection));
  std::vector<std::string> given_attrs = p.non_key_attributes;
  std::vector<std::string> stored_attrs = v.projection.non_key_attributes;
  std::sort(given_attrs.begin(), given_attrs.end());
  std::sort(stored_attrs.begin(), stored_attrs.end());
  if (p.type != v.projection.type || given_attrs != stored_attrs) return std::string("Projection");
  return std::string();
}

Status CheckCount(const store::TableInfo& t) {
  if (t.vector_indexes.size() <= kMaxVectorIndexes) return Status::Ok();
  return Invalid("VectorIndex count exceeds the per-table limit of 20");
}

}  // namespace

Result<std::optional<std::vector<VectorIndexIn>>> ParseVectorIndexes(const Value& body) {
  return ParseList(body, "VectorIndexes");
}

Result<std::optional<std::vector<VectorIndexIn>>> ParseVectorIndexOverride(const Value& body) {
  return ParseList(body, "VectorIndexOverride");
}

Result<std::optional<std::vector<VectorIndexUpdateIn>>> ParseVectorIndexUpdates(const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(auto elements,
                         GetStructList(body, "VectorIndexUpdates", "VectorIndexUpdate"));
  if (!elements) return std::optional<std::vector<VectorIndexUpdateIn>>();
  std::vector<VectorIndexUpdateIn> out;
  for (const Value* e : *elements) {
    VectorIndexUpdateIn u;
    if (e->IsObject()) {
      FDYNO_ASSIGN_OR_RETURN(const Value* create,
                             GetStruct(*e, "Create", "CreateVectorIndexAction"));
      if (create != nullptr) {
        FDYNO_ASSIGN_OR_RETURN(VectorIndexIn in, ParseOne(*create));
        u.create = std::move(in);
      }
      FDYNO_ASSIGN_OR_RETURN(const Value* del, GetStruct(*e, "Delete", "DeleteVectorIndexAction"));
      if (del != nullptr) {
        u.has_delete = true;
        FDYNO_ASSIGN_OR_RETURN(u.delete_name, GetOwnedString(*del, "IndexName"));
      }
    }
    out.push_back(std::move(u));
  }
  return std::optional<std::vector<VectorIndexUpdateIn>>(std::move(out));
}

void CheckVectorIndexConstraints(ConstraintErrors& e,
                                 const std::optional<std::vector<VectorIndexIn>>& indexes) {
  CheckList(e, indexes, "vectorIndexes");
}

void CheckVectorIndexOverrideConstraints(ConstraintErrors& e,
                                         const std::optional<std::vector<VectorIndexIn>>& indexes) {
  CheckList(e, indexes, "vectorIndexOverride");
}

void CheckVectorIndexUpdateConstraints(
    ConstraintErrors& e, const std::optional<std::vector<VectorIndexUpdateIn>>& updates) {
  if (!updates) return;
  for (size_t i = 0; i < updates->size(); ++i) {
    const VectorIndexUpdateIn& u = (*updates)[i];
    const std::string p = MemberPath("vectorIndexUpdates", i);
    if (u.create) CheckOne(e, *u.create, p + ".create");
    if (u.has_delete) CheckName(e, u.delete_name, p + ".delete.indexName");
  }
}

Status CheckVectorIndexUpdates(const std::vector<VectorIndexUpdateIn>& updates) {
  for (const VectorIndexUpdateIn& u : updates) {
    const int actions = int{u.create.has_value()} + int{u.has_delete};
    if (actions == 0) {
      return Invalid("One of VectorIndexUpdate.Create, VectorIndexUpdate.Delete must not be null");
    }
    if (actions > 1) {
      return Invalid("Only one vector index action is allowed per VectorIndexUpdate object");
    }
  }
  return Status::Ok();
}

size_t CountVectorIndexChanges(const std::optional<std::vector<VectorIndexUpdateIn>>& updates) {
  return updates ? updates->size() : 0;
}

Result<std::vector<store::VectorIndex>> PlanCreateVectorIndexes(
    const std::vector<VectorIndexIn>& in, const std::vector<store::AttributeDefinition>& defs,
    const store::TableInfo& t, std::set<std::string>& index_names, std::vector<std::string>& used) {
  if (in.empty()) return Invalid("List of VectorIndexes is empty");
  store::TableInfo with = t;
  for (const VectorIndexIn& i : in) {
    if (!index_names.insert(*i.name).second) return Invalid("Duplicate index name: " + *i.name);
    FDYNO_ASSIGN_OR_RETURN(store::VectorIndex v, PlanOne(i, defs, with));
    for (const store::SearchSchemaElement& e : v.search_schema) {
      if (std::find(used.begin(), used.end(), e.attribute.name) == used.end()) {
        used.push_back(e.attribute.name);
      }
    }
    with.vector_indexes.push_back(std::move(v));
  }
  FDYNO_RETURN_IF_ERROR(CheckCount(with));
  return std::move(with.vector_indexes);
}

Status ApplyVectorIndexUpdates(const std::vector<VectorIndexUpdateIn>& updates,
                               const std::vector<store::AttributeDefinition>& defs,
                               store::TableInfo& t) {
  for (const VectorIndexUpdateIn& u : updates) {
    if (u.has_delete) {
      auto it = std::find_if(t.vector_indexes.begin(), t.vector_indexes.end(),
                             [&](const auto& v) { return v.name == *u.delete_name; });
      if (it == t.vector_indexes.end()) {
        return Error::ResourceNotFound("Requested resource not found: Index: " + *u.delete_name +
                                       " not found");
      }
      it->status = store::IndexStatus::kDeleting;  // removed by the index worker
      continue;
    }
    const VectorIndexIn& in = *u.create;
    if (t.FindIndex(*in.name) != nullptr || t.FindVectorIndex(*in.name) != nullptr) {
      return IndexAlreadyExists();
    }
    // The request's definitions first, then the table's (types never change).
    std::vector<store::AttributeDefinition> all = defs;
    for (const store::AttributeDefinition& known : t.attribute_definitions) {
      if (std::optional<store::ScalarType> given = TypeOf(defs, known.name);
          given && *given != known.type) {
        return Invalid("Cannot change the type of attribute " + known.name + " from " +
                       std::string(store::ScalarTypeName(known.type)) + " to " +
                       std::string(store::ScalarTypeName(*given)));
      }
      if (!TypeOf(defs, known.name)) all.push_back(known);
    }
    FDYNO_ASSIGN_OR_RETURN(store::VectorIndex v, PlanOne(in, all, t));
    for (const store::SearchSchemaElement& e : v.search_schema) {
      if (!TypeOf(t.attribute_definitions, e.attribute.name)) {
        t.attribute_definitions.push_back(e.attribute);
      }
    }
    v.id = t.next_index_id++;
    v.status = store::IndexStatus::kCreating;
    v.backfilling = true;
    t.vector_indexes.push_back(std::move(v));
    FDYNO_RETURN_IF_ERROR(CheckCount(t));
  }
  return Status::Ok();
}

Result<std::vector<store::VectorIndex>> PlanRestoredVectorIndexes(
    const store::TableInfo& source, const std::optional<std::vector<VectorIndexIn>>& overrides,
    std::string_view source_kind) {
  std::vector<store::VectorIndex> out;
  if (!overrides) {
    for (const store::VectorIndex& v : source.vector_indexes) {
      if (IsRestorable(v)) out.push_back(v);
    }
  } else {
    for (const VectorIndexIn& in : *overrides) {
      const store::VectorIndex* v = source.FindVectorIndex(*in.name);
      if (v == nullptr || !IsRestorable(*v)) {
        return Invalid("Vector index override does not match an index of the " +
                       std::string(source_kind) + ": " + *in.name);
      }
      for (const store::VectorIndex& kept : out) {
        if (kept.name == *in.name) return Invalid("Duplicate index name: " + *in.name);
      }
      FDYNO_ASSIGN_OR_RETURN(std::string differs, FirstDifference(in, *v));
      if (!differs.empty()) {
        return Invalid("Vector index override " + *in.name + " does not match the index of the " +
                       std::string(source_kind) + ": its " + differs + " differs");
      }
      out.push_back(*v);
    }
  }
  for (store::VectorIndex& v : out) {
    v.status = store::IndexStatus::kActive;
    v.backfilling = false;
  }
  return out;
}

Status CheckVectorIndexBilling(const store::TableInfo& t) {
  if (t.vector_indexes.empty() || t.billing_mode == store::BillingMode::kPayPerRequest) {
    return Status::Ok();
  }
  return Invalid("Vector indexes are only supported on tables with BillingMode PAY_PER_REQUEST");
}

}  // namespace fdyno::api
