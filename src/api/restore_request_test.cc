// The restores' plan of the restored table's vector indexes: kept by default (only those that are
// built), narrowed by VectorIndexOverride, whose indexes must equal the source's; the attribute
// definitions their search schemas use; billing.
#include "api/restore_request.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>
#include <vector>

namespace fdyno::api {
namespace {

using store::IndexStatus;
using store::ScalarType;
using store::SearchRole;
using store::TableInfo;
using store::VectorIndex;

constexpr const char* kByCat =
    R"({"IndexName":"by_cat","VectorAttribute":{"AttributeName":"v"},"Dimensions":4,)"
    R"("DistanceFunction":"EUCLIDEAN","SearchSchema":[)"
    R"({"AttributeName":"color","SearchSchemaElementType":"INLINE_FILTER"},)"
    R"({"AttributeName":"cat","SearchSchemaElementType":"HASH"}],)"
    R"("Projection":{"ProjectionType":"INCLUDE","NonKeyAttributes":["b","a"]}})";
constexpr const char* kPlain =
    R"({"IndexName":"plain","VectorAttribute":{"AttributeName":"v"},"Dimensions":4,)"
    R"("DistanceFunction":"COSINE","Projection":{"ProjectionType":"ALL"}})";

TableInfo Source() {
  TableInfo t;
  t.name = "src";
  t.billing_mode = store::BillingMode::kPayPerRequest;
  t.key_schema.hash = {"pk", ScalarType::kS};
  t.attribute_definitions = {
      {"pk", ScalarType::kS}, {"cat", ScalarType::kS}, {"color", ScalarType::kS}};
  VectorIndex by_cat;
  by_cat.name = "by_cat";
  by_cat.id = 4;
  by_cat.attribute = "v";
  by_cat.dimensions = 4;
  by_cat.distance = store::DistanceFunction::kEuclidean;
  by_cat.search_schema = {{{"cat", ScalarType::kS}, SearchRole::kHash},
                          {{"color", ScalarType::kS}, SearchRole::kInlineFilter}};
  by_cat.projection.type = store::ProjectionType::kInclude;
  by_cat.projection.non_key_attributes = {"a", "b"};
  VectorIndex plain;
  plain.name = "plain";
  plain.id = 5;
  plain.attribute = "v";
  plain.dimensions = 4;
  plain.projection.type = store::ProjectionType::kAll;
  VectorIndex deleting = plain;
  deleting.name = "deleting";
  deleting.status = IndexStatus::kDeleting;
  VectorIndex building = plain;
  building.name = "building";
  building.status = IndexStatus::kCreating;
  building.backfilling = true;
  t.vector_indexes = {by_cat, plain, deleting, building};
  return t;
}

Result<TableInfo> Plan(const std::string& members) {
  rapidjson::Document doc;
  const std::string json = R"({"TargetTableName":"dst")" + members + "}";
  doc.Parse(json.c_str());
  EXPECT_FALSE(doc.HasParseError()) << json;
  FDYNO_ASSIGN_OR_RETURN(RestoreRequest r, ParseRestoreRequest(doc));
  ConstraintErrors e;
  CheckOverrideConstraints(e, r);
  FDYNO_RETURN_IF_ERROR(e.ToStatus());
  return PlanRestoredTable(Source(), r, 1000, "backup");
}

std::string Message(const std::string& members) {
  Result<TableInfo> t = Plan(members);
  return t.ok() ? "ok" : t.error().message;
}

std::vector<std::string> Names(const TableInfo& t) {
  std::vector<std::string> out;
  for (const VectorIndex& v : t.vector_indexes) out.push_back(v.name);
  return out;
}

std::vector<std::string> Attributes(const TableInfo& t) {
  std::vector<std::string> out;
  for (const store::AttributeDefinition& a : t.attribute_definitions) out.push_back(a.name);
  return out;
}

std::string Override(const std::string& indexes) {
  return R"(,"VectorIndexOverride":[)" + indexes + "]";
}

// `index` with the first occurrence of `from` replaced by `to`.
std::string Changed(std::string index, const std::string& from, const std::string& to) {
  index.replace(index.find(from), from.size(), to);
  return index;
}

TEST(RestoreVectorIndexesTest, WithoutOverrideTheBuiltIndexesAreKept) {
  Result<TableInfo> t = Plan("");
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(Names(*t), (std::vector<std::string>{"by_cat", "plain"}));
  const TableInfo source = Source();
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(t->vector_indexes[i], source.vector_indexes[i]);  // ids: the catalog's, later
  }
  EXPECT_EQ(Attributes(*t), (std::vector<std::string>{"pk", "cat", "color"}));
}

TEST(RestoreVectorIndexesTest, TheOverrideKeepsWhatItNames) {
  Result<TableInfo> t = Plan(Override(kPlain));
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(Names(*t), std::vector<std::string>{"plain"});
  EXPECT_EQ(Attributes(*t), std::vector<std::string>{"pk"});
  // Search schema and non-key attributes in another order are the same definition.
  t = Plan(Override(kByCat));
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(Names(*t), std::vector<std::string>{"by_cat"});
  EXPECT_EQ(t->vector_indexes[0], Source().vector_indexes[0]);
  EXPECT_EQ(Attributes(*t), (std::vector<std::string>{"pk", "cat", "color"}));
  t = Plan(Override(""));
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(t->vector_indexes.empty());
  EXPECT_EQ(Attributes(*t), std::vector<std::string>{"pk"});
}

TEST(RestoreVectorIndexesTest, TheOverrideMustMatchTheSource) {
  const std::string invalid = "One or more parameter values were invalid: ";
  const std::string differs = invalid +
                              "Vector index override plain does not match the index "
                              "of the backup: its ";
  for (const char* name : {"nope", "deleting", "building"}) {
    EXPECT_EQ(Message(Override(Changed(kPlain, "\"plain\"", std::string("\"") + name + "\""))),
              invalid + "Vector index override does not match an index of the backup: " + name);
  }
  EXPECT_EQ(Message(Override(std::string(kPlain) + "," + kPlain)),
            invalid + "Duplicate index name: plain");
  EXPECT_EQ(Message(Override(Changed(kPlain, "\"v\"", "\"w\""))),
            differs + "VectorAttribute differs");
  EXPECT_EQ(Message(Override(Changed(kPlain, ":4", ":8"))), differs + "Dimensions differs");
  EXPECT_EQ(Message(Override(Changed(kPlain, "COSINE", "DOT_PRODUCT"))),
            differs + "DistanceFunction differs");
  EXPECT_EQ(Message(Override(Changed(kPlain, "\"ALL\"", "\"KEYS_ONLY\""))),
            differs + "Projection differs");
  const std::string by_cat = invalid +
                             "Vector index override by_cat does not match the index of the "
                             "backup: its ";
  EXPECT_EQ(Message(Override(Changed(kByCat, "INLINE_FILTER", "HASH"))),
            by_cat + "SearchSchema differs");
  EXPECT_EQ(Message(Override(Changed(kByCat, "\"color\"", "\"colour\""))),
            by_cat + "SearchSchema differs");
  EXPECT_EQ(Message(Override(Changed(kByCat, R"(["b","a"])", R"(["a"])"))),
            by_cat + "Projection differs");
  EXPECT_EQ(Message(Override(Changed(kPlain, R"("ALL")", R"("INCLUDE")"))),
            invalid + "ProjectionType is INCLUDE, but NonKeyAttributes is not specified");
}

TEST(RestoreVectorIndexesTest, ConstraintsAreTheModels) {
  EXPECT_EQ(Message(Override(Changed(kPlain, ":4", ":0"))),
            "1 validation error detected: Value '0' at 'vectorIndexOverride.1.member.dimensions' "
            "failed to satisfy constraint: Member must have value greater than or equal to 1");
  EXPECT_EQ(Message(Override(R"({"IndexName":"plain"})")).substr(0, 29),
            "4 validation errors detected:");
  rapidjson::Document doc;
  doc.Parse(R"({"TargetTableName":"dst","VectorIndexOverride":{}})");
  EXPECT_EQ(ParseRestoreRequest(doc).error().type, ErrorType::kSerialization);
}

TEST(RestoreVectorIndexesTest, VectorIndexesNeedOnDemandBilling) {
  const std::string provisioned =
      R"(,"BillingModeOverride":"PROVISIONED",)"
      R"("ProvisionedThroughputOverride":{"ReadCapacityUnits":1,"WriteCapacityUnits":1})";
  EXPECT_EQ(Message(provisioned),
            "One or more parameter values were invalid: Vector indexes are only supported on "
            "tables with BillingMode PAY_PER_REQUEST");
  Result<TableInfo> t = Plan(provisioned + Override(""));
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->billing_mode, store::BillingMode::kProvisioned);
}

}  // namespace
}  // namespace fdyno::api
