#include "mcp/session.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <array>

#include "api/json_util.h"
#include "mcp/tools.h"

namespace fdyno::mcp {
namespace {

using rapidjson::Document;
using rapidjson::Value;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

// JSON-RPC 2.0's error codes.
constexpr int kParseError = -32700;
constexpr int kInvalidRequest = -32600;
constexpr int kMethodNotFound = -32601;
constexpr int kInvalidParams = -32602;

constexpr std::array<std::string_view, 3> kProtocolVersions = {"2024-11-05", "2025-03-26",
                                                               "2025-06-18"};

// {"jsonrpc":"2.0","id":<id>, <body>}: body writes "result" or "error" and its value.
template <typename Body>
std::string Envelope(const Value* id, Body body) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("jsonrpc");
  w.String("2.0");
  w.Key("id");
  if (id != nullptr) {
    id->Accept(w);
  } else {
    w.Null();
  }
  body(w);
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string ErrorAnswer(const Value* id, int code, std::string_view message) {
  return Envelope(id, [&](Writer& w) {
    w.Key("error");
    w.StartObject();
    w.Key("code");
    w.Int(code);
    w.Key("message");
    api::Str(w, message);
    w.EndObject();
  });
}

// Writes JSON text that is already valid (a schema) as a value.
void Raw(Writer& w, std::string_view json) {
  w.RawValue(json.data(), json.size(), rapidjson::kObjectType);
}

}  // namespace

std::optional<std::string> Session::Handle(std::string_view message) const {
  Document request;
  request.Parse(message.data(), message.size());
  if (request.HasParseError()) {
    return ErrorAnswer(
        nullptr, kParseError,
        std::string("Parse error: ") + rapidjson::GetParseError_En(request.GetParseError()));
  }
  const Value* id = request.IsObject() ? api::Member(request, "id") : nullptr;
  const Value* method = request.IsObject() ? api::Member(request, "method") : nullptr;
  const Value* jsonrpc = request.IsObject() ? api::Member(request, "jsonrpc") : nullptr;
  if (!request.IsObject() || method == nullptr || !method->IsString() || jsonrpc == nullptr ||
      !jsonrpc->IsString() || api::AsStringView(*jsonrpc) != "2.0" ||
      (id != nullptr && !id->IsString() && !id->IsInt64())) {
    return ErrorAnswer(id != nullptr && (id->IsString() || id->IsInt64()) ? id : nullptr,
                       kInvalidRequest, "Invalid Request");
  }
  if (id == nullptr) return std::nullopt;  // a notification (initialized, cancelled, ...)
  const std::string_view name = api::AsStringView(*method);
  const Value* params = api::Member(request, "params");
  if (params != nullptr && !params->IsObject()) {
    return ErrorAnswer(id, kInvalidParams, "params must be an object");
  }

  if (name == "initialize") {
    std::string_view version = kLatestProtocolVersion;
    const Value* asked = params != nullptr ? api::Member(*params, "protocolVersion") : nullptr;
    for (std::string_view known : kProtocolVersions) {
      if (asked != nullptr && asked->IsString() && api::AsStringView(*asked) == known) {
        version = known;
      }
    }
    return Envelope(id, [&](Writer& w) {
      w.Key("result");
      w.StartObject();
      w.Key("protocolVersion");
      api::Str(w, version);
      w.Key("capabilities");
      Raw(w, R"({"tools":{"listChanged":false}})");
      w.Key("serverInfo");
      w.StartObject();
      w.Key("name");
      w.String("fdyno");
      w.Key("version");
      api::Str(w, version_);
      w.EndObject();
      w.Key("instructions");
      w.String(
          "A DynamoDB-compatible database. Tool arguments are DynamoDB API requests (attribute "
          "values in DynamoDB JSON, e.g. {\"S\": \"text\"}, {\"N\": \"42\"}).");
      w.EndObject();
    });
  }
  if (name == "ping") {
    return Envelope(id, [](Writer& w) {
      w.Key("result");
      w.StartObject();
      w.EndObject();
    });
  }
  if (name == "tools/list") {
    return Envelope(id, [](Writer& w) {
      w.Key("result");
      w.StartObject();
      w.Key("tools");
      w.StartArray();
      for (const Tool& tool : Tools()) {
        w.StartObject();
        w.Key("name");
        api::Str(w, tool.name);
        w.Key("description");
        api::Str(w, tool.description);
        w.Key("inputSchema");
        Raw(w, tool.input_schema);
        w.EndObject();
      }
      w.EndArray();
      w.EndObject();
    });
  }
  if (name == "tools/call") {
    const Value* tool = params != nullptr ? api::Member(*params, "name") : nullptr;
    const Value* arguments = params != nullptr ? api::Member(*params, "arguments") : nullptr;
    if (tool == nullptr || !tool->IsString()) {
      return ErrorAnswer(id, kInvalidParams, "params.name must name a tool");
    }
    if (arguments != nullptr && !arguments->IsObject()) {
      return ErrorAnswer(id, kInvalidParams, "params.arguments must be an object");
    }
    const Value no_arguments(rapidjson::kObjectType);
    Result<ToolResult> called = CallTool(invoke_, api::AsStringView(*tool),
                                         arguments != nullptr ? *arguments : no_arguments);
    if (!called.ok()) return ErrorAnswer(id, kInvalidParams, called.error().message);
    return Envelope(id, [&](Writer& w) {
      w.Key("result");
      w.StartObject();
      w.Key("content");
      w.StartArray();
      w.StartObject();
      w.Key("type");
      w.String("text");
      w.Key("text");
      api::Str(w, called->text);
      w.EndObject();
      w.EndArray();
      w.Key("isError");
      w.Bool(called->is_error);
      w.EndObject();
    });
  }
  return ErrorAnswer(id, kMethodNotFound, "Method not found: " + std::string(name));
}

}  // namespace fdyno::mcp
