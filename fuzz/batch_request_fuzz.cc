// libFuzzer target for BatchGetItem and BatchWriteItem request decoding: DecodeBatchGet and
// DecodeBatchWrite (api/batch_request.h), which check a request as DynamoDB does before anything
// is read or written. The first byte picks the decoder, the rest is the body, admitted as the
// router admits it (api_body.h). Invariants: no crash, no sanitizer report, every decoding error
// a ValidationException or SerializationException; a decoded BatchGetItem has 1 to 100 keys in
// all, each table named (3 to 255 characters) with distinct keys and its KeysAndAttributes; a
// decoded BatchWriteItem has 1 to 25 writes, each of a table of the request with its
// WriteRequest, a put's item within DynamoDB's item size limit, and ReturnItemCollectionMetrics
// SIZE or NONE when given.
#include <cstddef>
#include <cstdint>
#include <string>

#include "api/batch_request.h"
#include "api_body.h"
#include "model/item_size.h"

namespace fdyno::api {
namespace {

using fuzz::Require;
using fuzz::RequireClientError;

void FuzzGet(const rapidjson::Document& doc) {
  Result<BatchGetRequest> r = DecodeBatchGet(doc);
  if (!r.ok()) return RequireClientError(r.error());
  size_t keys = 0;
  for (const BatchGetTable& t : r->tables) {
    Require(t.name.size() >= 3 && t.name.size() <= 255);
    Require(t.raw != nullptr);
    for (size_t i = 0; i < t.keys.size(); ++i) {
      for (size_t j = i + 1; j < t.keys.size(); ++j) Require(!(t.keys[i] == t.keys[j]));
    }
    keys += t.keys.size();
  }
  Require(keys >= 1 && keys <= 100);
}

void FuzzWrite(const rapidjson::Document& doc) {
  Result<BatchWriteRequest> r = DecodeBatchWrite(doc);
  if (!r.ok()) return RequireClientError(r.error());
  Require(!r->writes.empty() && r->writes.size() <= 25);
  for (const BatchWrite& w : r->writes) {
    Require(w.table < r->tables.size());
    Require(w.raw != nullptr);
    if (w.is_put) Require(model::CheckItemSize(w.item).ok());
  }
  if (r->item_collection_metrics) {
    Require(*r->item_collection_metrics == "SIZE" || *r->item_collection_metrics == "NONE");
  }
}

void FuzzBatch(const uint8_t* data, size_t size) {
  if (size == 0) return;
  rapidjson::Document doc;
  if (!fuzz::ParseBody({reinterpret_cast<const char*>(data) + 1, size - 1}, doc)) return;
  if (data[0] % 2 == 0) return FuzzGet(doc);
  return FuzzWrite(doc);
}

}  // namespace
}  // namespace fdyno::api

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fdyno::api::FuzzBatch(data, size);
  return 0;
}
