#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/export_ops.h"
#include "api/json_util.h"
#include "api/request_model.h"
#include "api/table_arn.h"
#include "api/table_ops.h"
#include "api/table_render.h"
#include "store/backups.h"
#include "store/exports.h"

namespace fdyno::api {
namespace {

using rapidjson::Value;
using store::ImportJob;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

constexpr int kMaxListImports = 25;
constexpr std::string_view kFormats[] = {"DYNAMODB_JSON", "ION", "CSV"};
constexpr std::string_view kCompressions[] = {"NONE", "GZIP", "ZSTD"};

Error ImportNotFound(std::string_view arn) {
  return Error::Make(ErrorType::kImportNotFound, "Import not found: " + std::string(arn));
}

// ---- rendering ----------------------------------------------------------------------------

void WriteBucketSource(Writer& w, const store::S3Location& s3) {
  w.StartObject();
  if (!s3.owner.empty()) {
    w.Key("S3BucketOwner");
    Str(w, s3.owner);
  }
  w.Key("S3Bucket");
  Str(w, s3.bucket);
  if (!s3.prefix.empty()) {
    w.Key("S3KeyPrefix");
    Str(w, s3.prefix);
  }
  w.EndObject();
}

// The members ImportTableDescription and ImportSummary share.
void WriteSummaryMembers(Writer& w, const ImportJob& j) {
  w.Key("ImportArn");
  Str(w, j.import_arn);
  w.Key("ImportStatus");
  Str(w, store::JobStatusText(j.status));
  w.Key("TableArn");
  Str(w, j.table_arn);
  w.Key("S3BucketSource");
  WriteBucketSource(w, j.s3);
  w.Key("InputFormat");
  Str(w, kFormats[static_cast<int>(j.format)]);
  w.Key("StartTime");
  WriteSeconds(w, j.start_ms);
  if (j.status != store::JobStatus::kInProgress) {
    w.Key("EndTime");
    WriteSeconds(w, j.end_ms);
  }
}

void WriteImportDescription(Writer& w, const ImportJob& j) {
  w.StartObject();
  WriteSummaryMembers(w, j);
  w.Key("TableId");
  Str(w, j.table_uuid);
  if (!j.client_token.empty()) {
    w.Key("ClientToken");
    Str(w, j.client_token);
  }
  w.Key("ErrorCount");
  w.Int64(j.errors);
  if (j.has_csv_options) {
    w.Key("InputFormatOptions");
    w.StartObject();
    w.Key("Csv");
    w.StartObject();
    if (!j.csv_delimiter.empty()) {
      w.Key("Delimiter");
      Str(w, j.csv_delimiter);
    }
    if (!j.csv_headers.empty()) {
      w.Key("HeaderList");
      w.StartArray();
      for (const std::string& h : j.csv_headers) Str(w, h);
      w.EndArray();
    }
    w.EndObject();
    w.EndObject();
  }
  w.Key("InputCompressionType");
  Str(w, kCompressions[static_cast<int>(j.compression)]);
  w.Key("TableCreationParameters");
  w.RawValue(j.creation_parameters.data(), j.creation_parameters.size(), rapidjson::kObjectType);
  w.Key("ProcessedSizeBytes");
  w.Int64(j.processed_bytes);
  w.Key("ProcessedItemCount");
  w.Int64(j.processed_items);
  w.Key("ImportedItemCount");
  w.Int64(j.imported_items);
  if (j.status == store::JobStatus::kFailed) {
    w.Key("FailureCode");
    Str(w, j.failure_code);
    w.Key("FailureMessage");
    Str(w, j.failure_message);
  }
  w.EndObject();
}

std::string DescriptionResponse(const ImportJob& j) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  w.Key("ImportTableDescription");
  WriteImportDescription(w, j);
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

std::string Canonical(const Value& v) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  v.Accept(w);
  return std::string(buf.GetString(), buf.GetSize());
}

// ==== ImportTable ============================================================================

struct ImportRequest {
  ImportJob job;
  store::TableInfo plan;
};

bool IsCsvHeader(std::string_view h) {
  // [\x20-\x21\x23-\x2B\x2D-\x7E]*: printable ASCII but '"' and ','.
  for (unsigned char c : h) {
    if (c < 0x20 || c > 0x7E || c == '"' || c == ',') return false;
  }
  return true;
}

struct ImportMembers {
  const Value* token = nullptr;
  const Value* source = nullptr;
  const Value* bucket = nullptr;
  const Value* owner = nullptr;
  const Value* prefix = nullptr;
  const Value* format = nullptr;
  const Value* options = nullptr;
  const Value* csv = nullptr;
  const Value* delimiter = nullptr;
  const Value* headers = nullptr;
  const Value* compression = nullptr;
  const Value* params = nullptr;
};
using M = ImportMembers;

Status HeaderStrings(const Value& list) {
  for (const Value& h : list.GetArray()) {
    if (!h.IsString()) return Error::Serialization("Unexpected token received from parser");
  }
  return Status::Ok();
}

constexpr request::Read<M> kSourceReads[] = {
    {"S3Bucket", &M::bucket, JsonShape::kString},
    {"S3BucketOwner", &M::owner, JsonShape::kString},
    {"S3KeyPrefix", &M::prefix, JsonShape::kString},
};
constexpr request::Read<M> kCsvReads[] = {
    {"Delimiter", &M::delimiter, JsonShape::kString},
    {"HeaderList", &M::headers, JsonShape::kList, {}, HeaderStrings},
};
constexpr request::Read<M> kOptionsReads[] = {
    request::Nested("Csv", &M::csv, "CsvOptions", kCsvReads),
};
constexpr request::Read<M> kImportReads[] = {
    {"ClientToken", &M::token, JsonShape::kString},
    request::Nested("S3BucketSource", &M::source, "S3BucketSource", kSourceReads),
    {"InputFormat", &M::format, JsonShape::kString},
    request::Nested("InputFormatOptions", &M::options, "InputFormatOptions", kOptionsReads),
    {"InputCompressionType", &M::compression, JsonShape::kString},
    {"TableCreationParameters", &M::params, JsonShape::kStruct, "TableCreationParameters"},
};

void DelimiterPattern(ConstraintErrors& e, std::string_view path, const Value* delimiter) {
  if (delimiter == nullptr) return;
  const std::string_view d = AsStringView(*delimiter);
  e.Pattern(path, d,
            d.size() == 1 && std::string_view(",;:|\t ").find(d[0]) != std::string_view::npos,
            "[,;:|\\t ]");
}

void HeaderConstraints(ConstraintErrors& e, std::string_view path, const Value* headers) {
  if (headers == nullptr) return;
  const auto list = headers->GetArray();
  if (list.Empty() || list.Size() > 255) {
    e.AddWithoutValue(path,
                      "Member must have length less than or equal to 255, Member must have "
                      "length greater than or equal to 1");
  }
  const std::string member = std::string(path) + ".member";
  for (const Value& h : list) {
    const std::string_view header = AsStringView(h);
    e.MinLength(member, header, 1);
    e.MaxLength(member, header, 65536);
    e.Pattern(member, header, IsCsvHeader(header), "[\\x20-\\x21\\x23-\\x2B\\x2D-\\x7E]*");
  }
}

// InputCompressionType's values in the order DynamoDB's constraint message lists them.
constexpr std::string_view kCompressionValues[] = {"GZIP", "ZSTD", "NONE"};
constexpr std::string_view kDelimiter = "inputFormatOptions.csv.delimiter";
// After the S3 source's constraints (CheckS3Constraints, shared with exports).
constexpr request::Check<M> kImportChecks[] = {
    request::NotNull(&M::format, "inputFormat"),
    request::Enum(&M::format, "inputFormat", kFormats),
    request::Bound(&M::delimiter, kDelimiter, request::Rule::kMinLength, 1),
    request::Bound(&M::delimiter, kDelimiter, request::Rule::kMaxLength, 1),
    request::Custom(&M::delimiter, kDelimiter, DelimiterPattern),
    request::Custom(&M::headers, "inputFormatOptions.csv.headerList", HeaderConstraints),
    request::Enum(&M::compression, "inputCompressionType", kCompressionValues),
    request::Custom(&M::token, "clientToken", ClientTokenPattern),
    request::NotNull(&M::params, "tableCreationParameters"),
};

Result<ImportRequest> ParseImport(const Value& body, int64_t now_ms) {
  ImportRequest r;
  ImportJob& j = r.job;
  ImportMembers m;
  FDYNO_RETURN_IF_ERROR(request::ReadRows<M>(body, kImportReads, m));
  const std::optional<std::string> bucket = request::OwnedText(m.bucket),
                                   owner = request::OwnedText(m.owner),
                                   prefix = request::OwnedText(m.prefix),
                                   format = request::OwnedText(m.format),
                                   compression = request::OwnedText(m.compression);
  ConstraintErrors e;
  e.NotNull("s3BucketSource", m.source != nullptr);
  if (m.source != nullptr) {
    CheckS3Constraints(e, "s3BucketSource.s3Bucket", bucket, "s3BucketSource.s3BucketOwner", owner,
                       "s3BucketSource.s3KeyPrefix", prefix);
  }
  request::CheckMembers<M>(e, kImportChecks, m);
  FDYNO_RETURN_IF_ERROR(e.ToStatus());
  const Value* params = m.params;
  const Value* csv = m.csv;
  const std::optional<std::string> delimiter = request::OwnedText(m.delimiter),
                                   token = request::OwnedText(m.token);
  std::optional<std::vector<std::string>> headers;
  if (m.headers != nullptr) {
    headers.emplace();
    for (const Value& h : m.headers->GetArray()) headers->emplace_back(AsStringView(h));
  }
  FDYNO_ASSIGN_OR_RETURN(r.plan, PlanImportedTable(*params, now_ms));
  j.s3 = store::S3Location{*bucket, owner.value_or(""), prefix.value_or("")};
  j.format = *format == "ION"   ? store::ImportFormat::kIon
             : *format == "CSV" ? store::ImportFormat::kCsv
                                : store::ImportFormat::kDynamoDbJson;
  j.compression = compression == "GZIP"   ? store::Compression::kGzip
                  : compression == "ZSTD" ? store::Compression::kZstd
                                          : store::Compression::kNone;
  j.has_csv_options = csv != nullptr;
  j.csv_delimiter = delimiter.value_or("");
  j.csv_headers = headers.value_or(std::vector<std::string>());
  if (j.has_csv_options && j.format != store::ImportFormat::kCsv) {
    return Error::Validation(
        "Invalid Request: Unsupported InputFormatOptions for the given input "
        "format: " +
        *format + ".");
  }
  j.creation_parameters = Canonical(*params);
  j.client_token = token.value_or("");
  j.fingerprint = RequestFingerprint(body);
  return r;
}

Result<std::string> ImportTable(Services& s, const RequestContext& ctx, const Value& body) {
  const int64_t now_ms = s.clock->WallMillis();
  FDYNO_ASSIGN_OR_RETURN(ImportRequest r, ParseImport(body, now_ms));
  r.plan.account = ctx.account_id;  // the table is the caller's
  r.plan.region = ctx.region;
  if (s.export_root.empty()) return Error::Validation("Imports are disabled on this server");
  if (Result<std::filesystem::path> dir =
          store::S3Path(s.export_root, r.job.s3.bucket, r.job.s3.prefix);
      !dir.ok()) {
    return std::move(dir).error();
  }
  const std::string id = store::NewBackupId(now_ms);  // chosen once: retries find it
  const std::string uuid = store::NewTableUuid();
  FDYNO_ASSIGN_OR_RETURN(
      ImportJob job,
      kv::Run(*s.db, JobRunOptions(ctx, s),
              [&](kv::Transaction& tx, const kv::Attempt&) -> Result<ImportJob> {
                FDYNO_ASSIGN_OR_RETURN(std::optional<ImportJob> mine, store::ReadImport(tx, id));
                if (mine) return std::move(*mine);  // an earlier attempt committed (1021)
                FDYNO_ASSIGN_OR_RETURN(
                    std::optional<ImportJob> earlier,
                    JobOfToken(tx, store::ImportTokenKey(ctx.account_id, r.job.client_token), r.job,
                               now_ms, store::ReadImport, [](const ImportJob& i) {
                                 return Error::Make(ErrorType::kImportConflict,
                                                    "Import with the same ClientToken but "
                                                    "different parameters already exists: " +
                                                        i.import_arn);
                               }));
                if (earlier) return std::move(*earlier);
                FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const store::TableInfo> existing,
                                       s.catalog->Find(tx, CallerScope(ctx), r.plan.name));
                if (existing) {
                  return Error::ResourceInUse("Table already exists: " + r.plan.name);
                }
                FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const store::TableInfo> t,
                                       s.catalog->Create(tx, r.plan, {}, uuid));
                ImportJob j = r.job;
                j.id = id;
                j.account = t->account;
                j.import_arn = JobArn(ctx, t->name, "import", id);
                j.table_arn = TableArn(ctx, t->name);
                j.table_name = t->name;
                j.table_id = t->id;
                j.table_uuid = t->uuid;
                j.start_ms = now_ms;
                store::WriteImport(tx, j);
                if (!j.client_token.empty()) {
                  store::WriteTokenJob(tx, store::ImportTokenKey(j.account, j.client_token), id);
                }
                return j;
              }));
  if (job.id == id) {
    spdlog::info("import {} into table {} requested", id, job.table_name);
    if (s.wake_backups) s.wake_backups();
  }
  return DescriptionResponse(job);
}

// ==== DescribeImport, ListImports ============================================================

Result<std::string> DescribeImport(Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(std::string arn, ReadJobArn(body, "ImportArn", "importArn"));
  std::optional<std::string> id = JobIdOfArn(ctx, arn, "import");
  if (!id) return ImportNotFound(arn);
  FDYNO_ASSIGN_OR_RETURN(
      ImportJob job,
      kv::Run(*s.db, JobRunOptions(ctx, s, /*read_only=*/true),
              [&](kv::Transaction& tx, const kv::Attempt&) -> Result<ImportJob> {
                FDYNO_ASSIGN_OR_RETURN(std::optional<ImportJob> j, store::ReadImport(tx, *id));
                if (!j || store::ScopeOf(*j) != CallerScope(ctx) || j->import_arn != arn) {
                  return ImportNotFound(arn);
                }
                return std::move(*j);
              }));
  return DescriptionResponse(job);
}

// ListImports' NextToken: the last id listed, hex, zero-padded to 112 digits (the model's
// pattern ([0-9a-f]{16})+ with at least 112 characters).
std::string EncodeNextToken(std::string_view id) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : id) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 0xF]);
  }
  out.resize(112, '0');
  return out;
}

std::optional<std::string> DecodeNextToken(std::string_view token) {
  if (token.size() != 112) return std::nullopt;
  std::string id;
  for (size_t i = 0; i + 1 < token.size(); i += 2) {
    auto digit = [](char c) {
      return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    };
    const int hi = digit(token[i]), lo = digit(token[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    const char c = static_cast<char>((hi << 4) | lo);
    if (c == '\0') break;
    id.push_back(c);
  }
  if (!store::IsBackupId(id)) return std::nullopt;
  return id;
}

Result<std::string> ListImports(Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> arn, GetOwnedString(body, "TableArn"));
  FDYNO_ASSIGN_OR_RETURN(std::optional<int64_t> size, GetInteger(body, "PageSize"));
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> token, GetOwnedString(body, "NextToken"));
  ConstraintErrors e;
  if (arn) {
    e.MinLength("tableArn", *arn, 1);
    e.MaxLength("tableArn", *arn, 1024);
  }
  if (size) {
    e.MinValue("pageSize", *size, 1);
    e.MaxValue("pageSize", *size, kMaxListImports);
  }
  if (token) {
    e.MinLength("nextToken", *token, 112);
    e.MaxLength("nextToken", *token, 1024);
  }
  FDYNO_RETURN_IF_ERROR(e.ToStatus());
  std::string after;
  if (token) {
    std::optional<std::string> id = DecodeNextToken(*token);
    if (!id) return Error::Validation("Invalid Request: Provided nextToken is invalid: " + *token);
    after = *id;
  }
  const int limit = static_cast<int>(size.value_or(kMaxListImports));
  using Page = std::pair<std::vector<ImportJob>, bool>;
  FDYNO_ASSIGN_OR_RETURN(
      Page page, kv::Run(*s.db, JobRunOptions(ctx, s, /*read_only=*/true),
                         [&](kv::Transaction& tx, const kv::Attempt&) -> Result<Page> {
                           return ListJobPage<ImportJob>(tx, store::ListImportJobs,
                                                         CallerScope(ctx), after, limit, arn);
                         }));
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  w.Key("ImportSummaryList");
  w.StartArray();
  for (const ImportJob& j : page.first) {
    w.StartObject();
    WriteSummaryMembers(w, j);
    w.EndObject();
  }
  w.EndArray();
  if (page.second && !page.first.empty()) {
    w.Key("NextToken");
    Str(w, EncodeNextToken(page.first.back().id));
  }
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace

void RegisterImportOperations(OperationRegistry& registry, const Services& services) {
  auto s = std::make_shared<Services>(services);
  registry.Register("ImportTable", Bind(s, &ImportTable));
  registry.Register("DescribeImport", Bind(s, &DescribeImport));
  registry.Register("ListImports", Bind(s, &ListImports));
}

}  // namespace fdyno::api
