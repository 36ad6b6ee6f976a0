// libFuzzer target for the requests of exports (api/export_ops.cc, api/export_ops.h):
// ExportTableToPointInTime's request (ParseExport) and its export times against a recovery
// window (CheckExportTimes), the request fingerprint a ClientToken is matched by
// (RequestFingerprint), export ARNs (JobIdOfArn) and the ExportArn member (ReadJobArn). The
// first byte picks the variant; the rest is the body, admitted as the router admits it
// (api_body.h), or the ARN. Invariants: no crash, no sanitizer report; every error is a client
// error (HTTP 4xx); an export accepted for the window has an export time no later than now and,
// incremental, a period of 15 minutes to 24 hours (in exact arithmetic); the fingerprint is the
// same for the request without its ClientToken; an export id an ARN names is the id of the ARN
// built for it.
//
// The functions are internal to export_ops.cc (no header declares ParseExport and
// CheckExportTimes), so this file includes export_ops.cc: its definitions are this program's
// own, and the linker never takes export_ops.cc's object out of libfdyno_api.a, since this file
// already defines every symbol it would bring.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "api_body.h"
// The file under test, last: see the header comment.
#include "api/export_ops.cc"

namespace fdyno::api {
namespace {

using fuzz::Require;

constexpr int64_t kNowMs = 1'700'000'000'000;
constexpr int64_t kDayMs = 24 * 3600 * 1000;

void RequireHttp4xx(const Error& e) { Require(HttpStatus(e.type) / 100 == 4); }

void FuzzExport(rapidjson::Document& doc) {
  const RequestContext ctx;
  Result<ExportRequest> r = ParseExport(ctx, doc);
  if (!r.ok()) return RequireHttp4xx(r.error());
  const store::RestorableWindow window{kNowMs - 35 * kDayMs, kNowMs};
  ExportRequest planned = *r;
  Status times = CheckExportTimes(planned, window, kNowMs);
  if (!times.ok()) return RequireHttp4xx(times.error());
  const ExportJob& j = planned.job;
  Require(j.export_time_ms <= kNowMs);
  if (j.type == store::ExportType::kIncremental) {
    const __int128 period = static_cast<__int128>(j.export_time_ms) - j.from_ms;
    Require(period >= 15 * 60 * 1000 && period <= kDayMs);
  }
  const std::string fingerprint = RequestFingerprint(doc);
  Require(fingerprint == r->job.fingerprint);
  if (fuzz::EraseMembers(doc, "ClientToken")) Require(RequestFingerprint(doc) == fingerprint);
}

void FuzzExportArn(std::string_view arn) {
  const RequestContext ctx;
  std::optional<std::string> id = JobIdOfArn(ctx, arn, "export");
  if (!id) return;
  Require(JobIdOfArn(ctx, JobArn(ctx, "tbl", "export", *id), "export") == id);
}

void FuzzExportArnMember(const rapidjson::Value& body) {
  Result<std::string> arn = ReadJobArn(body, "ExportArn", "exportArn");
  if (!arn.ok()) return RequireHttp4xx(arn.error());
  FuzzExportArn(*arn);
}

void FuzzExports(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 3 == 2) return FuzzExportArn(rest);
  rapidjson::Document doc;
  if (!fuzz::ParseBody(rest, doc)) return;
  if (data[0] % 3 == 0) return FuzzExport(doc);
  FuzzExportArnMember(doc);
}

}  // namespace
}  // namespace fdyno::api

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fdyno::api::FuzzExports(data, size);
  return 0;
}
