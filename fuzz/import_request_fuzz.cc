// libFuzzer target for ImportTable's request (api/import_ops.cc): ParseImport, with the plan of
// the table it creates (PlanImportedTable). The input is the body, admitted as the router admits
// it (api_body.h). Invariants: no crash, no sanitizer report; every error is a client error
// (ValidationException or SerializationException); an accepted request names a bucket, plans a
// CREATING table with a name of 3 to 255 characters, has CSV options only for the CSV format,
// and its fingerprint (what a ClientToken is matched by) is the same without its ClientToken.
//
// ParseImport is internal to import_ops.cc (no header declares it), so this file includes
// import_ops.cc: its definitions are this program's own, and the linker never takes
// import_ops.cc's object out of libfdyno_api.a, since this file already defines every symbol it
// would bring.
#include <cstddef>
#include <cstdint>
#include <string>

#include "api_body.h"
// The file under test, last: see the header comment.
#include "api/import_ops.cc"

namespace fdyno::api {
namespace {

using fuzz::Require;
using fuzz::RequireClientError;

constexpr int64_t kNowMs = 1'780'000'000'000;

void FuzzImport(const uint8_t* data, size_t size) {
  rapidjson::Document doc;
  if (!fuzz::ParseBody({reinterpret_cast<const char*>(data), size}, doc)) return;
  Result<ImportRequest> r = ParseImport(doc, kNowMs);
  if (!r.ok()) return RequireClientError(r.error());
  Require(!r->job.s3.bucket.empty());
  Require(r->plan.name.size() >= 3 && r->plan.name.size() <= 255);
  Require(r->plan.status == store::TableStatus::kCreating);
  Require(!r->job.has_csv_options || r->job.format == store::ImportFormat::kCsv);
  const std::string fingerprint = r->job.fingerprint;
  if (!fuzz::EraseMembers(doc, "ClientToken")) return;
  Result<ImportRequest> again = ParseImport(doc, kNowMs);
  Require(again.ok() && again->job.fingerprint == fingerprint);
}

}  // namespace
}  // namespace fdyno::api

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fdyno::api::FuzzImport(data, size);
  return 0;
}
