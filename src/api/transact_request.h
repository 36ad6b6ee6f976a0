// Request decoding, static validation and fingerprints of TransactWriteItems and
// TransactGetItems, in DynamoDB's order of checks:
//   1. deserialization of every member (SerializationException, first found);
//   2. constraints from the API model, collected into one ValidationException;
//   3. exactly one action per TransactItems element; attribute values; expression attribute
//      maps; item sizes and the 4 MB payload limit;
//   4. expressions: parsed and resolved per action (request-level ValidationException).
// Checks that need the tables (key schemas, duplicates) run in the transaction
// (transact_ops.cc).
//
// The request schema is closed: a member this contract does not define, at any level of the
// request, is rejected rather than ignored, because the fingerprint of a tokened request must
// cover everything that can change its effect or its response.
//
// Pure; thread-safe.
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/capacity.h"
#include "base/result.h"
#include "expr/ast.h"
#include "model/attribute_value.h"

namespace fdyno::api {

inline constexpr size_t kMaxTransactActions = 100;
inline constexpr uint64_t kMaxTransactPayloadBytes = 4 * 1024 * 1024;
// TransactGetItems whose items add up to more than kMaxTransactPayloadBytes (the API
// reference's words for the condition).
inline constexpr std::string_view kTransactGetTooLargeMessage =
    "The aggregate size of the items in the transaction exceeded 4 MB";
inline constexpr size_t kMaxClientRequestTokenLength = 36;

enum class TransactActionKind { kConditionCheck, kPut, kDelete, kUpdate };
std::string_view TransactActionName(TransactActionKind kind);  // "ConditionCheck", "Put", ...

struct TransactWriteAction {
  TransactActionKind kind = TransactActionKind::kPut;
  std::string table_name;
  model::Item item;  // Put: the item; the others: the key
  std::optional<std::string> condition_expression;
  std::optional<std::string> update_expression;
  std::map<std::string, std::string> expression_attribute_names;
  bool has_expression_attribute_names = false;
  model::Map expression_attribute_values;
  bool has_expression_attribute_values = false;
  bool return_old_on_condition_failure = false;  // ReturnValuesOnConditionCheckFailure ALL_OLD
  // A false condition cancels with DuplicateItem rather than ConditionalCheckFailed (a PartiQL
  // INSERT on an existing key, in ExecuteTransaction).
  bool duplicate_on_false = false;

  // Resolved expressions (step 4).
  std::optional<expr::Condition> condition;
  std::optional<expr::Update> update;
};

struct TransactWriteRequest {
  std::vector<TransactWriteAction> actions;
  ReturnConsumedCapacity return_consumed_capacity = ReturnConsumedCapacity::kNone;
  bool return_item_collection_metrics = false;  // SIZE
  std::optional<std::string> client_request_token;
};

struct TransactGetAction {
  std::string table_name;
  model::Item key;
  std::optional<expr::Projection> projection;
};

struct TransactGetRequest {
  std::vector<TransactGetAction> actions;
  ReturnConsumedCapacity return_consumed_capacity = ReturnConsumedCapacity::kNone;
};

Result<TransactWriteRequest> DecodeTransactWriteItems(const rapidjson::Value& body);
Result<TransactGetRequest> DecodeTransactGetItems(const rapidjson::Value& body);

// The fingerprint of a TransactWriteItems request without its ClientRequestToken, computed
// with fingerprint algorithm `algorithm` (store/tokens.h). Algorithm 1
// (kFingerprintSha256CanonicalV1): SHA-256 of the model's canonical V1 serialization of the
// request contract v1 fields in a fixed order: ReturnConsumedCapacity and
// ReturnItemCollectionMetrics (absent and NONE are the same), then every action in order with
// its kind, table, item or key, expressions (text as sent), ExpressionAttributeNames,
// ExpressionAttributeValues and ReturnValuesOnConditionCheckFailure. An algorithm this build
// does not retain is an InternalServerError (the record fails closed).
// Frozen by a golden test: never change what algorithm 1 produces.
Result<std::string> TransactWriteFingerprint(const TransactWriteRequest& request,
                                             uint32_t algorithm);

}  // namespace fdyno::api
