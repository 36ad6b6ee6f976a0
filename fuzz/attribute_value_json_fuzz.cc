// DynamoDB JSON AttributeValue fuzzer: arbitrary text decodes or fails with a
// SerializationException or ValidationException (never a crash); a decoded value survives
// JSON re-encoding, the stored item codec and canonicalization unchanged, and its size is
// computable.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "model/canonical.h"
#include "model/item_codec.h"
#include "model/item_size.h"
#include "model/json.h"

using namespace fdyno::model;  // NOLINT: fuzzer brevity
using fdyno::ErrorType;

namespace {
void Check(bool ok) {
  if (!ok) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto v = AttributeValueFromJson(input);
  if (!v.ok()) {
    Check(v.error().type == ErrorType::kSerialization || v.error().type == ErrorType::kValidation);
    return 0;
  }
  const std::string json = AttributeValueToJson(*v);
  auto again = AttributeValueFromJson(json);
  Check(again.ok());
  Check(AttributeValueToJson(*again) == json);
  Check(*again == *v);
  auto stored = DecodeStoredValue(EncodeStoredValue(*v));
  Check(stored.ok() && AttributeValueToJson(*stored) == json);
  Check(CanonicalV1(*stored) == CanonicalV1(*v));
  (void)ValueSize(*v);
  return 0;
}
