// libFuzzer target for request decoding: the body of an item request as the router hands it to
// the handlers (a JSON document), decoded by api/item_request.h for each item operation. The
// first byte picks the operation, the rest is the JSON text. Invariants: no crash, no sanitizer
// report; a body that is not JSON is the router's business, and every decoding error is a
// client error (ValidationException or SerializationException), never an internal one.
#include <rapidjson/document.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "api/item_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static constexpr fdyno::api::ItemOp kOps[] = {
      fdyno::api::ItemOp::kGetItem, fdyno::api::ItemOp::kPutItem, fdyno::api::ItemOp::kUpdateItem,
      fdyno::api::ItemOp::kDeleteItem};
  const fdyno::api::ItemOp op = kOps[data[0] % 4];
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  rapidjson::Document doc;
  doc.Parse(text.c_str(), text.size());
  if (doc.HasParseError()) return 0;
  fdyno::Result<fdyno::api::ItemRequest> r = fdyno::api::DecodeItemRequest(op, doc);
  if (!r.ok() && r.error().type != fdyno::ErrorType::kValidation &&
      r.error().type != fdyno::ErrorType::kSerialization) {
    std::abort();
  }
  return 0;
}
