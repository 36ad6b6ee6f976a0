#include "api/policy_document.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <fstream>
#include <sstream>
#include <string>

namespace fdyno::api {
namespace {

std::string Json(const rapidjson::Value& v) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  v.Accept(w);
  return std::string(buf.GetString(), buf.GetSize());
}

std::vector<std::string> Strings(const rapidjson::Value& list) {
  std::vector<std::string> out;
  for (const auto& s : list.GetArray()) out.emplace_back(s.GetString(), s.GetStringLength());
  return out;
}

TEST(PolicyEvaluationTest, CaseFile) {
  std::ifstream in(std::string(FDYNO_API_TESTDATA) + "/policy_evaluation.json");
  std::stringstream text;
  text << in.rdbuf();
  rapidjson::Document d;
  d.Parse(text.str().c_str());
  ASSERT_FALSE(d.HasParseError());
  const std::string table = d["table"].GetString();
  int cases = 0;
  for (const auto& c : d["cases"].GetArray()) {
    SCOPED_TRACE(c["name"].GetString());
    Result<PolicyDocument> policy = ParsePolicy(Json(c["policy"]), PolicyTarget::kTable);
    ASSERT_TRUE(policy.ok()) << policy.error().message;
    const rapidjson::Value& r = c["request"];
    AccessRequest request;
    request.account = r["account"].GetString();
    request.principal = "arn:aws:iam::" + request.account + ":root";
    request.action = r["action"].GetString();
    request.resource = r.HasMember("resource") ? r["resource"].GetString() : table;
    request.keys["aws:PrincipalAccount"] = {request.account};
    if (r.HasMember("keys")) {
      for (const auto& k : r["keys"].GetObject())
        request.keys[k.name.GetString()] = Strings(k.value);
    }
    if (r.HasMember("unknown")) {
      for (const std::string& k : Strings(r["unknown"])) request.unknown_keys.insert(k);
    }
    const std::string want = c["want"].GetString();
    const Decision got = Evaluate(*policy, request);
    EXPECT_EQ(got == Decision::kAllow ? "Allow" : got == Decision::kDeny ? "Deny" : "None", want);
    ++cases;
  }
  EXPECT_GE(cases, 20);
}

TEST(PolicyDocumentTest, CanonicalFormIsAFixpoint) {
  const char* sent = R"({ "Statement" : { "Resource" : ["*"], "Action" : "dynamodb:GetItem",
    "Effect":"deny", "Principal": {"AWS": ["222222222222", "arn:aws:iam::222222222222:root"]},
    "Condition": {"StringEquals": {"aws:PrincipalAccount": ["222222222222"]}} } })";
  Result<PolicyDocument> doc = ParsePolicy(sent, PolicyTarget::kTable);
  ASSERT_TRUE(doc.ok()) << doc.error().message;
  EXPECT_FALSE(doc->version_given);
  EXPECT_EQ(doc->canonical,
            R"({"Version":"2008-10-17","Statement":[{"Effect":"Deny","Principal":{"AWS":)"
            R"("arn:aws:iam::222222222222:root"},"Action":"dynamodb:GetItem","Resource":"*",)"
            R"("Condition":{"StringEquals":{"aws:PrincipalAccount":"222222222222"}}}]})");
  Result<PolicyDocument> again = ParsePolicy(doc->canonical, PolicyTarget::kTable);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->canonical, doc->canonical);
  EXPECT_TRUE(again->version_given);
}

TEST(PolicyDocumentTest, StreamPoliciesNameStreamActionsOnly) {
  const char* table_action = R"({"Version":"2012-10-17","Statement":[{"Effect":"Allow",
    "Principal":{"AWS":"222222222222"},"Action":"dynamodb:GetItem","Resource":"*"}]})";
  Result<PolicyDocument> doc = ParsePolicy(table_action, PolicyTarget::kStream);
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.error().message,
            "One or more parameter values were invalid: Invalid policy document: The following "
            "action names are invalid: \"dynamodb:GetItem\"");
}

TEST(PolicyDocumentTest, WildcardMatch) {
  EXPECT_TRUE(WildcardMatch("dynamodb:*", "dynamodb:GetItem"));
  EXPECT_TRUE(WildcardMatch("a?c*", "abcdef"));
  EXPECT_FALSE(WildcardMatch("a?c", "abcd"));
  EXPECT_TRUE(WildcardMatch("DYNAMODB:getitem", "dynamodb:GetItem", true));
  EXPECT_FALSE(WildcardMatch("DYNAMODB:getitem", "dynamodb:GetItem"));
}

}  // namespace
}  // namespace fdyno::api
