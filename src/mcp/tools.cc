#include "mcp/tools.h"

#include <rapidjson/writer.h>

#include <algorithm>

#include "api/json_util.h"
#include "http/wire.h"

namespace fdyno::mcp {
namespace {

using rapidjson::Document;
using rapidjson::Value;

// A tool is one DynamoDB operation (or, for stream_records, several), with defaults added to
// the arguments an agent gave.
struct ToolSpec {
  Tool tool;
  std::string_view operation;  // empty: stream_records
  bool default_limit = false;  // Query, Scan: Limit kDefaultLimit unless given
};

#define FDYNO_ITEM_MAP \
  R"({"type":"object","description":"attribute name -> DynamoDB JSON value, e.g. {\"id\": {\"S\": \"a1\"}, \"n\": {\"N\": \"3\"}}"})"
#define FDYNO_NAMES R"({"type":"object","description":"#placeholder -> attribute name"})"
#define FDYNO_VALUES \
  R"({"type":"object","description":":placeholder -> DynamoDB JSON value, e.g. {\":v\": {\"S\": \"x\"}}"})"
#define FDYNO_TABLE R"({"type":"string","minLength":3,"maxLength":255})"

const std::vector<ToolSpec>& Specs() {
  static const std::vector<ToolSpec> specs = {
      {{"list_tables", "List the tables (DynamoDB ListTables).",
        R"({"type":"object","properties":{"ExclusiveStartTableName":)" FDYNO_TABLE
        R"(,"Limit":{"type":"integer","minimum":1,"maximum":100}}})"},
       "ListTables"},
      {{"describe_table",
        "Describe a table: key schema, attributes, indexes, stream, item count "
        "(DynamoDB DescribeTable).",
        R"({"type":"object","properties":{"TableName":)" FDYNO_TABLE
        R"(},"required":["TableName"]})"},
       "DescribeTable"},
      {{"create_table",
        "Create a table (DynamoDB CreateTable request). BillingMode defaults to PAY_PER_REQUEST "
        "when neither it nor ProvisionedThroughput is given.",
        R"({"type":"object","properties":{"TableName":)" FDYNO_TABLE
        R"(,"AttributeDefinitions":{"type":"array","items":{"type":"object","properties":{"AttributeName":{"type":"string"},"AttributeType":{"enum":["S","N","B"]}},"required":["AttributeName","AttributeType"]}},)"
        R"("KeySchema":{"type":"array","items":{"type":"object","properties":{"AttributeName":{"type":"string"},"KeyType":{"enum":["HASH","RANGE"]}},"required":["AttributeName","KeyType"]}},)"
        R"("BillingMode":{"enum":["PAY_PER_REQUEST","PROVISIONED"]},"ProvisionedThroughput":{"type":"object"},)"
        R"("GlobalSecondaryIndexes":{"type":"array"},"LocalSecondaryIndexes":{"type":"array"},"StreamSpecification":{"type":"object"}},)"
        R"("required":["TableName","AttributeDefinitions","KeySchema"]})"},
       "CreateTable"},
      {{"delete_table", "Delete a table and all its items (DynamoDB DeleteTable).",
        R"({"type":"object","properties":{"TableName":)" FDYNO_TABLE
        R"(},"required":["TableName"]})"},
       "DeleteTable"},
      {{"get_item", "Read one item by its key (DynamoDB GetItem).",
        R"({"type":"object","properties":{"TableName":)" FDYNO_TABLE R"(,"Key":)" FDYNO_ITEM_MAP
        R"(,"ProjectionExpression":{"type":"string"},"ExpressionAttributeNames":)" FDYNO_NAMES
        R"(,"ConsistentRead":{"type":"boolean"}},"required":["TableName","Key"]})"},
       "GetItem"},
      {{"put_item", "Write a whole item, optionally only if a condition holds (DynamoDB PutItem).",
        R"({"type":"object","properties":{"TableName":)" FDYNO_TABLE R"(,"Item":)" FDYNO_ITEM_MAP
        R"(,"ConditionExpression":{"type":"string"},"ExpressionAttributeNames":)" FDYNO_NAMES
        R"(,"ExpressionAttributeValues":)" FDYNO_VALUES
        R"(,"ReturnValues":{"enum":["NONE","ALL_OLD"]}},"required":["TableName","Item"]})"},
       "PutItem"},
      {{"update_item",
        "Change attributes of one item with an update expression (DynamoDB UpdateItem).",
        R"({"type":"object","properties":{"TableName":)" FDYNO_TABLE R"(,"Key":)" FDYNO_ITEM_MAP
        R"(,"UpdateExpression":{"type":"string"},"ConditionExpression":{"type":"string"},"ExpressionAttributeNames":)" FDYNO_NAMES
        R"(,"ExpressionAttributeValues":)" FDYNO_VALUES
        R"(,"ReturnValues":{"enum":["NONE","ALL_OLD","UPDATED_OLD","ALL_NEW","UPDATED_NEW"]}},"required":["TableName","Key"]})"},
       "UpdateItem"},
      {{"delete_item", "Delete one item by its key (DynamoDB DeleteItem).",
        R"({"type":"object","properties":{"TableName":)" FDYNO_TABLE R"(,"Key":)" FDYNO_ITEM_MAP
        R"(,"ConditionExpression":{"type":"string"},"ExpressionAttributeNames":)" FDYNO_NAMES
        R"(,"ExpressionAttributeValues":)" FDYNO_VALUES
        R"(,"ReturnValues":{"enum":["NONE","ALL_OLD"]}},"required":["TableName","Key"]})"},
       "DeleteItem"},
      {{"query",
        "Read the items of one partition key, of the table or an index, in sort key order "
        "(DynamoDB Query). At most 25 items unless Limit says otherwise; LastEvaluatedKey in "
        "the result continues (ExclusiveStartKey).",
        R"({"type":"object","properties":{"TableName":)" FDYNO_TABLE
        R"(,"IndexName":{"type":"string"},"KeyConditionExpression":{"type":"string"},"FilterExpression":{"type":"string"},"ProjectionExpression":{"type":"string"},"ExpressionAttributeNames":)" FDYNO_NAMES
        R"(,"ExpressionAttributeValues":)" FDYNO_VALUES
        R"(,"ScanIndexForward":{"type":"boolean"},"Limit":{"type":"integer","minimum":1},"ExclusiveStartKey":)" FDYNO_ITEM_MAP
        R"(,"ConsistentRead":{"type":"boolean"},"Select":{"enum":["ALL_ATTRIBUTES","ALL_PROJECTED_ATTRIBUTES","SPECIFIC_ATTRIBUTES","COUNT"]}},"required":["TableName","KeyConditionExpression"]})"},
       "Query",
       /*default_limit=*/true},
      {{"scan",
        "Read the items of a table or an index, optionally filtered (DynamoDB Scan). At most 25 "
        "items unless Limit says otherwise; LastEvaluatedKey continues (ExclusiveStartKey).",
        R"({"type":"object","properties":{"TableName":)" FDYNO_TABLE
        R"(,"IndexName":{"type":"string"},"FilterExpression":{"type":"string"},"ProjectionExpression":{"type":"string"},"ExpressionAttributeNames":)" FDYNO_NAMES
        R"(,"ExpressionAttributeValues":)" FDYNO_VALUES
        R"(,"Limit":{"type":"integer","minimum":1},"ExclusiveStartKey":)" FDYNO_ITEM_MAP
        R"(,"ConsistentRead":{"type":"boolean"},"Select":{"enum":["ALL_ATTRIBUTES","ALL_PROJECTED_ATTRIBUTES","SPECIFIC_ATTRIBUTES","COUNT"]}},"required":["TableName"]})"},
       "Scan",
       /*default_limit=*/true},
      {{"execute_statement",
        "Run one PartiQL statement: SELECT, INSERT, UPDATE or DELETE (DynamoDB "
        "ExecuteStatement). Parameters fill the statement's ? in order.",
        R"({"type":"object","properties":{"Statement":{"type":"string"},"Parameters":{"type":"array","items":{"type":"object"}},"Limit":{"type":"integer","minimum":1},"NextToken":{"type":"string"},"ConsistentRead":{"type":"boolean"}},"required":["Statement"]})"},
       "ExecuteStatement"},
      {{"stream_records",
        "The latest records of a table's DynamoDB stream (the table needs a "
        "StreamSpecification), oldest first: at most Limit, 25 by default.",
        R"({"type":"object","properties":{"TableName":)" FDYNO_TABLE
        R"(,"Limit":{"type":"integer","minimum":1,"maximum":1000}},"required":["TableName"]})"},
       ""},
  };
  return specs;
}

#undef FDYNO_ITEM_MAP
#undef FDYNO_NAMES
#undef FDYNO_VALUES
#undef FDYNO_TABLE

std::string ErrorText(const Error& error) {
  const Error told = http::ClientError(error);
  return std::string(WireType(told.type)) + ": " + told.message;
}

Result<std::string> Run(const api::OperationRegistry& registry, const api::RequestContext& ctx,
                        api::Service service, std::string_view operation, const Value& body) {
  const api::Handler* handler = registry.Find(service, operation);
  if (handler == nullptr) return Error::Internal(std::string(operation) + " is not built");
  return (*handler)(ctx, body);
}

Result<Document> RunParsed(const api::OperationRegistry& registry, const api::RequestContext& ctx,
                           api::Service service, std::string_view operation, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(std::string answer, Run(registry, ctx, service, operation, body));
  Document out;
  out.Parse(answer.data(), answer.size());
  return out;
}

// Sequence numbers are decimal strings of up to 40 digits: compared as numbers.
bool Earlier(const Value& a, const Value& b) {
  const std::string_view x = api::AsStringView(a["dynamodb"]["SequenceNumber"]);
  const std::string_view y = api::AsStringView(b["dynamodb"]["SequenceNumber"]);
  return x.size() != y.size() ? x.size() < y.size() : x < y;
}

// stream_records: every shard of the table's latest stream read from its trim horizon, the
// last `limit` records kept (a shard is read at most kMaxPages pages).
Result<std::string> StreamRecords(const api::OperationRegistry& registry,
                                  const api::RequestContext& ctx, const Value& args) {
  constexpr int kMaxPages = 1000;
  const Value* table = api::Member(args, "TableName");
  const Value* limit_value = api::Member(args, "Limit");
  int64_t limit = kDefaultLimit;
  if (limit_value != nullptr) {
    std::optional<int64_t> given = api::AsInt64(*limit_value);
    if (!given || *given < 1 || *given > 1000) {
      return Error::Validation("Limit must be an integer from 1 to 1000");
    }
    limit = *given;
  }
  Document describe(rapidjson::kObjectType);
  if (table != nullptr)
    describe.AddMember("TableName", Value(*table, describe.GetAllocator()),
                       describe.GetAllocator());
  FDYNO_ASSIGN_OR_RETURN(Document described, RunParsed(registry, ctx, api::Service::kDynamoDB,
                                                       "DescribeTable", describe));
  const Value* arn = api::Member(described["Table"], "LatestStreamArn");
  if (arn == nullptr) {
    return Error::Validation("Table " + std::string(api::AsStringView(*table)) +
                             " has no stream: give it a StreamSpecification");
  }
  Document records(rapidjson::kArrayType);
  Document stream_request(rapidjson::kObjectType);
  stream_request.AddMember("StreamArn", Value(*arn, stream_request.GetAllocator()),
                           stream_request.GetAllocator());
  FDYNO_ASSIGN_OR_RETURN(Document stream, RunParsed(registry, ctx, api::Service::kStreams,
                                                    "DescribeStream", stream_request));
  for (const Value& shard : stream["StreamDescription"]["Shards"].GetArray()) {
    Document it_request(rapidjson::kObjectType);
    auto& a = it_request.GetAllocator();
    it_request.AddMember("StreamArn", Value(*arn, a), a);
    it_request.AddMember("ShardId", Value(shard["ShardId"], a), a);
    it_request.AddMember("ShardIteratorType", "TRIM_HORIZON", a);
    FDYNO_ASSIGN_OR_RETURN(Document iterator, RunParsed(registry, ctx, api::Service::kStreams,
                                                        "GetShardIterator", it_request));
    std::string next = std::string(api::AsStringView(iterator["ShardIterator"]));
    for (int page = 0; page < kMaxPages && !next.empty(); ++page) {
      Document get(rapidjson::kObjectType);
      get.AddMember("ShardIterator", Value(next.c_str(), get.GetAllocator()), get.GetAllocator());
      FDYNO_ASSIGN_OR_RETURN(Document got,
                             RunParsed(registry, ctx, api::Service::kStreams, "GetRecords", get));
      const Value& page_records = got["Records"];
      for (const Value& r : page_records.GetArray()) {
        records.PushBack(Value(r, records.GetAllocator()), records.GetAllocator());
      }
      const Value* following = api::Member(got, "NextShardIterator");
      next = following == nullptr || page_records.Empty()
                 ? std::string()
                 : std::string(api::AsStringView(*following));
    }
  }
  auto all = records.GetArray();
  std::sort(all.begin(), all.end(), Earlier);
  const size_t skip = all.Size() > static_cast<size_t>(limit) ? all.Size() - limit : 0;
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("Records");
  w.StartArray();
  for (size_t i = skip; i < all.Size(); ++i) all[i].Accept(w);
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

// The arguments with the tool's defaults added.
Document WithDefaults(const ToolSpec& spec, const Value& arguments) {
  Document body;
  body.CopyFrom(arguments, body.GetAllocator());
  auto& a = body.GetAllocator();
  if (spec.default_limit && !body.HasMember("Limit")) body.AddMember("Limit", kDefaultLimit, a);
  if (spec.operation == "CreateTable" && !body.HasMember("BillingMode") &&
      !body.HasMember("ProvisionedThroughput")) {
    body.AddMember("BillingMode", "PAY_PER_REQUEST", a);
  }
  return body;
}

}  // namespace

const std::vector<Tool>& Tools() {
  static const std::vector<Tool> tools = [] {
    std::vector<Tool> out;
    for (const ToolSpec& spec : Specs()) out.push_back(spec.tool);
    return out;
  }();
  return tools;
}

Result<ToolResult> CallTool(const api::OperationRegistry& registry,
                            const api::RequestContext& context, std::string_view name,
                            const Value& arguments) {
  const auto& specs = Specs();
  auto spec = std::find_if(specs.begin(), specs.end(),
                           [&](const ToolSpec& s) { return s.tool.name == name; });
  if (spec == specs.end()) return Error::Validation("Unknown tool: " + std::string(name));
  const Document body = WithDefaults(*spec, arguments);
  Result<std::string> answer =
      spec->operation.empty()
          ? StreamRecords(registry, context, body)
          : Run(registry, context, api::Service::kDynamoDB, spec->operation, body);
  if (!answer.ok()) return ToolResult{.is_error = true, .text = ErrorText(answer.error())};
  if (answer->size() > kMaxResultBytes) {
    return ToolResult{.is_error = true,
                      .text = "The result is " + std::to_string(answer->size()) +
                              " bytes, more than the " + std::to_string(kMaxResultBytes) +
                              " a tool returns: ask for less (Limit, ProjectionExpression, a "
                              "narrower key condition)"};
  }
  return ToolResult{.is_error = false, .text = std::move(answer).value()};
}

}  // namespace fdyno::mcp
