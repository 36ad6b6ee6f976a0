// Stored item codec fuzzer: arbitrary bytes never crash the decoder; bytes that decode are the
// one canonical encoding of what they decode to (so corruption is never silently accepted as a
// different encoding of some value), and the decoded value is a valid DynamoDB value. The JSON
// transcoder (stored_json.h) accepts exactly the same bytes and writes the same JSON and size.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "model/item_codec.h"
#include "model/item_size.h"
#include "model/json.h"
#include "model/stored_json.h"

using namespace fdyno::model;  // NOLINT: fuzzer brevity
using fdyno::ErrorType;

namespace {
void Check(bool ok) {
  if (!ok) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto item = DecodeStoredItem(input);
  rapidjson::StringBuffer buffer;
  auto written = WriteStoredItemJson(input, buffer);
  Check(written.ok() == item.ok());
  if (item.ok()) {
    Check(*written == ItemSize(*item));
    Check(std::string_view(buffer.GetString(), buffer.GetSize()) == ItemToJson(*item));
  } else {
    Check(written.error().message == item.error().message);
  }
  if (item.ok()) {
    Check(EncodeStoredItem(*item) == input);
    // What decodes also passes DynamoDB's validation when rendered as JSON, except two rules
    // the stored format does not enforce: the nesting limit (it bounds nesting at 64) and the
    // empty top-level attribute name (refused since 2026-12; items stored before stay readable).
    auto again = ItemFromJson(ItemToJson(*item));
    Check(again.ok() || item->contains("") ||
          again.error().message.rfind("Nesting Levels", 0) == 0);
  } else {
    Check(item.error().type == ErrorType::kInternalServerError);
  }
  auto value = DecodeStoredValue(input);
  if (value.ok()) Check(EncodeStoredValue(*value) == input);
  return 0;
}
