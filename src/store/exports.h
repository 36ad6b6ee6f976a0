// Exports of tables to a local directory standing for Amazon S3 (ExportTableToPointInTime) and
// imports of such files into new tables (ImportTable): their job records, stored under the
// backups root subspace (layout::Backups()), and the mapping of S3 buckets and prefixes onto
// the export root directory. Format: docs/format/exports.md.
//
//   (7, 7, export_id)   -> export record (version byte + JSON): ExportJob
//   (7, 8, import_id)   -> import record (version byte + JSON): ImportJob
//   (7, 9, token)       -> the export id a ClientToken made (version byte + id)
//   (7, 10, token)      -> the import id a ClientToken made (version byte + id)
//
// The request stores the job IN_PROGRESS; the backup worker's thread does the work
// (workers/exports.h) and marks it COMPLETED or FAILED. Ids are "<ms, 14 digits>-<8 hex>" (like
// backup ids), the last part of the job's ARN, so jobs list in creation order.
//
// Thread-safety: values, pure functions, and functions over a Transaction used by one thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "kv/kv.h"
#include "store/catalog.h"

namespace fdyno::store {

// DynamoDB's ExportStatus and ImportStatus (an import's CANCELLING and CANCELLED are never
// stored: nothing cancels an import).
enum class JobStatus : uint8_t { kInProgress, kCompleted, kFailed };
std::string_view JobStatusText(JobStatus s);

enum class ExportFormat : uint8_t { kDynamoDbJson, kIon };
enum class ExportType : uint8_t { kFull, kIncremental };
// ExportViewType of an incremental export.
enum class ExportView : uint8_t { kNewAndOldImages, kNewImage };
enum class ImportFormat : uint8_t { kDynamoDbJson, kIon, kCsv };
enum class Compression : uint8_t { kNone, kGzip, kZstd };

// Where a job's files are: the bucket and prefix as the request named them.
struct S3Location {
  std::string bucket;
  std::string owner;   // S3BucketOwner; empty: none given
  std::string prefix;  // S3Prefix / S3KeyPrefix; empty: none given
  bool operator==(const S3Location&) const = default;
};

// One export: the request, then its progress and outcome.
struct ExportJob {
  std::string id;
  std::string account = std::string(kSharedAccount);  // the exported table's, who owns the job
  std::string export_arn;  // arn:...:table/<table>/export/<id>, as the requester saw it
  std::string table_arn;
  std::string table_name;
  int64_t table_id = 0;
  std::string table_uuid;
  int64_t epoch = 0;  // the point-in-time recovery history (store/pitr.h) the export reads
  JobStatus status = JobStatus::kInProgress;
  ExportFormat format = ExportFormat::kDynamoDbJson;
  ExportType type = ExportType::kFull;
  ExportView view = ExportView::kNewAndOldImages;
  int64_t export_time_ms = 0;  // full: the table as of then; incremental: ExportToTime
  int64_t from_ms = 0;         // incremental: ExportFromTime
  S3Location s3;
  std::string sse_algorithm;  // S3SseAlgorithm; empty: none given
  std::string sse_key;        // S3SseKmsKeyId
  std::string client_token;
  std::string fingerprint;  // the request without its token, canonical (ClientToken reuse)
  int64_t start_ms = 0;
  int64_t end_ms = 0;    // 0 while IN_PROGRESS
  int64_t items = 0;     // ItemCount once COMPLETED
  int64_t bytes = 0;     // BilledSizeBytes once COMPLETED
  std::string manifest;  // ExportManifest: the key of manifest-summary.json in the bucket
  std::string failure_code, failure_message;
  std::string owner;  // the process doing it; empty before one claimed it
  int64_t heartbeat_ms = 0;
  bool operator==(const ExportJob&) const = default;
};

// One import: the request, then its progress and outcome.
struct ImportJob {
  std::string id;
  std::string account = std::string(kSharedAccount);  // the created table's, who owns the job
  std::string import_arn;                             // arn:...:table/<table>/import/<id>
  std::string table_arn;
  std::string table_name;
  int64_t table_id = 0;  // the table it creates (CREATING until the import ends)
  std::string table_uuid;
  JobStatus status = JobStatus::kInProgress;
  S3Location s3;
  ImportFormat format = ImportFormat::kDynamoDbJson;
  Compression compression = Compression::kNone;
  std::string csv_delimiter;             // empty: none given (",")
  std::vector<std::string> csv_headers;  // empty: none given (the first line)
  bool has_csv_options = false;          // InputFormatOptions.Csv was given
  std::string creation_parameters;       // TableCreationParameters as given (JSON text)
  std::string client_token;
  std::string fingerprint;
  int64_t start_ms = 0;
  int64_t end_ms = 0;
  // Progress: the files to read are the bucket's keys under the prefix, in key order (listed
  // again on resume); the cursor is the key of the file being read (empty: the first) and the
  // first record of it not yet imported.
  int64_t file_count = 0;  // files found when the import started
  std::string next_file;
  int64_t next_record = 0;
  int64_t processed_items = 0;  // lines read (ProcessedItemCount)
  int64_t processed_bytes = 0;  // their bytes as stored (ProcessedSizeBytes)
  int64_t imported_items = 0;   // items written (ImportedItemCount)
  int64_t errors = 0;           // lines that were no valid item (ErrorCount)
  std::string failure_code, failure_message;
  bool operator==(const ImportJob&) const = default;
};

std::string EncodeExportJob(const ExportJob& job);
// Fails closed (InternalServerError) on an unknown version or a malformed record.
Result<ExportJob> DecodeExportJob(std::string_view bytes);
std::string EncodeImportJob(const ImportJob& job);
Result<ImportJob> DecodeImportJob(std::string_view bytes);

// ---- keys and records ----------------------------------------------------------------------

std::string ExportKey(std::string_view id);
std::string ImportKey(std::string_view id);
// The account and region of the table a job exports or creates: the region is the one its
// table ARN names (the job's records carry it there, also those from before regions).
TableScope ScopeOf(const ExportJob& job);
TableScope ScopeOf(const ImportJob& job);

// A ClientToken is one account's: another account's same token names another job.
std::string ExportTokenKey(std::string_view account, std::string_view token);
std::string ImportTokenKey(std::string_view account, std::string_view token);

Result<std::optional<ExportJob>> ReadExport(kv::Transaction& tx, std::string_view id);
void WriteExport(kv::Transaction& tx, const ExportJob& job);
// Exports in id (creation) order after `after` (exclusive; empty: from the first), at most
// `limit` (0: all).
Result<std::vector<ExportJob>> ListExportJobs(kv::Transaction& tx, std::string_view after,
                                              int limit);
Result<std::optional<ImportJob>> ReadImport(kv::Transaction& tx, std::string_view id);
void WriteImport(kv::Transaction& tx, const ImportJob& job);
Result<std::vector<ImportJob>> ListImportJobs(kv::Transaction& tx, std::string_view after,
                                              int limit);
// The job id a ClientToken made, if any (key: ExportTokenKey or ImportTokenKey).
Result<std::optional<std::string>> ReadTokenJob(kv::Transaction& tx, const std::string& key);
void WriteTokenJob(kv::Transaction& tx, const std::string& key, std::string_view id);

// ---- the directory standing for S3 ----------------------------------------------------------

// The directory or file that S3 bucket `bucket` and key (or key prefix) `key` name under the
// export root: <root>/<bucket>/<key>. ValidationException when either could leave the root: an
// empty bucket, a bucket or key component "." or "..", an absolute key, a NUL byte, or a path
// that resolves (through symbolic links) outside the root.
Result<std::filesystem::path> S3Path(const std::filesystem::path& root, std::string_view bucket,
                                     std::string_view key);

// The key prefix of export `id` under prefix `prefix`: "<prefix>/AWSDynamoDB/<id>/" (no
// leading prefix when it is empty), as DynamoDB lays an export out.
std::string ExportKeyPrefix(std::string_view prefix, std::string_view id);

}  // namespace fdyno::store
