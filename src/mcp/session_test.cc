#include "mcp/session.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "mcp/tools.h"

namespace fdyno::mcp {
namespace {

using rapidjson::Document;

std::string Echo(const rapidjson::Value& body) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  body.Accept(w);
  return buffer.GetString();
}

class SessionTest : public ::testing::Test {
 protected:
  SessionTest() {
    registry_.Register("ListTables", [](const api::RequestContext&, const rapidjson::Value&) {
      return Result<std::string>(std::string(R"({"TableNames":["music"]})"));
    });
    // Query and CreateTable answer their request, so a test sees the defaults the tool added.
    for (const char* op : {"Query", "CreateTable"}) {
      registry_.Register(op, [](const api::RequestContext&, const rapidjson::Value& body) {
        return Result<std::string>(Echo(body));
      });
    }
    registry_.Register("PutItem", [](const api::RequestContext&, const rapidjson::Value&) {
      return Result<std::string>(Error::Validation("One or more parameter values were invalid"));
    });
    registry_.Register("Scan", [](const api::RequestContext&, const rapidjson::Value&) {
      return Result<std::string>(std::string(kMaxResultBytes + 1, ' '));
    });
  }

  Document Ask(std::string_view message) {
    std::optional<std::string> answer = session_.Handle(message);
    EXPECT_TRUE(answer.has_value()) << message;
    Document d;
    d.Parse(answer.value_or("{}").c_str());
    EXPECT_FALSE(d.HasParseError());
    return d;
  }

  Document Call(std::string_view tool, std::string_view arguments) {
    return Ask(R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":")" +
               std::string(tool) + R"(","arguments":)" + std::string(arguments) + "}}");
  }

  api::OperationRegistry registry_;
  Session session_{LocalInvoke(registry_, api::RequestContext{}), "0.1.0"};
};

TEST_F(SessionTest, InitializeAnswersAKnownVersionOrTheLatest) {
  Document d = Ask(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})");
  EXPECT_EQ(d["id"].GetInt(), 1);
  EXPECT_STREQ(d["result"]["protocolVersion"].GetString(), "2025-03-26");
  EXPECT_TRUE(d["result"]["capabilities"]["tools"].IsObject());
  EXPECT_STREQ(d["result"]["serverInfo"]["name"].GetString(), "fdyno");
  d = Ask(
      R"({"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"1999-01-01"}})");
  EXPECT_STREQ(d["id"].GetString(), "a");
  EXPECT_EQ(d["result"]["protocolVersion"].GetString(), kLatestProtocolVersion);
}

TEST_F(SessionTest, NotificationsGetNoAnswer) {
  EXPECT_FALSE(session_.Handle(R"({"jsonrpc":"2.0","method":"notifications/initialized"})"));
}

TEST_F(SessionTest, ProtocolErrorsAreJsonRpcErrors) {
  Document d = Ask("{not json");
  EXPECT_EQ(d["error"]["code"].GetInt(), -32700);
  EXPECT_TRUE(d["id"].IsNull());
  EXPECT_EQ(Ask(R"({"id":1,"method":"ping"})")["error"]["code"].GetInt(), -32600);
  EXPECT_EQ(Ask(R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])")["error"]["code"].GetInt(), -32600);
  EXPECT_EQ(Ask(R"({"jsonrpc":"2.0","id":1,"method":"resources/list"})")["error"]["code"].GetInt(),
            -32601);
  EXPECT_EQ(Call("no_such_tool", "{}")["error"]["code"].GetInt(), -32602);
  EXPECT_EQ(Call("query", "[1]")["error"]["code"].GetInt(), -32602);
  EXPECT_TRUE(Ask(R"({"jsonrpc":"2.0","id":2,"method":"ping"})")["result"].IsObject());
}

TEST_F(SessionTest, EveryToolIsListedWithAnObjectSchema) {
  Document d = Ask(R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})");
  const auto& tools = d["result"]["tools"];
  ASSERT_EQ(tools.Size(), Tools().size());
  for (const auto& tool : tools.GetArray()) {
    SCOPED_TRACE(tool["name"].GetString());
    EXPECT_GT(tool["description"].GetStringLength(), 10u);
    EXPECT_STREQ(tool["inputSchema"]["type"].GetString(), "object");
    EXPECT_TRUE(tool["inputSchema"]["properties"].IsObject());
  }
}

TEST_F(SessionTest, ACallAnswersTheOperationsResponse) {
  Document d = Call("list_tables", "{}");
  EXPECT_FALSE(d["result"]["isError"].GetBool());
  EXPECT_STREQ(d["result"]["content"][0]["type"].GetString(), "text");
  EXPECT_STREQ(d["result"]["content"][0]["text"].GetString(), R"({"TableNames":["music"]})");
}

TEST_F(SessionTest, ReadsAreBoundedAndTablesOnDemandUnlessTheArgumentsSayOtherwise) {
  Document q = Call("query", R"({"TableName":"music","KeyConditionExpression":"a = :a"})");
  Document body;
  body.Parse(q["result"]["content"][0]["text"].GetString());
  EXPECT_EQ(body["Limit"].GetInt(), kDefaultLimit);
  q = Call("query", R"({"TableName":"music","Limit":3})");
  body.Parse(q["result"]["content"][0]["text"].GetString());
  EXPECT_EQ(body["Limit"].GetInt(), 3);
  Document c = Call("create_table", R"({"TableName":"music"})");
  body.Parse(c["result"]["content"][0]["text"].GetString());
  EXPECT_STREQ(body["BillingMode"].GetString(), "PAY_PER_REQUEST");
  c = Call("create_table", R"({"TableName":"music","ProvisionedThroughput":{}})");
  body.Parse(c["result"]["content"][0]["text"].GetString());
  EXPECT_FALSE(body.HasMember("BillingMode"));
}

TEST_F(SessionTest, AnOperationsErrorIsAToolResultMarkedAsAnError) {
  Document d = Call("put_item", R"({"TableName":"music","Item":{}})");
  EXPECT_TRUE(d["result"]["isError"].GetBool());
  EXPECT_STREQ(d["result"]["content"][0]["text"].GetString(),
               "ValidationException: One or more parameter values were invalid");
  d = Call("scan", R"({"TableName":"music"})");
  EXPECT_TRUE(d["result"]["isError"].GetBool());
  EXPECT_NE(std::string(d["result"]["content"][0]["text"].GetString()).find("ask for less"),
            std::string::npos);
}

}  // namespace
}  // namespace fdyno::mcp
