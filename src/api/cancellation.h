// TransactionCanceledException, as TransactWriteItems, TransactGetItems and ExecuteTransaction
// answer it: one CancellationReason per action, in request order, and the message listing their
// codes ("Transaction cancelled, please refer cancellation reasons for specific reasons [None,
// ConditionalCheckFailed]").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "model/attribute_value.h"

namespace fdyno::api {

struct CancellationReason {
  std::string code = "None";        // DynamoDB's code: None, ConditionalCheckFailed, ...
  std::string message;              // empty: no Message member
  std::optional<model::Item> item;  // ReturnValuesOnConditionCheckFailure ALL_OLD
};

// The exception, with Error::cancellation_reasons_json set.
Error TransactionCanceled(const std::vector<CancellationReason>& reasons);

}  // namespace fdyno::api
