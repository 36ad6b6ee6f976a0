#include "store/exports.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <system_error>

#include "kv/tuple.h"
#include "store/layout.h"
#include "store/record_codec.h"

namespace fdyno::store {
namespace {

// Persisted (docs/format/exports.md): never renumber.
constexpr uint8_t kExportRecordVersion = 1;
constexpr uint8_t kImportRecordVersion = 1;
constexpr uint8_t kTokenRecordVersion = 1;
constexpr int64_t kExportPart = 7;
constexpr int64_t kImportPart = 8;
constexpr int64_t kExportTokenPart = 9;
constexpr int64_t kImportTokenPart = 10;

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

// Persisted names (docs/format/exports.md), in enum order.
constexpr std::string_view kStatusNames[] = {"IN_PROGRESS", "COMPLETED", "FAILED"};
constexpr std::string_view kExportFormatNames[] = {"DYNAMODB_JSON", "ION"};
constexpr std::string_view kExportTypeNames[] = {"FULL_EXPORT", "INCREMENTAL_EXPORT"};
constexpr std::string_view kViewNames[] = {"NEW_AND_OLD_IMAGES", "NEW_IMAGE"};
constexpr std::string_view kImportFormatNames[] = {"DYNAMODB_JSON", "ION", "CSV"};
constexpr std::string_view kCompressionNames[] = {"NONE", "GZIP", "ZSTD"};

template <typename Fields, typename S3>
void S3Fields(Fields& f, S3& s3) {
  f.Str("s3_bucket", s3.bucket);
  f.Str("s3_owner", s3.owner);
  f.Str("s3_prefix", s3.prefix);
}

kv::Subspace Root() { return layout::Backups(); }

template <typename Job, typename Decode>
Result<std::vector<Job>> ListJobs(kv::Transaction& tx, int64_t part, std::string_view after,
                                  int limit, Decode decode) {
  auto [begin, end] = Root().Range(kv::Tuple{part});
  if (!after.empty()) begin = kv::PrefixEnd(Root().Pack(kv::Tuple{part, std::string(after)}));
  FDYNO_ASSIGN_OR_RETURN(kv::RangeResult r, tx.GetRange(begin, end, {.limit = limit}));
  std::vector<Job> out;
  for (const kv::KeyValue& kv : r.kvs) {
    FDYNO_ASSIGN_OR_RETURN(Job job, decode(kv.value));
    out.push_back(std::move(job));
  }
  return out;
}

// The job stored at `key`, decoded by `decode`; none where nothing is stored there.
template <typename Job, typename Decode>
Result<std::optional<Job>> ReadJob(kv::Transaction& tx, const std::string& key, Decode decode) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> bytes, tx.Get(key));
  if (!bytes) return std::optional<Job>();
  FDYNO_ASSIGN_OR_RETURN(Job job, decode(*bytes));
  return std::optional<Job>(std::move(job));
}

Error BadPath(std::string_view what, std::string_view value) {
  return Error::Validation(std::string(what) + " '" + std::string(value) +
                           "' does not name a location under the export root");
}

// The persisted fields of each record, in the order they are written. `Job` is const for the
// encoder.
template <typename Fields, typename Job>
void ExportFields(Fields& f, Job& j) {
  f.Str("id", j.id);
  f.Str("account", j.account);
  f.Str("export_arn", j.export_arn);
  f.Str("table_arn", j.table_arn);
  f.Str("table_name", j.table_name);
  f.Int("table_id", j.table_id);
  f.Str("table_uuid", j.table_uuid);
  f.Int("epoch", j.epoch);
  f.Enum("status", kStatusNames, j.status);
  f.Enum("format", kExportFormatNames, j.format);
  f.Enum("type", kExportTypeNames, j.type);
  f.Enum("view", kViewNames, j.view);
  f.Int("export_time_ms", j.export_time_ms);
  f.Int("from_ms", j.from_ms);
  S3Fields(f, j.s3);
  f.Str("sse_algorithm", j.sse_algorithm);
  f.Str("sse_key", j.sse_key);
  f.Str("client_token", j.client_token);
  f.Str("fingerprint", j.fingerprint);
  f.Int("start_ms", j.start_ms);
  f.Int("end_ms", j.end_ms);
  f.Int("items", j.items);
  f.Int("bytes", j.bytes);
  f.Str("manifest", j.manifest);
  f.Str("failure_code", j.failure_code);
  f.Str("failure_message", j.failure_message);
  f.Str("owner", j.owner);
  f.Int("heartbeat_ms", j.heartbeat_ms);
}

template <typename Fields, typename Job>
void ImportFields(Fields& f, Job& j) {
  f.Str("id", j.id);
  f.Str("account", j.account);
  f.Str("import_arn", j.import_arn);
  f.Str("table_arn", j.table_arn);
  f.Str("table_name", j.table_name);
  f.Int("table_id", j.table_id);
  f.Str("table_uuid", j.table_uuid);
  f.Enum("status", kStatusNames, j.status);
  S3Fields(f, j.s3);
  f.Enum("format", kImportFormatNames, j.format);
  f.Enum("compression", kCompressionNames, j.compression);
  f.Bool("has_csv_options", j.has_csv_options);
  f.Str("csv_delimiter", j.csv_delimiter);
  f.Strs("csv_headers", j.csv_headers);
  f.Str("creation_parameters", j.creation_parameters);
  f.Str("client_token", j.client_token);
  f.Str("fingerprint", j.fingerprint);
  f.Int("start_ms", j.start_ms);
  f.Int("end_ms", j.end_ms);
  f.Int("file_count", j.file_count);
  f.Str("next_file", j.next_file);
  f.Int("next_record", j.next_record);
  f.Int("processed_items", j.processed_items);
  f.Int("processed_bytes", j.processed_bytes);
  f.Int("imported_items", j.imported_items);
  f.Int("errors", j.errors);
  f.Str("failure_code", j.failure_code);
  f.Str("failure_message", j.failure_message);
}

}  // namespace

std::string_view JobStatusText(JobStatus s) { return kStatusNames[static_cast<int>(s)]; }

// ---- records -------------------------------------------------------------------------------

std::string EncodeExportJob(const ExportJob& j) {
  RecordWriter w;
  ExportFields(w, j);
  return w.Finish(kExportRecordVersion);
}

Result<ExportJob> DecodeExportJob(std::string_view bytes) {
  RecordReader r(bytes, kExportRecordVersion);
  ExportJob j;
  ExportFields(r, j);
  if (!r.ok()) return CorruptRecord("export");
  return j;
}

std::string EncodeImportJob(const ImportJob& j) {
  RecordWriter w;
  ImportFields(w, j);
  return w.Finish(kImportRecordVersion);
}

Result<ImportJob> DecodeImportJob(std::string_view bytes) {
  RecordReader r(bytes, kImportRecordVersion);
  ImportJob j;
  ImportFields(r, j);
  if (!r.ok()) return CorruptRecord("import");
  return j;
}

// ---- keys and records ----------------------------------------------------------------------

std::string ExportKey(std::string_view id) {
  return Root().Pack(kv::Tuple{kExportPart, std::string(id)});
}
std::string ImportKey(std::string_view id) {
  return Root().Pack(kv::Tuple{kImportPart, std::string(id)});
}
namespace {
// The region of arn:aws:dynamodb:<region>:<account>:..., empty when it has none.
std::string_view ArnRegion(std::string_view arn) {
  for (int i = 0; i < 3; ++i) {
    const size_t colon = arn.find(':');
    if (colon == std::string_view::npos) return {};
    arn.remove_prefix(colon + 1);
  }
  return arn.substr(0, arn.find(':'));
}
}  // namespace

TableScope ScopeOf(const ExportJob& job) { return {job.account, ArnRegion(job.table_arn)}; }
TableScope ScopeOf(const ImportJob& job) { return {job.account, ArnRegion(job.table_arn)}; }

std::string ExportTokenKey(std::string_view account, std::string_view token) {
  return Root().Pack(kv::Tuple{kExportTokenPart, std::string(account), std::string(token)});
}
std::string ImportTokenKey(std::string_view account, std::string_view token) {
  return Root().Pack(kv::Tuple{kImportTokenPart, std::string(account), std::string(token)});
}

Result<std::optional<ExportJob>> ReadExport(kv::Transaction& tx, std::string_view id) {
  return ReadJob<ExportJob>(tx, ExportKey(id), DecodeExportJob);
}

void WriteExport(kv::Transaction& tx, const ExportJob& job) {
  tx.Set(ExportKey(job.id), EncodeExportJob(job));
}

Result<std::vector<ExportJob>> ListExportJobs(kv::Transaction& tx, std::string_view after,
                                              int limit) {
  return ListJobs<ExportJob>(tx, kExportPart, after, limit, DecodeExportJob);
}

Result<std::optional<ImportJob>> ReadImport(kv::Transaction& tx, std::string_view id) {
  return ReadJob<ImportJob>(tx, ImportKey(id), DecodeImportJob);
}

void WriteImport(kv::Transaction& tx, const ImportJob& job) {
  tx.Set(ImportKey(job.id), EncodeImportJob(job));
}

Result<std::vector<ImportJob>> ListImportJobs(kv::Transaction& tx, std::string_view after,
                                              int limit) {
  return ListJobs<ImportJob>(tx, kImportPart, after, limit, DecodeImportJob);
}

Result<std::optional<std::string>> ReadTokenJob(kv::Transaction& tx, const std::string& key) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> bytes, tx.Get(key));
  if (!bytes) return std::optional<std::string>();
  if (bytes->empty() || static_cast<uint8_t>((*bytes)[0]) != kTokenRecordVersion) {
    return CorruptRecord("client token");
  }
  return std::optional<std::string>(bytes->substr(1));
}

void WriteTokenJob(kv::Transaction& tx, const std::string& key, std::string_view id) {
  std::string value(1, static_cast<char>(kTokenRecordVersion));
  value.append(id);
  tx.Set(key, value);
}

// ---- the directory standing for S3 ----------------------------------------------------------

Result<std::filesystem::path> S3Path(const std::filesystem::path& root, std::string_view bucket,
                                     std::string_view key) {
  namespace fs = std::filesystem;
  if (bucket.empty() || bucket == "." || bucket == ".." ||
      bucket.find_first_of(std::string_view("/\\\0", 3)) != std::string_view::npos) {
    return BadPath("S3Bucket", bucket);
  }
  if (key.starts_with('/') || key.find('\0') != std::string_view::npos) {
    return BadPath("S3 key", key);
  }
  fs::path out = root / std::string(bucket);
  // S3 keys may hold empty components ("a//b"); a file system path collapses them. "." and ".."
  // would name another place, so they name none.
  size_t at = 0;
  while (at <= key.size()) {
    const size_t slash = std::min(key.find('/', at), key.size());
    std::string_view part = key.substr(at, slash - at);
    if (part == "." || part == "..") return BadPath("S3 key", key);
    if (!part.empty()) out /= std::string(part);
    at = slash + 1;
  }
  // Symbolic links inside the root may point out of it.
  std::error_code ec;
  const fs::path real_root = fs::weakly_canonical(root, ec);
  if (ec) return BadPath("S3Bucket", bucket);
  const fs::path real = fs::weakly_canonical(out, ec);
  if (ec) return BadPath("S3 key", key);
  if (std::mismatch(real_root.begin(), real_root.end(), real.begin(), real.end()).first !=
      real_root.end()) {
    return BadPath("S3 key", key);
  }
  return out;
}

std::string ExportKeyPrefix(std::string_view prefix, std::string_view id) {
  std::string out(prefix);
  if (!out.empty() && !out.ends_with('/')) out.push_back('/');
  out += "AWSDynamoDB/";
  out += id;
  out += '/';
  return out;
}

}  // namespace fdyno::store
