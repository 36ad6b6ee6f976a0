// libFuzzer target for the PartiQL operations' requests (api/partiql_ops.cc): ExecuteStatement's
// body (DecodeRequest: Statement, Parameters decoded into attribute values, Limit, NextToken...),
// BatchExecuteStatement's (DecodeBatchRequest), one statement member (DecodeStatementMember, as
// BatchExecuteStatement and ExecuteTransaction decode each element), and the NextToken a client
// sends back (DecodeToken). The first byte picks the variant; the rest is the body, admitted as
// the router admits it (api_body.h), or for the token variant 8 bytes of issue time (ms, little
// endian) and the JSON of the key, sealed into a token for a fixed request. Invariants: no
// crash, no sanitizer report, every error a ValidationException or SerializationException; a
// decoded request has a statement and a Limit of 0 (none) or at least 1, a batch 1 to 25 of
// them; a token made for a decoded request (its parameters as the key) decodes to that key; a
// token is accepted only for its request and within an hour of its issue time.
//
// The decoders are internal to partiql_ops.cc (no header declares them but
// DecodeStatementMember), so this file includes partiql_ops.cc: its definitions are this
// program's own, and the linker never takes partiql_ops.cc's object out of libfdyno_api.a, since
// this file already defines every symbol it would bring.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "api_body.h"
#include "base/clock.h"
// The file under test, last: see the header comment.
#include "api/partiql_ops.cc"

namespace fdyno::api {
namespace {

using fuzz::Require;
using fuzz::RequireClientError;

constexpr int64_t kNowMs = 1'700'000'000'000;

// The request's parameters as a key (attributes p0, p1, ...): what a token carries.
Item ParametersAsKey(const StatementRequest& r) {
  Item key;
  for (size_t i = 0; i < r.parameters.size(); ++i) {
    key.emplace("p" + std::to_string(i), r.parameters[i]);
  }
  return key;
}

void FuzzExecuteStatement(const rapidjson::Document& doc) {
  Result<StatementRequest> r = DecodeRequest(doc);
  if (!r.ok()) return RequireClientError(r.error());
  Require(!r->statement.empty() && r->limit >= 0);
  const RequestContext ctx;
  ManualClock clock(kNowMs);
  const Item key = ParametersAsKey(*r);
  Result<Item> back = DecodeToken(ctx, clock, *r, EncodeToken(RequestHash(ctx, *r), kNowMs, key));
  Require(back.ok() && *back == key);
  StatementRequest other = *r;
  other.statement += " ";
  Result<Item> foreign =
      DecodeToken(ctx, clock, other, EncodeToken(RequestHash(ctx, *r), kNowMs, key));
  Require(!foreign.ok() && foreign.error().type == ErrorType::kValidation);
  if (r->next_token) {
    Result<Item> sent = DecodeToken(ctx, clock, *r, *r->next_token);
    if (!sent.ok()) Require(sent.error().type == ErrorType::kValidation);
  }
}

void FuzzBatch(const rapidjson::Document& doc) {
  Result<BatchRequest> r = DecodeBatchRequest(doc);
  if (!r.ok()) return RequireClientError(r.error());
  Require(!r->statements.empty() && r->statements.size() <= kMaxBatchStatements);
  for (const StatementRequest& s : r->statements) Require(!s.statement.empty());
}

void FuzzMember(const rapidjson::Document& doc, size_t index) {
  ConstraintErrors errors;
  StatementMember m;
  Status s = DecodeStatementMember(doc, "statements", index, errors, m);
  if (!s.ok()) return RequireClientError(s.error());
  if (!errors.empty()) return RequireClientError(errors.ToError());
  Require(!m.statement.empty());
  Require(m.has_parameters == !m.parameters.empty());
}

// A token for a fixed request, issued at `issued_ms`, whose key is `key_json` (any text).
void FuzzToken(int64_t issued_ms, std::string_view key_json) {
  const RequestContext ctx;
  ManualClock clock(kNowMs);
  StatementRequest r;
  r.statement = "SELECT * FROM \"t\" WHERE pk = ?";
  r.parameters.push_back(AttributeValue::S("a"));
  const std::string json = R"({"v":1,"h":")" + HashText(RequestHash(ctx, r)) + R"(","t":)" +
                           std::to_string(issued_ms) + R"(,"k":)" + std::string(key_json) + "}";
  Result<Item> key = DecodeToken(ctx, clock, r, model::Base64Encode(json));
  if (!key.ok()) return Require(key.error().type == ErrorType::kValidation);
  // Accepted: issued less than an hour ago (or later than now), in exact arithmetic.
  Require(static_cast<__int128>(kNowMs) - issued_ms < kTokenLifetimeMs);
}

void FuzzPartiql(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const uint8_t variant = data[0];
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (variant % 4 == 3) {
    if (rest.size() < sizeof(int64_t)) return;
    int64_t issued_ms = 0;
    std::memcpy(&issued_ms, rest.data(), sizeof issued_ms);
    return FuzzToken(issued_ms, rest.substr(sizeof issued_ms));
  }
  rapidjson::Document doc;
  if (!fuzz::ParseBody(rest, doc)) return;
  switch (variant % 4) {
    case 0:
      return FuzzExecuteStatement(doc);
    case 1:
      return FuzzBatch(doc);
    default:
      return FuzzMember(doc, variant / 4);
  }
}

}  // namespace
}  // namespace fdyno::api

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fdyno::api::FuzzPartiql(data, size);
  return 0;
}
