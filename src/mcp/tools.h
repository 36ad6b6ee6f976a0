// The tools `fdyno mcp` offers a coding agent: the DynamoDB operations a developer's agent needs,
// each with a JSON Schema of its arguments, which are that operation's request as DynamoDB's
// JSON API takes it (TableName, Key, KeyConditionExpression, ExpressionAttributeValues, ...,
// attribute values in DynamoDB JSON). A call goes through the operation registry, exactly as an
// HTTP request does (same validation, same errors), or to a running server (mcp/remote.h).
//
// Results are bounded: Query and Scan read at most kDefaultLimit items unless the arguments say
// Limit, stream_records returns at most that many records, and a result longer than
// kMaxResultBytes is refused (an error asking for less) rather than cut.
//
// Thread-safety: thread-safe (the registry is).
#pragma once

#include <rapidjson/document.h>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "api/operation.h"
#include "base/result.h"

namespace fdyno::mcp {

inline constexpr int kDefaultLimit = 25;
inline constexpr size_t kMaxResultBytes = 256 * 1024;

struct Tool {
  std::string_view name;
  std::string_view description;
  std::string_view input_schema;  // JSON Schema (JSON text)
};

// Every tool, in the order tools/list gives them.
const std::vector<Tool>& Tools();

// What an operation, or a tool, answered: its response (JSON text), or its DynamoDB error as
// text ("ValidationException: ..."), which MCP returns as a tool result marked isError.
struct ToolResult {
  bool is_error = false;
  std::string text;
};

// Runs one DynamoDB (or DynamoDB Streams) operation with a JSON request body.
using Invoke = std::function<ToolResult(api::Service service, std::string_view operation,
                                        const rapidjson::Value& body)>;

// Operations run through `registry` in this process, as `context` says (account, region,
// clock; each call gets a fresh deadline).
Invoke LocalInvoke(const api::OperationRegistry& registry, api::RequestContext context);

// Runs tool `name` with `arguments` (a JSON object). Errors: Validation when no tool has that
// name (a protocol error for MCP); everything the operations answer is a result.
Result<ToolResult> CallTool(const Invoke& invoke, std::string_view name,
                            const rapidjson::Value& arguments);

}  // namespace fdyno::mcp
