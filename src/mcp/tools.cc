#include "mcp/tools.h"

#include <rapidjson/writer.h>

#include <algorithm>

#include "api/json_util.h"
#include "http/wire.h"
#include "kv/run.h"

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

// An operation's answer parsed; on its error, *failed holds it and nothing is answered.
std::optional<Document> Parsed(const Invoke& invoke, api::Service service,
                               std::string_view operation, const Value& body, ToolResult* failed) {
  ToolResult answer = invoke(service, operation, body);
  if (answer.is_error) {
    *failed = std::move(answer);
    return std::nullopt;
  }
  Document out;
  out.Parse(answer.text.data(), answer.text.size());
  return out;
}

ToolResult Refused(std::string message) {
  return {.is_error = true, .text = ErrorText(Error::Validation(std::move(message)))};
}

// Sequence numbers are decimal strings of up to 40 digits: compared as numbers.
bool Earlier(const Value& a, const Value& b) {
  const std::string_view x = api::AsStringView(a["dynamodb"]["SequenceNumber"]);
  const std::string_view y = api::AsStringView(b["dynamodb"]["SequenceNumber"]);
  return x.size() != y.size() ? x.size() < y.size() : x < y;
}

// stream_records: every shard of the table's latest stream read from its trim horizon, the
// last `limit` records kept (a shard is read at most kMaxPages pages).
ToolResult StreamRecords(const Invoke& invoke, const Value& args) {
  constexpr int kMaxPages = 1000;
  int64_t limit = kDefaultLimit;
  if (const Value* given = api::Member(args, "Limit"); given != nullptr) {
    std::optional<int64_t> n = api::AsInt64(*given);
    if (!n || *n < 1 || *n > 1000) return Refused("Limit must be an integer from 1 to 1000");
    limit = *n;
  }
  ToolResult failed;
  Document describe(rapidjson::kObjectType);
  auto& da = describe.GetAllocator();
  if (const Value* table = api::Member(args, "TableName"); table != nullptr) {
    describe.AddMember("TableName", Value(*table, da), da);
  }
  std::optional<Document> described =
      Parsed(invoke, api::Service::kDynamoDB, "DescribeTable", describe, &failed);
  if (!described) return failed;
  const Value* arn = api::Member((*described)["Table"], "LatestStreamArn");
  if (arn == nullptr) return Refused("The table has no stream: give it a StreamSpecification");
  Document stream_request(rapidjson::kObjectType);
  stream_request.AddMember("StreamArn", Value(*arn, stream_request.GetAllocator()),
                           stream_request.GetAllocator());
  std::optional<Document> stream =
      Parsed(invoke, api::Service::kStreams, "DescribeStream", stream_request, &failed);
  if (!stream) return failed;
  Document records(rapidjson::kArrayType);
  for (const Value& shard : (*stream)["StreamDescription"]["Shards"].GetArray()) {
    Document it_request(rapidjson::kObjectType);
    auto& a = it_request.GetAllocator();
    it_request.AddMember("StreamArn", Value(*arn, a), a);
    it_request.AddMember("ShardId", Value(shard["ShardId"], a), a);
    it_request.AddMember("ShardIteratorType", "TRIM_HORIZON", a);
    std::optional<Document> iterator =
        Parsed(invoke, api::Service::kStreams, "GetShardIterator", it_request, &failed);
    if (!iterator) return failed;
    std::string next(api::AsStringView((*iterator)["ShardIterator"]));
    for (int page = 0; page < kMaxPages && !next.empty(); ++page) {
      Document get(rapidjson::kObjectType);
      get.AddMember("ShardIterator", Value(next.c_str(), get.GetAllocator()), get.GetAllocator());
      std::optional<Document> got =
          Parsed(invoke, api::Service::kStreams, "GetRecords", get, &failed);
      if (!got) return failed;
      const Value& page_records = (*got)["Records"];
      for (const Value& r : page_records.GetArray()) {
        records.PushBack(Value(r, records.GetAllocator()), records.GetAllocator());
      }
      const Value* following = api::Member(*got, "NextShardIterator");
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
  return {.is_error = false, .text = std::string(buffer.GetString(), buffer.GetSize())};
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

Invoke LocalInvoke(const api::OperationRegistry& registry, api::RequestContext context) {
  return [&registry, context = std::move(context)](api::Service service, std::string_view operation,
                                                   const Value& body) -> ToolResult {
    const api::Handler* handler = registry.Find(service, operation);
    if (handler == nullptr) {
      return {.is_error = true,
              .text = ErrorText(Error::Internal(std::string(operation) + " is not built"))};
    }
    api::RequestContext ctx = context;
    ctx.request_id = "mcp";
    ctx.deadline = ctx.clock->Now() + kv::OperationTimeout();
    Result<std::string> answer = (*handler)(ctx, body);
    if (!answer.ok()) return {.is_error = true, .text = ErrorText(answer.error())};
    return {.is_error = false, .text = std::move(answer).value()};
  };
}

Result<ToolResult> CallTool(const Invoke& invoke, std::string_view name, const Value& arguments) {
  const auto& specs = Specs();
  auto spec = std::find_if(specs.begin(), specs.end(),
                           [&](const ToolSpec& s) { return s.tool.name == name; });
  if (spec == specs.end()) return Error::Validation("Unknown tool: " + std::string(name));
  const Document body = WithDefaults(*spec, arguments);
  ToolResult answer = spec->operation.empty()
                          ? StreamRecords(invoke, body)
                          : invoke(api::Service::kDynamoDB, spec->operation, body);
  if (!answer.is_error && answer.text.size() > kMaxResultBytes) {
    return ToolResult{.is_error = true,
                      .text = "The result is " + std::to_string(answer.text.size()) +
                              " bytes, more than the " + std::to_string(kMaxResultBytes) +
                              " a tool returns: ask for less (Limit, ProjectionExpression, a "
                              "narrower key condition)"};
  }
  return answer;
}

}  // namespace fdyno::mcp
