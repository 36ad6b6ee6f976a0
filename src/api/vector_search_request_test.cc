// SearchVectors' request: every member's JSON type, its constraints and their messages, the
// order of the checks (DecodeSearchRequest), and the checks against an index (SearchQueryFor).
#include "api/vector_search_request.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cctype>
#include <string>
#include <utility>
#include <vector>

namespace fdyno::api {
namespace {

constexpr const char* kValid =
    R"("TableName":"tbl","IndexName":"vix","SearchVector":[{"N":"1"},{"N":"0.5"}],"TopK":3)";

Result<SearchRequest> Decode(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  EXPECT_FALSE(doc.HasParseError()) << json;
  return DecodeSearchRequest(doc);
}

std::string Message(const std::string& json) {
  Result<SearchRequest> r = Decode(json);
  return r.ok() ? "ok" : std::string(WireType(r.error().type)) + ": " + r.error().message;
}

// kValid with `extra` members added (each of which must not repeat one of kValid's).
std::string With(const std::string& extra) {
  return "{" + std::string(kValid) + (extra.empty() ? "" : "," + extra) + "}";
}

// A request whose members are kValid's but for `member`, which is `value` (or absent when
// `value` is empty).
std::string Replacing(const std::string& member, const std::string& value) {
  std::string body = "{";
  const char* members[][2] = {{"TableName", R"("tbl")"},
                              {"IndexName", R"("vix")"},
                              {"SearchVector", R"([{"N":"1"},{"N":"0.5"}])"},
                              {"TopK", "3"}};
  for (const auto& [name, v] : members) {
    const std::string text = name == member ? value : v;
    if (text.empty()) continue;
    if (body.size() > 1) body += ",";
    body += "\"" + std::string(name) + "\":" + text;
  }
  return body + "}";
}

// Whether `text` starts with `prefix` (messages whose tail is another component's wording).
bool StartsWith(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

std::string Constraint(const std::string& value, const std::string& path,
                       const std::string& constraint) {
  return "ValidationException: 1 validation error detected: Value " + value + " at '" + path +
         "' failed to satisfy constraint: " + constraint;
}

TEST(VectorSearchRequestTest, AValidRequestDecodes) {
  Result<SearchRequest> r = Decode(With(
      R"("ReturnConsumedCapacity":"TOTAL","SearchConditionExpression":"#c = :c AND :r = color",)"
      R"("ProjectionExpression":"pk, v","ExpressionAttributeNames":{"#c":"cat"},)"
      R"("ExpressionAttributeValues":{":c":{"S":"x"},":r":{"S":"red"}})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->table_name, "tbl");
  EXPECT_EQ(r->index_name, "vix");
  EXPECT_EQ(r->vector, (std::vector<float>{1.0f, 0.5f}));
  EXPECT_EQ(r->top_k, 3);
  EXPECT_EQ(r->rcc, ReturnConsumedCapacity::kTotal);
  ASSERT_EQ(r->conditions.size(), 2u);
  EXPECT_EQ(r->conditions[0].first, "cat");
  EXPECT_EQ(r->conditions[0].second, model::AttributeValue::S("x"));
  EXPECT_EQ(r->conditions[1].first, "color");  // the value first: the operands swap
  ASSERT_TRUE(r->projection.has_value());
  EXPECT_EQ(r->projection->size(), 2u);
  r = Decode(With(""));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->rcc, ReturnConsumedCapacity::kNone);
  EXPECT_TRUE(r->conditions.empty());
  EXPECT_FALSE(r->projection.has_value());
}

TEST(VectorSearchRequestTest, MemberTypesAreSerializationErrors) {
  const std::string cases[] = {
      Replacing("TableName", "5"),
      Replacing("IndexName", "[]"),
      Replacing("SearchVector", R"({"N":"1"})"),
      Replacing("SearchVector", "[1]"),
      Replacing("TopK", R"("3")"),
      With(R"("ReturnConsumedCapacity":true)"),
      With(R"("SearchConditionExpression":{})"),
      With(R"("ProjectionExpression":1)"),
      With(R"("ExpressionAttributeNames":[])"),
      With(R"("ExpressionAttributeValues":{":v":"x"})"),
  };
  for (const std::string& body : cases) {
    Result<SearchRequest> r = Decode(body);
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.error().type, ErrorType::kSerialization) << body << ": " << r.error().message;
  }
  // A wrong type wins over constraint violations elsewhere.
  EXPECT_TRUE(StartsWith(Message(R"({"TopK":"x"})"), "SerializationException"));
  rapidjson::Document doc;
  doc.Parse("[]");
  EXPECT_EQ(DecodeSearchRequest(doc).error().type, ErrorType::kSerialization);
}

TEST(VectorSearchRequestTest, RequiredMembersAreCollectedInOneError) {
  EXPECT_EQ(Message("{}"),
            "ValidationException: 4 validation errors detected: Value null at 'tableName' failed "
            "to satisfy constraint: Member must not be null; Value null at 'indexName' failed to "
            "satisfy constraint: Member must not be null; Value null at 'searchVector' failed to "
            "satisfy constraint: Member must not be null; Value null at 'topK' failed to satisfy "
            "constraint: Member must not be null");
  for (const char* member : {"TableName", "IndexName", "SearchVector", "TopK"}) {
    std::string path = member;
    path[0] = static_cast<char>(std::tolower(path[0]));
    EXPECT_EQ(Message(Replacing(member, "")), Constraint("null", path, "Member must not be null"));
    EXPECT_EQ(Message(Replacing(member, "null")),
              Constraint("null", path, "Member must not be null"));
  }
}

TEST(VectorSearchRequestTest, TableName) {
  EXPECT_EQ(Message(Replacing("TableName", R"("")")),
            Constraint("''", "tableName", "Member must have length greater than or equal to 1"));
  EXPECT_EQ(Message(Replacing("TableName", R"("ab")")),
            Constraint("'ab'", "tableName", "Member must have length greater than or equal to 3"));
  EXPECT_EQ(Message(Replacing("TableName", R"("a b")")),
            Constraint("'a b'", "tableName",
                       "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"));
  const std::string long_name(256, 'a');
  EXPECT_EQ(Message(Replacing("TableName", "\"" + long_name + "\"")),
            Constraint("'" + long_name + "'", "tableName",
                       "Member must have length less than or equal to 255"));
  EXPECT_EQ(Message(Replacing("TableName", "\"" + long_name.substr(1) + "\"")), "ok");
}

TEST(VectorSearchRequestTest, IndexName) {
  EXPECT_EQ(Message(Replacing("IndexName", R"("ab")")),
            Constraint("'ab'", "indexName", "Member must have length greater than or equal to 3"));
  EXPECT_EQ(Message(Replacing("IndexName", R"("a:b")")),
            Constraint("'a:b'", "indexName",
                       "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"));
  const std::string long_name(256, 'i');
  EXPECT_EQ(Message(Replacing("IndexName", "\"" + long_name + "\"")),
            Constraint("'" + long_name + "'", "indexName",
                       "Member must have length less than or equal to 255"));
  // Both violations of a short name with a bad character are reported.
  EXPECT_TRUE(StartsWith(Message(Replacing("IndexName", R"("a:")")),
                         "ValidationException: 2 validation errors detected: "));
  EXPECT_EQ(Message(Replacing("IndexName", R"("a.b-c_9")")), "ok");
}

TEST(VectorSearchRequestTest, TopK) {
  for (const char* bad : {"0", "-1", "101", "1000000"}) {
    EXPECT_EQ(Message(Replacing("TopK", bad)),
              "ValidationException: Provided TopK value is out of valid range")
        << bad;
  }
  for (const char* good : {"1", "100"}) EXPECT_EQ(Message(Replacing("TopK", good)), "ok");
  // The range is checked after the collected constraints.
  EXPECT_EQ(Message(R"({"TableName":"tbl","IndexName":"vix","TopK":0})"),
            Constraint("null", "searchVector", "Member must not be null"));
}

TEST(VectorSearchRequestTest, SearchVector) {
  EXPECT_EQ(Message(Replacing("SearchVector", R"([{"N":"1"},{"S":"2"}])")),
            "ValidationException: One or more parameter values were invalid: Type mismatch for "
            "SearchVector[1] Expected: N Actual: S");
  EXPECT_EQ(Message(Replacing("SearchVector", R"([{"L":[]}])")),
            "ValidationException: One or more parameter values were invalid: Type mismatch for "
            "SearchVector[0] Expected: N Actual: L");
  EXPECT_EQ(Message(Replacing("SearchVector", R"([{"N":"1e39"}])")),
            "ValidationException: One or more parameter values were invalid: SearchVector holds "
            "a value out of range for a 32-bit float");
  // An attribute value DynamoDB rejects as such is rejected as in any request.
  EXPECT_TRUE(
      StartsWith(Message(Replacing("SearchVector", R"([{"N":"abc"}])")), "ValidationException:"));
  // The float32 nearest to each number; below float32's smallest magnitude, 0.
  Result<SearchRequest> r = Decode(Replacing("SearchVector", R"([{"N":"0.1"},{"N":"1e-50"}])"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->vector, (std::vector<float>{0.1f, 0.0f}));
  // An empty vector decodes; no index has 0 dimensions (SearchQueryFor).
  r = Decode(Replacing("SearchVector", "[]"));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->vector.empty());
}

TEST(VectorSearchRequestTest, ReturnConsumedCapacity) {
  EXPECT_EQ(Message(With(R"("ReturnConsumedCapacity":"ALL")")),
            Constraint("'ALL'", "returnConsumedCapacity",
                       "Member must satisfy enum value set: [INDEXES, TOTAL, NONE]"));
  const std::pair<const char*, ReturnConsumedCapacity> values[] = {
      {"INDEXES", ReturnConsumedCapacity::kIndexes},
      {"TOTAL", ReturnConsumedCapacity::kTotal},
      {"NONE", ReturnConsumedCapacity::kNone}};
  for (const auto& [text, value] : values) {
    Result<SearchRequest> r =
        Decode(With(std::string(R"("ReturnConsumedCapacity":")") + text + "\""));
    ASSERT_TRUE(r.ok()) << text;
    EXPECT_EQ(r->rcc, value) << text;
  }
}

TEST(VectorSearchRequestTest, SearchConditionExpressionIsEqualitiesJoinedByAnd) {
  auto condition = [](const std::string& expression) {
    return Message(With(R"("SearchConditionExpression":")" + expression +
                        R"(","ExpressionAttributeValues":{":v":{"S":"x"},":w":{"S":"y"}})"));
  };
  EXPECT_EQ(condition("a = :v AND b = :w"), "ok");
  EXPECT_EQ(condition("(a = :v) AND (b = :w)"), "ok");
  EXPECT_EQ(condition("a = :v OR b = :w"),
            "ValidationException: Invalid operator used in SearchConditionExpression: OR");
  EXPECT_EQ(condition("NOT a = :v AND b = :w"),
            "ValidationException: Invalid operator used in SearchConditionExpression: NOT");
  for (const char* bad :
       {"a < :v AND b = :w", "a <> :v AND b = :w", "a = b AND :v = :w", "a BETWEEN :v AND :w",
        "a IN (:v, :w)", "begins_with(a, :v) AND b = :w"}) {
    EXPECT_EQ(condition(bad),
              "ValidationException: Invalid comparator used in SearchConditionExpression")
        << bad;
  }
  EXPECT_EQ(condition("a.b = :v AND c = :w"),
            "ValidationException: SearchConditionExpression can only reference top-level "
            "attributes: [a, b]");
  EXPECT_EQ(condition("a[0] = :v AND c = :w"),
            "ValidationException: SearchConditionExpression can only reference top-level "
            "attributes: [a, [0]]");
  EXPECT_EQ(condition("a = :v AND a = :w"),
            "ValidationException: SearchConditionExpressions must only contain one condition "
            "per attribute: a");
  // A syntax error is the parser's, as in every expression.
  EXPECT_TRUE(StartsWith(condition("a = = :v AND b = :w"),
                         "ValidationException: Invalid SearchConditionExpression: "));
}

TEST(VectorSearchRequestTest, ProjectionExpression) {
  Result<SearchRequest> r = Decode(With(R"("ProjectionExpression":"#p, a.b[1]",)"
                                        R"("ExpressionAttributeNames":{"#p":"pk"})"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->projection->size(), 2u);
  EXPECT_EQ(r->projection->at(0).root(), "pk");
  EXPECT_TRUE(StartsWith(Message(With(R"("ProjectionExpression":"a,,b")")),
                         "ValidationException: Invalid ProjectionExpression: "));
  EXPECT_TRUE(StartsWith(Message(With(R"("ProjectionExpression":"a, a")")),
                         "ValidationException: Invalid ProjectionExpression: "));
}

TEST(VectorSearchRequestTest, NamesAndValuesOnlyWithExpressionsAndAllUsed) {
  EXPECT_EQ(Message(With(R"("ExpressionAttributeNames":{"#a":"a"})")),
            "ValidationException: ExpressionAttributeNames can only be specified when using "
            "expressions: SearchConditionExpression and ProjectionExpression are null");
  EXPECT_EQ(Message(With(R"("ExpressionAttributeValues":{":a":{"S":"a"}})")),
            "ValidationException: ExpressionAttributeValues can only be specified when using "
            "expressions: SearchConditionExpression and ProjectionExpression are null");
  EXPECT_EQ(Message(With(R"("ProjectionExpression":"a","ExpressionAttributeNames":{"#a":"a"})")),
            "ValidationException: Value provided in ExpressionAttributeNames unused in "
            "expressions: keys: {#a}");
  EXPECT_EQ(Message(With(R"("SearchConditionExpression":"a = :v",)"
                         R"("ExpressionAttributeValues":{":v":{"S":"x"},":w":{"S":"y"}})")),
            "ValidationException: Value provided in ExpressionAttributeValues unused in "
            "expressions: keys: {:w}");
  EXPECT_EQ(Message(With(R"("ProjectionExpression":"#a")")),
            "ValidationException: Invalid ProjectionExpression: An expression attribute name "
            "used in the document path is not defined; attribute name: #a");
  EXPECT_EQ(Message(With(R"("SearchConditionExpression":"a = :v")")),
            "ValidationException: Invalid SearchConditionExpression: An expression attribute "
            "value used in expression is not defined; attribute value: :v");
  EXPECT_EQ(Message(With(R"("ProjectionExpression":"a","ExpressionAttributeNames":{})")),
            "ValidationException: ExpressionAttributeNames must not be empty");
  EXPECT_EQ(Message(With(R"("ProjectionExpression":"#a","ExpressionAttributeNames":{"#a":""})")),
            "ValidationException: ExpressionAttributeNames contains invalid value: Empty "
            "attribute name for key #a");
  EXPECT_TRUE(StartsWith(
      Message(With(R"("SearchConditionExpression":"a = :v",)"
                   R"("ExpressionAttributeValues":{":v":{"S":""},":w":{"NULL":false}})")),
      "ValidationException: ExpressionAttributeValues contains invalid value: "));
}

store::VectorIndex Index(bool with_hash) {
  store::VectorIndex index;
  index.name = "vix";
  index.attribute = "v";
  index.dimensions = 2;
  if (with_hash) {
    index.search_schema.push_back({{"cat", store::ScalarType::kS}, store::SearchRole::kHash});
  }
  index.search_schema.push_back({{"sz", store::ScalarType::kN}, store::SearchRole::kInlineFilter});
  return index;
}

std::string QueryMessage(const std::string& extra, bool with_hash) {
  Result<SearchRequest> r = Decode(With(extra));
  EXPECT_TRUE(r.ok()) << extra << ": " << r.error().message;
  if (!r.ok()) return "decode failed";
  Result<store::VectorQuery> q = SearchQueryFor(*r, Index(with_hash));
  return q.ok() ? "ok" : q.error().message;
}

TEST(VectorSearchRequestTest, TheQueryFitsTheIndex) {
  Result<SearchRequest> r =
      Decode(With(R"("SearchConditionExpression":"sz = :n AND cat = :c",)"
                  R"("ExpressionAttributeValues":{":n":{"N":"3"},":c":{"S":"x"}})"));
  ASSERT_TRUE(r.ok());
  Result<store::VectorQuery> q = SearchQueryFor(*r, Index(true));
  ASSERT_TRUE(q.ok()) << q.error().message;
  EXPECT_EQ(q->vector, r->vector);
  EXPECT_EQ(q->top_k, 3);
  ASSERT_NE(q->hash, nullptr);
  EXPECT_EQ(*q->hash, model::AttributeValue::S("x"));
  ASSERT_EQ(q->filters.size(), 1u);  // the HASH equality selects a partition, not a filter
  EXPECT_EQ(q->filters[0].first, "sz");
  // Without a HASH element, no partition.
  r = Decode(With(""));
  q = SearchQueryFor(*r, Index(false));
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->hash, nullptr);
  EXPECT_TRUE(q->filters.empty());
}

TEST(VectorSearchRequestTest, TheQueryErrorsAgainstTheIndex) {
  EXPECT_EQ(QueryMessage("", true),
            "SearchConditionExpression must be provided when SearchSchema has a HASH key");
  EXPECT_EQ(QueryMessage(R"("SearchConditionExpression":"sz = :n",)"
                         R"("ExpressionAttributeValues":{":n":{"N":"3"}})",
                         true),
            "SearchConditionExpression must be provided when SearchSchema has a HASH key");
  EXPECT_EQ(QueryMessage(R"("SearchConditionExpression":"tag = :n",)"
                         R"("ExpressionAttributeValues":{":n":{"N":"3"}})",
                         false),
            "SearchConditionExpression can only reference SearchSchema attributes of the index: "
            "tag");
  EXPECT_EQ(QueryMessage(R"("SearchConditionExpression":"sz = :n",)"
                         R"("ExpressionAttributeValues":{":n":{"S":"3"}})",
                         false),
            "One or more parameter values were invalid: Condition parameter type does not match "
            "schema type");
  // The vector attribute is not in the search schema either.
  EXPECT_EQ(QueryMessage(R"("SearchConditionExpression":"v = :n",)"
                         R"("ExpressionAttributeValues":{":n":{"N":"3"}})",
                         false),
            "SearchConditionExpression can only reference SearchSchema attributes of the index: v");
  Result<SearchRequest> r = Decode(Replacing("SearchVector", R"([{"N":"1"}])"));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(SearchQueryFor(*r, Index(false)).error().message,
            "One or more parameter values were invalid: SearchVector has 1 dimensions, but the "
            "index requires 2. IndexName: vix");
  r = Decode(Replacing("SearchVector", "[]"));
  EXPECT_EQ(SearchQueryFor(*r, Index(false)).error().message,
            "One or more parameter values were invalid: SearchVector has 0 dimensions, but the "
            "index requires 2. IndexName: vix");
}

}  // namespace
}  // namespace fdyno::api
