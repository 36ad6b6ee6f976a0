// libFuzzer target for the requests of point-in-time recovery (api/pitr_ops.cc):
// RestoreTableToPointInTime's (ParsePitrRestore: the target and its overrides, the source by name
// or ARN, the restore time or the latest) and UpdateContinuousBackups' (ParseUpdate). The first
// byte picks the variant; the rest is the body, admitted as the router admits it (api_body.h).
// Invariants: no crash, no sanitizer report; every error is a client error (HTTP 4xx); an
// accepted restore names a source and a target table (3 to 255 characters) and has exactly one
// of a restore time and the latest restorable time; an accepted update names a table and has a
// recovery period of 1 to 35 days when it gives one.
//
// The parsers are internal to pitr_ops.cc (no header declares them), so this file includes
// pitr_ops.cc: its definitions are this program's own, and the linker never takes pitr_ops.cc's
// object out of libfdyno_api.a, since this file already defines every symbol it would bring.
#include <cstddef>
#include <cstdint>
#include <string>

#include "api_body.h"
// The file under test, last: see the header comment.
#include "api/pitr_ops.cc"

namespace fdyno::api {
namespace {

using fuzz::Require;

// A 4xx: what a request that does not parse may answer (not found ARNs, access denied ones).
void RequireClientStatus(const Error& e) { Require(HttpStatus(e.type) / 100 == 4); }

void FuzzPitr(const uint8_t* data, size_t size) {
  if (size == 0) return;
  rapidjson::Document doc;
  if (!fuzz::ParseBody({reinterpret_cast<const char*>(data) + 1, size - 1}, doc)) return;
  const RequestContext ctx;
  if (data[0] % 2 == 0) {
    Result<PitrRestoreRequest> r = ParsePitrRestore(ctx, doc);
    if (!r.ok()) return RequireClientStatus(r.error());
    Require(!r->source.empty());
    Require(r->restore.target && r->restore.target->size() >= 3 &&
            r->restore.target->size() <= 255);
    Require(r->latest != r->time_ms.has_value());
    return;
  }
  Result<UpdateRequest> r = ParseUpdate(ctx, doc);
  if (!r.ok()) return RequireClientStatus(r.error());
  Require(!r->table.empty());
  Require(!r->days || (*r->days >= 1 && *r->days <= kMaxRecoveryDays));
}

}  // namespace
}  // namespace fdyno::api

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fdyno::api::FuzzPitr(data, size);
  return 0;
}
