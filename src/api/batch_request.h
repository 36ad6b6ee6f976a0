// BatchGetItem's and BatchWriteItem's requests, decoded and checked as DynamoDB does, in its
// order, before anything is read or written (batch_ops.cc runs them). Pure: no I/O.
#pragma once

#include <rapidjson/document.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "api/capacity.h"
#include "base/result.h"
#include "expr/ast.h"
#include "model/attribute_value.h"

namespace fdyno::api {

// One table of a BatchGetItem.
struct BatchGetTable {
  std::string name;
  std::vector<model::Item> keys;          // distinct
  const rapidjson::Value* raw = nullptr;  // its KeysAndAttributes (for UnprocessedKeys)
  bool consistent_read = false;
  std::optional<expr::Projection> projection;
};

struct BatchGetRequest {
  std::vector<BatchGetTable> tables;  // in the request's order; 1 to 100 keys in all
  ReturnConsumedCapacity mode = ReturnConsumedCapacity::kNone;
};

Result<BatchGetRequest> DecodeBatchGet(const rapidjson::Value& body);

// One write of a BatchWriteItem.
struct BatchWrite {
  size_t table = 0;  // index into BatchWriteRequest::tables
  bool is_put = true;
  model::Item item;                       // put: the item (within the size limit); delete: the key
  const rapidjson::Value* raw = nullptr;  // its WriteRequest (for UnprocessedItems)
};

struct BatchWriteRequest {
  std::vector<std::string> tables;  // in the request's order
  std::vector<BatchWrite> writes;   // 1 to 25
  ReturnConsumedCapacity mode = ReturnConsumedCapacity::kNone;
  std::optional<std::string> item_collection_metrics;  // SIZE or NONE when given
};

Result<BatchWriteRequest> DecodeBatchWrite(const rapidjson::Value& body);

}  // namespace fdyno::api
