// Fault rule file fuzzer (http/faults.h): arbitrary text parses or fails with a
// ValidationException (never a crash); rules that parse are set on an injector, which then
// decides for requests shaped from the same input without failing.
#include <rapidjson/document.h>

#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "http/faults.h"

namespace {
void Check(bool ok) {
  if (!ok) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto rules = fdyno::http::ParseFaultRules(input);
  if (!rules.ok()) {
    Check(rules.error().type == fdyno::ErrorType::kValidation);
    return 0;
  }
  static fdyno::Metrics metrics;
  fdyno::http::FaultInjector faults(&metrics);
  Check(faults.Replace(input).ok());
  rapidjson::Document body;
  body.Parse(R"({"TableName": "Orders", "Key": {"id": {"S": "a"}}, "ClientRequestToken": "t",
                 "TransactItems": [{"Put": {"TableName": "Orders", "Item": {"id": {"S": "a"}}}}],
                 "Statement": "SELECT * FROM \"Orders\""})");
  for (std::string_view op : {"PutItem", "GetItem", "TransactWriteItems", "ExecuteStatement"}) {
    (void)faults.Decide({op, "000000000001", "fuzz", &body});
  }
  (void)faults.Describe();
  return 0;
}
