#include "api/export_ops.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/json_util.h"
#include "api/request_model.h"
#include "api/restore_request.h"
#include "api/table_arn.h"
#include "api/table_render.h"
#include "store/backups.h"
#include "store/exports.h"
#include "store/pitr.h"

namespace fdyno::api {
namespace {

using rapidjson::Value;
using store::ExportJob;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

constexpr int kMaxListExports = 25;

void WriteCanonical(Writer& w, const Value& v) {
  if (v.IsObject()) {
    std::vector<const Value::Member*> members;
    for (const auto& m : v.GetObject()) members.push_back(&m);
    std::sort(members.begin(), members.end(), [](const auto* a, const auto* b) {
      return std::string_view(a->name.GetString(), a->name.GetStringLength()) <
             std::string_view(b->name.GetString(), b->name.GetStringLength());
    });
    w.StartObject();
    for (const Value::Member* m : members) {
      w.Key(m->name.GetString(), m->name.GetStringLength());
      WriteCanonical(w, m->value);
    }
    w.EndObject();
  } else if (v.IsArray()) {
    w.StartArray();
    for (const Value& e : v.GetArray()) WriteCanonical(w, e);
    w.EndArray();
  } else {
    v.Accept(w);
  }
}

bool IsS3BucketName(std::string_view b) {
  // ^[a-z0-9A-Z]+[\.\-\w]*[a-z0-9A-Z]+$
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  if (b.size() < 2 || !alnum(b.front()) || !alnum(b.back())) return false;
  return std::all_of(b.begin(), b.end(),
                     [&](char c) { return alnum(c) || c == '.' || c == '-' || c == '_'; });
}

bool IsAccountId(std::string_view o) {
  return o.size() == 12 &&
         std::all_of(o.begin(), o.end(), [](char c) { return c >= '0' && c <= '9'; });
}

Error ExportNotFound(std::string_view arn) {
  return Error::Make(ErrorType::kExportNotFound, "Export not found: " + std::string(arn));
}

// ExportTableToPointInTime's TableArn, with DynamoDB's answers: "Invalid TableArn: Invalid Table
// ARN" for what is not an ARN, "Invalid Request: Table ARN is invalid." for an ARN that names no
// table (an index, another service), TableNotFoundException naming the ARN for another region's,
// AccessDeniedException for another account's.
Result<ArnTarget> ParseExportTableArn(const RequestContext& ctx, const std::string& arn) {
  const std::optional<std::array<std::string, 6>> parts = SplitArn(arn);
  if (!parts || (*parts)[0] != "arn") {
    return Error::Validation("Invalid TableArn: Invalid Table ARN");
  }
  const std::string& resource = (*parts)[5];
  if ((*parts)[1] != "aws" || (*parts)[2] != "dynamodb" || !resource.starts_with("table/") ||
      resource.size() <= 6 || resource.find('/', 6) != std::string::npos) {
    return Error::Validation("Invalid Request: Table ARN is invalid.");
  }
  if ((*parts)[3] != ctx.region) {
    return Error::Make(ErrorType::kTableNotFound, "Table not found: " + arn);
  }
  if ((*parts)[4] != ctx.account_id) {
    return NotAuthorized(ctx, "ExportTableToPointInTime", arn,
                         NoPolicyAllows("ExportTableToPointInTime"));
  }
  return ArnTarget{arn, resource.substr(6)};
}

Error InvalidExportTime(std::string message) {
  return Error::Make(ErrorType::kInvalidExportTime, std::move(message));
}

// ---- rendering ----------------------------------------------------------------------------

constexpr std::string_view kFormats[] = {"DYNAMODB_JSON", "ION"};

void WriteExportDescription(Writer& w, const ExportJob& j) {
  const bool incremental = j.type == store::ExportType::kIncremental;
  w.StartObject();
  w.Key("ExportArn");
  Str(w, j.export_arn);
  w.Key("ExportStatus");
  Str(w, store::JobStatusText(j.status));
  w.Key("StartTime");
  WriteSeconds(w, j.start_ms);
  if (j.status != store::JobStatus::kInProgress) {
    w.Key("EndTime");
    WriteSeconds(w, j.end_ms);
  }
  if (j.status == store::JobStatus::kCompleted) {
    w.Key("ExportManifest");
    Str(w, j.manifest);
  }
  w.Key("TableArn");
  Str(w, j.table_arn);
  w.Key("TableId");
  Str(w, j.table_uuid);
  if (!incremental) {
    w.Key("ExportTime");
    WriteSeconds(w, j.export_time_ms);
  }
  if (!j.client_token.empty()) {
    w.Key("ClientToken");
    Str(w, j.client_token);
  }
  w.Key("S3Bucket");
  Str(w, j.s3.bucket);
  if (!j.s3.owner.empty()) {
    w.Key("S3BucketOwner");
    Str(w, j.s3.owner);
  }
  if (!j.s3.prefix.empty()) {
    w.Key("S3Prefix");
    Str(w, j.s3.prefix);
  }
  if (!j.sse_algorithm.empty()) {
    w.Key("S3SseAlgorithm");
    Str(w, j.sse_algorithm);
  }
  if (!j.sse_key.empty()) {
    w.Key("S3SseKmsKeyId");
    Str(w, j.sse_key);
  }
  if (j.status == store::JobStatus::kFailed) {
    w.Key("FailureCode");
    Str(w, j.failure_code);
    w.Key("FailureMessage");
    Str(w, j.failure_message);
  }
  w.Key("ExportFormat");
  Str(w, kFormats[static_cast<int>(j.format)]);
  if (j.status == store::JobStatus::kCompleted) {
    w.Key("BilledSizeBytes");
    w.Int64(j.bytes);
    w.Key("ItemCount");
    w.Int64(j.items);
  }
  w.Key("ExportType");
  w.String(incremental ? "INCREMENTAL_EXPORT" : "FULL_EXPORT");
  if (incremental) {
    w.Key("IncrementalExportSpecification");
    w.StartObject();
    w.Key("ExportFromTime");
    WriteSeconds(w, j.from_ms);
    w.Key("ExportToTime");
    WriteSeconds(w, j.export_time_ms);
    w.Key("ExportViewType");
    w.String(j.view == store::ExportView::kNewImage ? "NEW_IMAGE" : "NEW_AND_OLD_IMAGES");
    w.EndObject();
  }
  w.EndObject();
}

std::string DescriptionResponse(const ExportJob& j) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  w.Key("ExportDescription");
  WriteExportDescription(w, j);
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

// ==== ExportTableToPointInTime ===============================================================

struct ExportRequest {
  ExportJob job;                   // the request's members
  std::optional<int64_t> time_ms;  // ExportTime
  std::optional<int64_t> to_ms;    // incremental ExportToTime (absent: now)
};

struct ExportMembers {
  const Value* arn = nullptr;
  const Value* time = nullptr;
  const Value* token = nullptr;
  const Value* bucket = nullptr;
  const Value* owner = nullptr;
  const Value* prefix = nullptr;
  const Value* sse = nullptr;
  const Value* key = nullptr;
  const Value* format = nullptr;
  const Value* type = nullptr;
  const Value* spec = nullptr;
  const Value* from = nullptr;
  const Value* to = nullptr;
  const Value* view = nullptr;
};
using EM = ExportMembers;
constexpr request::Read<EM> kSpecReads[] = {
    {"ExportFromTime", &EM::from, JsonShape::kDouble, {}, request::TimestampNumber},
    {"ExportToTime", &EM::to, JsonShape::kDouble, {}, request::TimestampNumber},
    {"ExportViewType", &EM::view, JsonShape::kString},
};
constexpr request::Read<EM> kExportReads[] = {
    {"TableArn", &EM::arn, JsonShape::kString},
    {"ExportTime", &EM::time, JsonShape::kDouble, {}, request::TimestampNumber},
    {"ClientToken", &EM::token, JsonShape::kString},
    {"S3Bucket", &EM::bucket, JsonShape::kString},
    {"S3BucketOwner", &EM::owner, JsonShape::kString},
    {"S3Prefix", &EM::prefix, JsonShape::kString},
    {"S3SseAlgorithm", &EM::sse, JsonShape::kString},
    {"S3SseKmsKeyId", &EM::key, JsonShape::kString},
    {"ExportFormat", &EM::format, JsonShape::kString},
    {"ExportType", &EM::type, JsonShape::kString},
    request::Nested("IncrementalExportSpecification", &EM::spec, "IncrementalExportSpecification",
                    kSpecReads),
};
constexpr std::string_view kSseAlgorithms[] = {"AES256", "KMS"};
constexpr std::string_view kExportFormats[] = {"DYNAMODB_JSON", "ION"};
constexpr std::string_view kExportTypes[] = {"FULL_EXPORT", "INCREMENTAL_EXPORT"};
constexpr std::string_view kViewTypes[] = {"NEW_IMAGE", "NEW_AND_OLD_IMAGES"};
// Before: tableArn, clientToken, then the S3 location (CheckS3Constraints).
constexpr request::Check<EM> kExportHeadChecks[] = {
    request::NotNull(&EM::arn, "tableArn"),
    request::Custom(&EM::token, "clientToken", ClientTokenPattern),
};
constexpr request::Check<EM> kExportChecks[] = {
    request::Enum(&EM::sse, "s3SseAlgorithm", kSseAlgorithms),
    request::Bound(&EM::key, "s3SseKmsKeyId", request::Rule::kMinLength, 1),
    request::Bound(&EM::key, "s3SseKmsKeyId", request::Rule::kMaxLength, 2048),
    request::Enum(&EM::format, "exportFormat", kExportFormats),
    request::Enum(&EM::type, "exportType", kExportTypes),
    request::Enum(&EM::view, "incrementalExportSpecification.exportViewType", kViewTypes),
};

Result<ExportRequest> ParseExport(const RequestContext& ctx, const Value& body) {
  ExportRequest r;
  ExportMembers m;
  FDYNO_RETURN_IF_ERROR(request::ReadRows<EM>(body, kExportReads, m));
  const std::optional<std::string> arn = request::OwnedText(m.arn),
                                   token = request::OwnedText(m.token),
                                   bucket = request::OwnedText(m.bucket),
                                   owner = request::OwnedText(m.owner),
                                   prefix = request::OwnedText(m.prefix),
                                   sse = request::OwnedText(m.sse), key = request::OwnedText(m.key),
                                   format = request::OwnedText(m.format),
                                   type = request::OwnedText(m.type),
                                   view = request::OwnedText(m.view);
  r.time_ms = request::Millis(m.time);
  r.to_ms = request::Millis(m.to);
  const std::optional<int64_t> from_ms = request::Millis(m.from);
  const Value* spec = m.spec;
  ConstraintErrors e;
  request::CheckMembers<EM>(e, kExportHeadChecks, m);
  CheckS3Constraints(e, "s3Bucket", bucket, "s3BucketOwner", owner, "s3Prefix", prefix);
  request::CheckMembers<EM>(e, kExportChecks, m);
  FDYNO_RETURN_IF_ERROR(e.ToStatus());
  if (sse == "AES256" && key) {
    return Error::Validation(
        "Invalid Request: KMS Key Id is not supported for this encryption type");
  }
  FDYNO_ASSIGN_OR_RETURN(ArnTarget target, ParseExportTableArn(ctx, *arn));
  ExportJob& j = r.job;
  j.table_arn = target.arn;
  j.table_name = target.table;
  j.s3 = store::S3Location{*bucket, owner.value_or(""), prefix.value_or("")};
  j.sse_algorithm = sse.value_or("");
  j.sse_key = key.value_or("");
  j.client_token = token.value_or("");
  j.format = format == "ION" ? store::ExportFormat::kIon : store::ExportFormat::kDynamoDbJson;
  j.type =
      type == "INCREMENTAL_EXPORT" ? store::ExportType::kIncremental : store::ExportType::kFull;
  j.view = view == "NEW_IMAGE" ? store::ExportView::kNewImage : store::ExportView::kNewAndOldImages;
  if (j.type == store::ExportType::kIncremental) {
    if (r.time_ms) {
      return Error::Validation("ExportTime should not be specified for an incremental export");
    }
    if (!from_ms) {
      return Error::Validation(
          "Invalid Request: ExportFromTime must be provided in IncrementalExportSpecification");
    }
    j.from_ms = *from_ms;
  } else if (spec != nullptr) {
    return Error::Validation(
        "IncrementalExportSpecification should not be specified for a full export");
  }
  j.fingerprint = RequestFingerprint(body);
  return r;
}

// The export times of `r` against the table's recovery window now, as DynamoDB checks them.
Status CheckExportTimes(ExportRequest& r, const store::RestorableWindow& window, int64_t now_ms) {
  ExportJob& j = r.job;
  if (j.type == store::ExportType::kFull) {
    j.export_time_ms = r.time_ms.value_or(now_ms);
    if (j.export_time_ms > now_ms) return InvalidExportTime("ExportTime cannot be in the future");
    // DynamoDB's words for a time before the recovery window (recorded from its answer).
    if (j.export_time_ms < window.earliest_ms) return InvalidExportTime("Export Time is invalid");
    return Status::Ok();
  }
  j.export_time_ms = r.to_ms.value_or(now_ms);
  if (j.export_time_ms > now_ms) return InvalidExportTime("ExportToTime cannot be in the future");
  if (j.from_ms < window.earliest_ms) {
    return InvalidExportTime(
        "ExportFromTime must be within the point in time recovery window of the table");
  }
  constexpr int64_t kMinWindowMs = 15 * 60 * 1000, kMaxWindowMs = 24 * 3600 * 1000;
  // Both times are the client's: ordered first, so that the difference cannot overflow (both
  // then lie between the window's start and now).
  if (j.export_time_ms < j.from_ms || j.export_time_ms - j.from_ms < kMinWindowMs) {
    return InvalidExportTime("The incremental export period must be at least 15 minutes");
  }
  if (j.export_time_ms - j.from_ms > kMaxWindowMs) {
    return InvalidExportTime("The incremental export period must be at most 24 hours");
  }
  return Status::Ok();
}

Result<std::string> ExportTableToPointInTime(Services& s, const RequestContext& ctx,
                                             const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(ExportRequest r, ParseExport(ctx, body));
  if (s.export_root.empty()) return Error::Validation("Exports are disabled on this server");
  if (Result<std::filesystem::path> dir =
          store::S3Path(s.export_root, r.job.s3.bucket, r.job.s3.prefix);
      !dir.ok()) {
    return std::move(dir).error();
  }
  const int64_t now_ms = s.clock->WallMillis();
  const std::string id = store::NewBackupId(now_ms);  // chosen once: retries find it
  FDYNO_ASSIGN_OR_RETURN(
      ExportJob job,
      kv::Run(*s.db, JobRunOptions(ctx, s),
              [&](kv::Transaction& tx, const kv::Attempt&) -> Result<ExportJob> {
                FDYNO_ASSIGN_OR_RETURN(std::optional<ExportJob> mine, store::ReadExport(tx, id));
                if (mine) return std::move(*mine);  // an earlier attempt committed (1021)
                FDYNO_ASSIGN_OR_RETURN(
                    std::optional<ExportJob> earlier,
                    JobOfToken(tx, store::ExportTokenKey(ctx.account_id, r.job.client_token), r.job,
                               now_ms, store::ReadExport, [](const ExportJob& e) {
                                 return Error::Make(ErrorType::kExportConflict,
                                                    "Export with the same ClientToken but "
                                                    "different parameters already exists: " +
                                                        e.export_arn);
                               }));
                if (earlier) return std::move(*earlier);
                FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const store::TableInfo> t,
                                       s.catalog->Find(tx, CallerScope(ctx), r.job.table_name));
                if (!t) {
                  return Error::Make(ErrorType::kTableNotFound,
                                     "Table not found: " + r.job.table_arn);
                }
                if (!t->pitr.enabled) {
                  return Error::Make(
                      ErrorType::kPointInTimeRecoveryUnavailable,
                      "Point in time recovery is not enabled for table '" + t->name + "'");
                }
                FDYNO_ASSIGN_OR_RETURN(int64_t trimmed,
                                       store::ReadHistoryTrimPoint(tx, t->id, t->pitr.epoch));
                ExportRequest planned = r;
                FDYNO_RETURN_IF_ERROR(
                    CheckExportTimes(planned, store::WindowOf(t->pitr, trimmed, now_ms), now_ms));
                ExportJob j = std::move(planned.job);
                j.id = id;
                j.account = t->account;
                j.export_arn = JobArn(ctx, t->name, "export", id);
                j.table_id = t->id;
                j.table_uuid = t->uuid;
                j.epoch = t->pitr.epoch;
                j.start_ms = now_ms;
                store::WriteExport(tx, j);
                if (!j.client_token.empty()) {
                  store::WriteTokenJob(tx, store::ExportTokenKey(j.account, j.client_token), id);
                }
                return j;
              }));
  if (job.id == id) {
    spdlog::info("export {} of table {} requested", id, job.table_name);
    if (s.wake_backups) s.wake_backups();
  }
  return DescriptionResponse(job);
}

// ==== DescribeExport, ListExports ============================================================

Result<std::string> DescribeExport(Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(std::string arn, ReadJobArn(body, "ExportArn", "exportArn"));
  std::optional<std::string> id = JobIdOfArn(ctx, arn, "export");
  if (!id) return ExportNotFound(arn);
  FDYNO_ASSIGN_OR_RETURN(
      ExportJob job,
      kv::Run(*s.db, JobRunOptions(ctx, s, /*read_only=*/true),
              [&](kv::Transaction& tx, const kv::Attempt&) -> Result<ExportJob> {
                FDYNO_ASSIGN_OR_RETURN(std::optional<ExportJob> j, store::ReadExport(tx, *id));
                if (!j || store::ScopeOf(*j) != CallerScope(ctx) || j->export_arn != arn) {
                  return ExportNotFound(arn);
                }
                return std::move(*j);
              }));
  return DescriptionResponse(job);
}

Result<std::string> ListExports(Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> arn, GetOwnedString(body, "TableArn"));
  FDYNO_ASSIGN_OR_RETURN(std::optional<int64_t> max, GetInteger(body, "MaxResults"));
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> token, GetOwnedString(body, "NextToken"));
  ConstraintErrors e;
  if (max) {
    e.MinValue("maxResults", *max, 1);
    e.MaxValue("maxResults", *max, kMaxListExports);
  }
  FDYNO_RETURN_IF_ERROR(e.ToStatus());
  if (token && !store::IsBackupId(*token)) {
    return Error::Validation("Invalid Request: Provided nextToken is invalid: " + *token);
  }
  const int limit = static_cast<int>(max.value_or(kMaxListExports));
  using Page = std::pair<std::vector<ExportJob>, bool>;
  FDYNO_ASSIGN_OR_RETURN(Page page,
                         kv::Run(*s.db, JobRunOptions(ctx, s, /*read_only=*/true),
                                 [&](kv::Transaction& tx, const kv::Attempt&) -> Result<Page> {
                                   return ListJobPage<ExportJob>(tx, store::ListExportJobs,
                                                                 CallerScope(ctx),
                                                                 token.value_or(""), limit, arn);
                                 }));
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  w.Key("ExportSummaries");
  w.StartArray();
  for (const ExportJob& j : page.first) {
    w.StartObject();
    w.Key("ExportArn");
    Str(w, j.export_arn);
    w.Key("ExportStatus");
    Str(w, store::JobStatusText(j.status));
    w.Key("ExportType");
    w.String(j.type == store::ExportType::kIncremental ? "INCREMENTAL_EXPORT" : "FULL_EXPORT");
    w.EndObject();
  }
  w.EndArray();
  if (page.second && !page.first.empty()) {
    w.Key("NextToken");
    Str(w, page.first.back().id);
  }
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace

// ---- what exports and imports share ----------------------------------------------------------

std::string RequestFingerprint(const Value& body) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  std::vector<const Value::Member*> members;
  for (const auto& m : body.GetObject()) {
    if (std::string_view(m.name.GetString(), m.name.GetStringLength()) != "ClientToken") {
      members.push_back(&m);
    }
  }
  std::sort(members.begin(), members.end(), [](const auto* a, const auto* b) {
    return std::string_view(a->name.GetString(), a->name.GetStringLength()) <
           std::string_view(b->name.GetString(), b->name.GetStringLength());
  });
  for (const Value::Member* m : members) {
    w.Key(m->name.GetString(), m->name.GetStringLength());
    WriteCanonical(w, m->value);
  }
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

std::string JobArn(const RequestContext& ctx, std::string_view table, std::string_view kind,
                   std::string_view id) {
  return TableArn(ctx, table) + "/" + std::string(kind) + "/" + std::string(id);
}

std::optional<std::string> JobIdOfArn(const RequestContext& ctx, std::string_view arn,
                                      std::string_view kind) {
  const std::string prefix = "arn:aws:dynamodb:" + ctx.region + ":" + ctx.account_id + ":table/";
  if (!arn.starts_with(prefix)) return std::nullopt;
  const std::string marker = "/" + std::string(kind) + "/";
  const size_t at = arn.rfind(marker);
  if (at == std::string_view::npos || at <= prefix.size()) return std::nullopt;
  std::string id(arn.substr(at + marker.size()));
  if (!store::IsBackupId(id)) return std::nullopt;
  return id;
}

void ClientTokenPattern(ConstraintErrors& e, std::string_view path, const Value* token) {
  if (token == nullptr) return;
  const std::string_view t = AsStringView(*token);
  e.Pattern(path, t, t.find('$') == std::string_view::npos, "^[^\\$]+$");
}

void CheckS3Constraints(ConstraintErrors& e, std::string_view bucket_path,
                        const std::optional<std::string>& bucket, std::string_view owner_path,
                        const std::optional<std::string>& owner, std::string_view prefix_path,
                        const std::optional<std::string>& prefix) {
  e.NotNull(bucket_path, bucket.has_value());
  if (bucket) {
    e.MaxLength(bucket_path, *bucket, 255);
    e.Pattern(bucket_path, *bucket, IsS3BucketName(*bucket),
              "^[a-z0-9A-Z]+[\\.\\-\\w]*[a-z0-9A-Z]+$");
  }
  if (owner) e.Pattern(owner_path, *owner, IsAccountId(*owner), "[0-9]{12}");
  if (prefix) e.MaxLength(prefix_path, *prefix, 1024);
}

kv::RunOptions JobRunOptions(const RequestContext& ctx, const Services& s, bool read_only) {
  kv::RunOptions options;
  if (ctx.deadline != std::chrono::steady_clock::time_point{}) options.deadline = ctx.deadline;
  options.clock = s.clock;
  options.read_only = read_only;
  return options;
}

Result<std::string> ReadJobArn(const Value& body, const char* member, std::string_view path) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> arn, GetOwnedString(body, member));
  ConstraintErrors e;
  e.NotNull(path, arn.has_value());
  if (arn) {
    e.MinLength(path, *arn, 37);
    e.MaxLength(path, *arn, 1024);
  }
  FDYNO_RETURN_IF_ERROR(e.ToStatus());
  return std::move(*arn);
}

void RegisterExportOperations(OperationRegistry& registry, const Services& services) {
  auto s = std::make_shared<Services>(services);
  registry.Register("ExportTableToPointInTime", Bind(s, &ExportTableToPointInTime));
  registry.Register("DescribeExport", Bind(s, &DescribeExport));
  registry.Register("ListExports", Bind(s, &ListExports));
}

}  // namespace fdyno::api
