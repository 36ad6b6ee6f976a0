#include "api/projection_request.h"

#include <set>
#include <utility>

namespace fdyno::api {
namespace {

constexpr size_t kMaxNonKeyAttributes = 20;

Error Invalid(const std::string& detail) {
  return Error::Validation("One or more parameter values were invalid: " + detail);
}

}  // namespace

Result<std::optional<ProjectionIn>> ParseProjection(const rapidjson::Value& obj) {
  FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* v, GetStruct(obj, "Projection", "Projection"));
  if (v == nullptr) return std::optional<ProjectionIn>();
  ProjectionIn p;
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> type, GetString(*v, "ProjectionType"));
  if (type) p.type = std::string(*type);
  FDYNO_ASSIGN_OR_RETURN(const rapidjson::Value* list, GetList(*v, "NonKeyAttributes"));
  if (list != nullptr) {
    std::vector<std::string> names;
    for (const rapidjson::Value& n : list->GetArray()) {
      FDYNO_RETURN_IF_ERROR(CheckShape(n, JsonShape::kString));
      names.push_back(n.IsString() ? std::string(AsStringView(n)) : std::string());
    }
    p.non_key = std::move(names);
  }
  return std::optional<ProjectionIn>(std::move(p));
}

void CheckProjectionConstraints(ConstraintErrors& e, const ProjectionIn& p,
                                const std::string& path) {
  if (p.type) e.Enum(path + ".projectionType", *p.type, {"ALL", "INCLUDE", "KEYS_ONLY"});
  if (!p.non_key) return;
  const std::string nk = path + ".nonKeyAttributes";
  if (p.non_key->empty()) {
    e.Add(nk, "[]", "Member must have length greater than or equal to 1");
  } else if (p.non_key->size() > kMaxNonKeyAttributes) {
    e.AddWithoutValue(nk, "Member must have length less than or equal to 20");
  }
  for (size_t k = 0; k < p.non_key->size(); ++k) {
    const std::string& name = (*p.non_key)[k];
    e.MinLength(MemberPath(nk, k), name, 1);
    e.MaxLength(MemberPath(nk, k), name, 255);
  }
}

Result<store::Projection> ResolveProjection(const ProjectionIn& p) {
  if (!p.type) return Invalid("Unknown ProjectionType: null");
  store::Projection out;
  out.type = *p.type == "ALL"         ? store::ProjectionType::kAll
             : *p.type == "KEYS_ONLY" ? store::ProjectionType::kKeysOnly
                                      : store::ProjectionType::kInclude;
  if (out.type != store::ProjectionType::kInclude && p.non_key) {
    return Invalid("ProjectionType is " + *p.type + ", but NonKeyAttributes is specified");
  }
  if (out.type == store::ProjectionType::kInclude) {
    if (!p.non_key)
      return Invalid("ProjectionType is INCLUDE, but NonKeyAttributes is not specified");
    std::set<std::string> seen;
    for (const auto& a : *p.non_key) {
      if (!seen.insert(a).second) return Invalid("Duplicate element in NonKeyAttributes: " + a);
    }
    out.non_key_attributes = *p.non_key;
  }
  return out;
}

}  // namespace fdyno::api
