#include "workers/exports.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "base/hex.h"
#include "base/md5.h"
#include "base/metrics.h"
#include "base/stop_flag.h"
#include "base/time_text.h"
#include "kv/run.h"
#include "model/base64.h"
#include "model/item_codec.h"
#include "model/item_size.h"
#include "model/stored_json.h"
#include "store/exports.h"
#include "store/item_cursor.h"
#include "store/items.h"
#include "store/layout.h"
#include "store/mutation.h"
#include "store/pitr.h"
#include "workers/export_files.h"
#include "workers/snapshot_reader.h"

namespace fdyno::workers {
namespace {

namespace fs = std::filesystem;
using store::ExportJob;
using store::ImportJob;
using store::JobStatus;

Clock* ClockOf(const BackupWorkerOptions& o) {
  return o.clock != nullptr ? o.clock : Clock::Real();
}

// The pause_after test hook (workers/backups.h): counts a step, then waits for Stop once the
// count is reached, standing for a process killed half-way.
void CountStep(const BackupWorkerOptions& o) {
  if (o.pause_after <= 0 || o.steps == nullptr) return;
  if (o.steps->fetch_add(1) + 1 != o.pause_after) return;
  spdlog::warn("export worker paused after {} steps (FDYNO_TEST_BACKUP_PAUSE_AFTER)",
               o.pause_after);
  while (!StopRequested(o.stop)) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

// Why a job cannot be done: it then becomes FAILED with this code and message.
struct Failure {
  std::string code;
  std::string message;
};

// The FailureCode (DynamoDB's, persisted in the job record: docs/format/exports.md) that a job
// records for an error of `cause`; nullopt when the error is no failure of the job (the job is
// tried again at the next pass).
std::optional<std::string_view> FailureCodeOf(ErrorCause cause) {
  switch (cause) {
    case ErrorCause::kUnrecoverable:
      return "UnknownError";
    case ErrorCause::kExportTimeTrimmed:
      return "InvalidExportTime";
    case ErrorCause::kJobTableNotFound:
      return "TableNotFound";
    case ErrorCause::kJobPitrUnavailable:
      return "PointInTimeRecoveryUnavailable";
    case ErrorCause::kS3InvalidPath:
      return "S3InvalidPath";
    case ErrorCause::kS3AccessDenied:
      return "S3AccessDenied";
    case ErrorCause::kS3NoSuchKey:
      return "S3NoSuchKey";
    case ErrorCause::kInvalidCompression:
      return "InvalidCompression";
    case ErrorCause::kImportCollectionTooLarge:
      return "ItemCollectionSizeLimitExceeded";
    default:
      return std::nullopt;
  }
}

// An error that fails its job for `cause`, with `message` as the job's FailureMessage.
// REQUIRES: FailureCodeOf(cause) has a value.
Error Failed(ErrorCause cause, std::string message) {
  return Error::Internal(std::move(message)).WithCause(cause);
}

bool FailsTheJob(const Error& e) { return FailureCodeOf(e.cause).has_value(); }

// REQUIRES: FailsTheJob(e).
Failure FailureOf(const Error& e) { return {std::string(*FailureCodeOf(e.cause)), e.message}; }

std::string RandomName() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  std::string out;
  for (int i = 0; i < 26; ++i) out.push_back(kAlphabet[rng() % 36]);
  return out;
}

// ==== exports ================================================================================

enum class Claim { kClaimed, kNotMine, kNothing, kWaiting };

// Takes export `id` for this process unless another live owner holds it or its time has not
// settled.
Result<std::pair<Claim, ExportJob>> ClaimExport(kv::Database& db, const std::string& id,
                                                const BackupWorkerOptions& options) {
  using Out = std::pair<Claim, ExportJob>;
  return kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<Out> {
    FDYNO_ASSIGN_OR_RETURN(std::optional<ExportJob> job, store::ReadExport(tx, id));
    if (!job || job->status != JobStatus::kInProgress) return Out{Claim::kNothing, {}};
    const int64_t now = ClockOf(options)->WallMillis();
    if (now < job->export_time_ms + store::kPitrSettleMs) return Out{Claim::kWaiting, *job};
    if (!job->owner.empty() && job->owner != options.owner &&
        now - job->heartbeat_ms < options.takeover.count()) {
      return Out{Claim::kNotMine, *job};
    }
    if (!job->owner.empty()) {
      spdlog::info("export {}: starting again (owner {} stopped)", id, job->owner);
    }
    job->owner = options.owner;
    job->heartbeat_ms = now;
    store::WriteExport(tx, *job);
    return Out{Claim::kClaimed, *job};
  });
}

// Keeps export `job` this process's while it writes the files: every takeover/4 renews the job's
// heartbeat, so that no other process takes a live export over, and answers kTakenOver once
// another process has (this one paused past the takeover time): the two never both write one
// export's files to the end. With takeover 0 (the only process) there is nobody to tell.
class Heartbeat {
 public:
  Heartbeat(kv::Database& db, const ExportJob& job, const BackupWorkerOptions& options)
      : db_(db), id_(job.id), options_(options), last_ms_(job.heartbeat_ms) {}

  Status Beat() {
    if (options_.takeover.count() == 0) return Status::Ok();
    const int64_t now = ClockOf(options_)->WallMillis();
    if (now - last_ms_ < options_.takeover.count() / 4) return Status::Ok();
    FDYNO_RETURN_IF_ERROR(kv::Run(db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
      FDYNO_ASSIGN_OR_RETURN(std::optional<ExportJob> job, store::ReadExport(tx, id_));
      if (!job || job->status != JobStatus::kInProgress || job->owner != options_.owner) {
        return Error::Internal("export " + id_ + " was taken over by another process")
            .WithCause(ErrorCause::kTakenOver);
      }
      job->heartbeat_ms = now;
      store::WriteExport(tx, *job);
      return Status::Ok();
    }));
    last_ms_ = now;
    return Status::Ok();
  }

 private:
  kv::Database& db_;
  std::string id_;
  const BackupWorkerOptions& options_;
  int64_t last_ms_;
};

// Ends export `mine` (COMPLETED with its totals, or FAILED) if this process still owns it.
Status EndExport(kv::Database& db, const ExportJob& mine, std::optional<Failure> failure,
                 const BackupWorkerOptions& options) {
  return kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
    FDYNO_ASSIGN_OR_RETURN(std::optional<ExportJob> job, store::ReadExport(tx, mine.id));
    if (!job || job->status != JobStatus::kInProgress || job->owner != options.owner) {
      return Status::Ok();
    }
    job->end_ms = mine.end_ms != 0 ? mine.end_ms : ClockOf(options)->WallMillis();
    if (failure) {
      job->status = JobStatus::kFailed;
      job->failure_code = failure->code;
      job->failure_message = failure->message;
    } else {
      job->status = JobStatus::kCompleted;
      job->items = mine.items;
      job->bytes = mine.bytes;
      job->manifest = mine.manifest;
    }
    store::WriteExport(tx, *job);
    return Status::Ok();
  });
}

// An item's state as the history knows it, per item key suffix: its image at the boundary
// times, and its latest write within an incremental export's window.
struct Undone {
  std::optional<std::string> at_to;  // image at the export (to) time, when changed after it
  bool changed_after_to = false;
  std::optional<std::string> at_from;  // incremental: image at the from time
  bool changed_in_window = false;
  int64_t last_write_ms = 0;
};

using Changes = std::map<std::string, Undone>;

// Reads the history of the export's table backwards from the snapshot's newest record down to
// the export time (full) or from time (incremental).
Result<Changes> ReadChanges(SnapshotReader& reader, const ExportJob& job,
                            const BackupWorkerOptions& options) {
  const bool incremental = job.type == store::ExportType::kIncremental;
  const int64_t bottom = incremental ? job.from_ms : job.export_time_ms;
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> trim,
                         reader.Get(store::HistoryTrimPointKey(job.table_id, job.epoch)));
  if (trim && trim->size() == 8) {
    int64_t trimmed = 0;
    for (char c : *trim) trimmed = (trimmed << 8) | static_cast<uint8_t>(c);
    if (trimmed > bottom) {
      return Failed(ErrorCause::kExportTimeTrimmed,
                    "the point-in-time history was trimmed past the export time");
    }
  }
  Changes changes;
  auto [begin, end] = store::HistoryRange(job.table_id, job.epoch);
  std::string read_end = end;
  store::ReverseUndoAssembler assembler;
  const int limit = std::max(options.page_keys, 160);
  for (;;) {
    FDYNO_ASSIGN_OR_RETURN(kv::RangeResult page,
                           reader.GetRange(begin, read_end, limit, /*reverse=*/true));
    for (const kv::KeyValue& kv : page.kvs) {
      FDYNO_ASSIGN_OR_RETURN(std::optional<store::ReverseUndoAssembler::Assembled> r,
                             assembler.Add(kv));
      if (!r) continue;
      const store::UndoRecord& rec = r->record;
      if (rec.time_ms <= bottom) return changes;  // this change and every one before it stay
      Undone& u = changes[rec.item_suffix];
      if (rec.time_ms > job.export_time_ms) {
        u.at_to = rec.old_image;  // older records replace newer ones: the oldest wins
        u.changed_after_to = true;
      } else {
        u.at_from = rec.old_image;
        if (!u.changed_in_window) u.last_write_ms = rec.time_ms;  // the newest comes first
        u.changed_in_window = true;
      }
    }
    if (!page.more) return changes;
    read_end = page.kvs.back().key;
  }
}

// Progress for GET /metrics (and the console's charts).
struct ExportMetrics {
  ExportMetrics() {
    Metrics& m = Metrics::Global();
    m.Describe("fdyno_export_items", "Items written to export data files.");
    m.Describe("fdyno_exports_running", "Exports this process is writing now.");
    m.Describe("fdyno_import_items", "Items imported into tables by ImportTable.");
  }
  Counter& export_items = Metrics::Global().GetCounter("fdyno_export_items");
  Gauge& exports_running = Metrics::Global().GetGauge("fdyno_exports_running");
  Counter& import_items = Metrics::Global().GetCounter("fdyno_import_items");
};

ExportMetrics& GetExportMetrics() {
  static ExportMetrics* metrics = new ExportMetrics();
  return *metrics;
}

// Writes the data files of one export: items go to files of at most options' file_items.
class DataFiles {
 public:
  DataFiles(fs::path dir, std::string key_prefix, store::ExportFormat format, int64_t file_items)
      : dir_(std::move(dir)),
        key_prefix_(std::move(key_prefix)),
        format_(format),
        file_items_(file_items) {}

  Status Add(const std::string& line) {
    if (!writer_) FDYNO_RETURN_IF_ERROR(Open());
    FDYNO_RETURN_IF_ERROR(writer_->Append(line));
    FDYNO_RETURN_IF_ERROR(writer_->Append("\n"));
    ++in_file_;
    ++items_;
    GetExportMetrics().export_items.Add();
    if (in_file_ >= file_items_) return Close();
    return Status::Ok();
  }

  // Closes the open file; at the end, an export with no item still has one (empty) data file.
  Status Close(bool last = false) {
    if (!writer_ && !(last && manifest_.empty())) return Status::Ok();
    if (!writer_) FDYNO_RETURN_IF_ERROR(Open());
    FDYNO_RETURN_IF_ERROR(writer_->Finish());
    manifest_ += "{\"itemCount\":" + std::to_string(in_file_) + ",\"md5Checksum\":\"" +
                 writer_->md5_base64() + "\",\"etag\":\"" + writer_->md5_hex() +
                 "\",\"dataFileS3Key\":\"" + key_prefix_ + "data/" + name_ + "\"}\n";
    writer_.reset();
    in_file_ = 0;
    return Status::Ok();
  }

  const std::string& manifest() const { return manifest_; }
  int64_t items() const { return items_; }

 private:
  Status Open() {
    name_ = RandomName() + (format_ == store::ExportFormat::kIon ? ".ion.gz" : ".json.gz");
    FDYNO_ASSIGN_OR_RETURN(writer_, GzipFileWriter::Create(dir_ / "data" / name_));
    return Status::Ok();
  }

  fs::path dir_;
  std::string key_prefix_;
  store::ExportFormat format_;
  int64_t file_items_;
  std::unique_ptr<GzipFileWriter> writer_;
  std::string name_;
  int64_t in_file_ = 0;
  int64_t items_ = 0;
  std::string manifest_;  // manifest-files.json: one line per data file
};

std::string ItemLine(store::ExportFormat format, const model::Item& item) {
  return format == store::ExportFormat::kIon ? IonLine(item) : DynamoJsonLine(item);
}

Result<model::Item> DecodeImage(std::string_view image) {
  Result<model::Item> item = model::DecodeStoredItem(image);
  if (!item.ok()) return Failed(ErrorCause::kUnrecoverable, item.error().message);
  return item;
}

model::Item KeysOf(const store::TableInfo& table, const model::Item& item) {
  model::Item keys;
  for (const model::KeyAttribute& a : table.key_schema.Attributes()) {
    auto it = item.find(a.name);
    if (it != item.end()) keys.emplace(it->first, it->second);
  }
  return keys;
}

// A full export: every item as it was at the export time.
Status WriteFullExport(SnapshotReader& reader, const store::TableInfo& table, Changes& changes,
                       ExportJob& job, DataFiles& files, Heartbeat& heartbeat,
                       const BackupWorkerOptions& options) {
  auto emit = [&](std::string_view image) -> Status {
    FDYNO_ASSIGN_OR_RETURN(model::Item item, DecodeImage(image));
    job.bytes += static_cast<int64_t>(model::ItemSize(item));
    return files.Add(ItemLine(job.format, item));
  };
  auto visit = [&](const std::string& key, std::string_view image) -> Result<bool> {
    auto it = changes.find(store::ItemSuffix(table.id, key));
    if (it != changes.end() && it->second.changed_after_to) {
      if (it->second.at_to) FDYNO_RETURN_IF_ERROR(emit(*it->second.at_to));
      changes.erase(it);
    } else {
      FDYNO_RETURN_IF_ERROR(emit(image));
    }
    return true;
  };
  auto [begin, end] = store::layout::Items(table.id).Range();
  store::ItemCursor cursor(begin, end);
  while (!cursor.done()) {
    if (StopRequested(options.stop)) return Error::Internal("stopping");
    FDYNO_RETURN_IF_ERROR(heartbeat.Beat());
    FDYNO_RETURN_IF_ERROR(
        cursor.Step([&](const std::string& b,
                        const std::string& e) { return reader.GetRange(b, e, options.page_keys); },
                    visit));
    CountStep(options);  // a process killed here leaves a data file unfinished, no manifest
  }
  // Items that existed at the export time and were deleted since.
  for (const auto& [suffix, u] : changes) {
    if (u.changed_after_to && u.at_to) FDYNO_RETURN_IF_ERROR(emit(*u.at_to));
  }
  return Status::Ok();
}

// An incremental export: every item changed in (from, to], with its images at both times.
Status WriteIncrementalExport(SnapshotReader& reader, const store::TableInfo& table,
                              const Changes& changes, ExportJob& job, DataFiles& files,
                              Heartbeat& heartbeat) {
  for (const auto& [suffix, u] : changes) {
    if (!u.changed_in_window) continue;
    FDYNO_RETURN_IF_ERROR(heartbeat.Beat());
    std::optional<std::string> now_image;
    if (u.changed_after_to) {
      now_image = u.at_to;
    } else {
      const std::string key = store::ItemKeyFromSuffix(table.id, suffix);
      FDYNO_ASSIGN_OR_RETURN(kv::RangeResult r, reader.GetRange(key, store::ItemRangeEnd(key),
                                                                store::kMaxItemChunks + 1));
      store::ItemAssembler assembler;
      for (const kv::KeyValue& kv : r.kvs) {
        FDYNO_ASSIGN_OR_RETURN(std::optional<store::ItemAssembler::Assembled> a, assembler.Add(kv));
        if (a) now_image = std::move(a->image);
      }
    }
    std::optional<model::Item> new_item, old_item;
    if (now_image) {
      FDYNO_ASSIGN_OR_RETURN(new_item, DecodeImage(*now_image));
    }
    if (u.at_from) {
      FDYNO_ASSIGN_OR_RETURN(old_item, DecodeImage(*u.at_from));
    }
    if (!new_item && !old_item) continue;  // created and deleted within the window
    const model::Item keys = KeysOf(table, new_item ? *new_item : *old_item);
    const bool with_old = job.view == store::ExportView::kNewAndOldImages;
    if (new_item) job.bytes += static_cast<int64_t>(model::ItemSize(*new_item));
    FDYNO_RETURN_IF_ERROR(files.Add(IncrementalLine(job.format, u.last_write_ms * 1000, keys,
                                                    new_item ? &*new_item : nullptr,
                                                    with_old && old_item ? &*old_item : nullptr)));
  }
  return Status::Ok();
}

std::string SummaryJson(const ExportJob& job, const std::string& files_key) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  auto str = [&](const char* k, std::string_view v) {
    w.Key(k);
    w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
  };
  auto opt = [&](const char* k, const std::string& v) {
    if (v.empty()) {
      w.Key(k);
      w.Null();
    } else {
      str(k, v);
    }
  };
  const bool incremental = job.type == store::ExportType::kIncremental;
  w.StartObject();
  str("version", incremental ? "2023-08-01" : "2020-06-30");
  str("exportArn", job.export_arn);
  str("startTime", Iso8601Millis(job.start_ms));
  str("endTime", Iso8601Millis(job.end_ms));
  str("tableArn", job.table_arn);
  str("tableId", job.table_uuid);
  if (incremental) {
    str("exportFromTime", Iso8601Millis(job.from_ms));
    str("exportToTime", Iso8601Millis(job.export_time_ms));
  } else {
    str("exportTime", Iso8601Millis(job.export_time_ms));
  }
  str("s3Bucket", job.s3.bucket);
  opt("s3Prefix", job.s3.prefix);
  opt("s3SseAlgorithm", job.sse_algorithm);
  opt("s3SseKmsKeyId", job.sse_key);
  str("manifestFilesS3Key", files_key);
  w.Key("billedSizeBytes");
  w.Int64(job.bytes);
  w.Key("itemCount");
  w.Int64(job.items);
  str("outputFormat", job.format == store::ExportFormat::kIon ? "ION" : "DYNAMODB_JSON");
  if (incremental) {
    str("exportType", "INCREMENTAL_EXPORT");
    str("outputView",
        job.view == store::ExportView::kNewImage ? "NEW_IMAGE" : "NEW_AND_OLD_IMAGES");
  }
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

// Writes the whole export `job` (claimed) at a new snapshot.
Status WriteExportFiles(kv::Database& db, store::Catalog& catalog, ExportJob& job,
                        const BackupWorkerOptions& options) {
  SnapshotReader reader(db);
  FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const store::TableInfo> table,
                         reader.FindTable(catalog, store::ScopeOf(job), job.table_name));
  if (!table || table->id != job.table_id) {
    return Failed(ErrorCause::kJobTableNotFound,
                  "the table was deleted before its export was written");
  }
  if (!table->pitr.enabled || table->pitr.epoch != job.epoch) {
    return Failed(ErrorCause::kJobPitrUnavailable,
                  "point-in-time recovery was disabled before the export was written");
  }
  const std::string key_prefix = store::ExportKeyPrefix(job.s3.prefix, job.id);
  Result<fs::path> dir_or = store::S3Path(options.export_root, job.s3.bucket, key_prefix);
  if (!dir_or.ok()) return Failed(ErrorCause::kS3InvalidPath, dir_or.error().message);
  const fs::path dir = *dir_or;
  std::error_code ec;
  fs::remove_all(dir, ec);  // what an earlier attempt left
  fs::create_directories(dir / "data", ec);
  if (ec) {
    return Failed(ErrorCause::kS3AccessDenied,
                  "cannot create " + dir.string() + ": " + ec.message());
  }
  FDYNO_RETURN_IF_ERROR(WriteFileAtomically(dir / "_started", ""));
  FDYNO_ASSIGN_OR_RETURN(Changes changes, ReadChanges(reader, job, options));
  DataFiles files(dir, key_prefix, job.format, options.export_file_items);
  Heartbeat heartbeat(db, job, options);
  job.bytes = 0;
  if (job.type == store::ExportType::kIncremental) {
    FDYNO_RETURN_IF_ERROR(WriteIncrementalExport(reader, *table, changes, job, files, heartbeat));
  } else {
    FDYNO_RETURN_IF_ERROR(WriteFullExport(reader, *table, changes, job, files, heartbeat, options));
  }
  FDYNO_RETURN_IF_ERROR(files.Close(/*last=*/true));
  CountStep(options);
  if (StopRequested(options.stop)) return Error::Internal("stopping");
  FDYNO_RETURN_IF_ERROR(heartbeat.Beat());  // the manifest is written by the owner alone
  job.items = files.items();
  job.end_ms = ClockOf(options)->WallMillis();
  const std::string files_key = key_prefix + "manifest-files.json";
  FDYNO_RETURN_IF_ERROR(WriteFileAtomically(dir / "manifest-files.json", files.manifest()));
  FDYNO_RETURN_IF_ERROR(
      WriteFileAtomically(dir / "manifest-files.checksum", HexLower(Md5Of(files.manifest()))));
  const std::string summary = SummaryJson(job, files_key);
  FDYNO_RETURN_IF_ERROR(WriteFileAtomically(dir / "manifest-summary.json", summary));
  FDYNO_RETURN_IF_ERROR(
      WriteFileAtomically(dir / "manifest-summary.checksum", HexLower(Md5Of(summary))));
  job.manifest = key_prefix + "manifest-summary.json";
  return Status::Ok();
}

// ==== imports ================================================================================

// The bucket's keys under the import's prefix, in key order.
Result<std::vector<std::string>> ListSourceFiles(const ImportJob& job,
                                                 const BackupWorkerOptions& options) {
  FDYNO_ASSIGN_OR_RETURN(fs::path bucket, store::S3Path(options.export_root, job.s3.bucket, ""));
  std::vector<std::string> keys;
  std::error_code ec;
  if (!fs::is_directory(bucket, ec)) return keys;
  for (auto it = fs::recursive_directory_iterator(bucket, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    std::string key = fs::relative(it->path(), bucket, ec).generic_string();
    if (key.starts_with(job.s3.prefix) && !key.ends_with(".tmp")) keys.push_back(std::move(key));
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

// Reads the records of one import file: lines, or CSV records (which may span lines).
class RecordReader {
 public:
  RecordReader(std::unique_ptr<LineReader> lines, bool csv) : lines_(std::move(lines)), csv_(csv) {}
  Result<std::optional<std::string>> Next() {
    FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> line, lines_->Next());
    if (!line || !csv_) return line;
    while (CsvRecordOpen(*line)) {
      FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> more, lines_->Next());
      if (!more) break;
      *line += "\n" + *more;
    }
    return line;
  }

 private:
  std::unique_ptr<LineReader> lines_;
  bool csv_;
};

// Whether `item` has the table's key attributes with their types (non-empty), and fits
// DynamoDB's rules for an item of the table (index key types, size).
bool ValidItem(const store::TableInfo& table, const model::Item& item) {
  for (const model::KeyAttribute& a : table.key_schema.Attributes()) {
    auto it = item.find(a.name);
    if (it == item.end()) return false;
    const model::Type t = it->second.type();
    if (static_cast<int>(t) != static_cast<int>(a.type)) return false;
    if (t == model::Type::kS && std::get<std::string>(it->second.v).empty()) return false;
    if (t == model::Type::kB && std::get<model::Binary>(it->second.v).bytes.empty()) return false;
  }
  return model::CheckItemSize(item).ok() && store::ValidateNewImage(table, item).ok();
}

char CsvDelimiter(const ImportJob& job) {
  return job.csv_delimiter.empty() ? ',' : job.csv_delimiter[0];
}

// The parsed items of one record (none for a CSV header), or an error for a bad record.
Result<std::vector<model::Item>> ParseRecord(const ImportJob& job, const store::TableInfo& table,
                                             std::vector<std::string>& headers,
                                             int64_t record_index, const std::string& record) {
  switch (job.format) {
    case store::ImportFormat::kDynamoDbJson: {
      if (record.empty()) return std::vector<model::Item>();
      FDYNO_ASSIGN_OR_RETURN(model::Item item, ParseDynamoJsonLine(record));
      return std::vector<model::Item>{std::move(item)};
    }
    case store::ImportFormat::kIon:
      return ParseIonLine(record);
    case store::ImportFormat::kCsv: {
      FDYNO_ASSIGN_OR_RETURN(std::vector<std::string> cells,
                             ParseCsvRecord(record, CsvDelimiter(job)));
      if (job.csv_headers.empty() && record_index == 0) {
        headers = std::move(cells);
        return std::vector<model::Item>();
      }
      FDYNO_ASSIGN_OR_RETURN(model::Item item, CsvItem(table, headers, cells));
      return std::vector<model::Item>{std::move(item)};
    }
  }
  return std::vector<model::Item>();
}

// What one batch read from a file.
struct ReadBatch {
  std::map<std::string, model::Item> items;  // by storage key: the last of a key wins
  int64_t records = 0;                       // records consumed (the cursor moves by this)
  int64_t processed = 0, errors = 0, bytes = 0;
  bool file_done = false;
};

Result<ReadBatch> ReadBatchFrom(RecordReader& reader, const ImportJob& job,
                                const store::TableInfo& table, std::vector<std::string>& headers,
                                const BackupWorkerOptions& options) {
  ReadBatch b;
  uint64_t image_bytes = 0;
  while (static_cast<int>(b.items.size()) < options.restore_items &&
         image_bytes < options.restore_bytes) {
    FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> record, reader.Next());
    if (!record) {
      b.file_done = true;
      break;
    }
    const int64_t index = job.next_record + b.records;
    ++b.records;
    b.bytes += static_cast<int64_t>(record->size()) + 1;
    const bool header =
        job.format == store::ImportFormat::kCsv && job.csv_headers.empty() && index == 0;
    if (record->empty()) continue;  // blank lines are no records
    Result<std::vector<model::Item>> items = ParseRecord(job, table, headers, index, *record);
    if (header) continue;
    ++b.processed;
    if (!items.ok()) {
      ++b.errors;
      continue;
    }
    for (model::Item& item : *items) {
      if (!ValidItem(table, item)) {
        ++b.errors;
        continue;
      }
      image_bytes += model::ItemSize(item);
      std::string key = store::ItemStorageKey(table, item);
      b.items.insert_or_assign(std::move(key), std::move(item));
    }
  }
  return b;
}

enum class ImportStep { kMore, kFinished, kGone, kElsewhere };

// Writes one batch and moves the cursor past it (to the next file when `next_file` is set);
// `last` also marks the table ACTIVE and the import COMPLETED. Idempotent: a batch whose cursor
// the record already passed is not written again.
// `recorded` is the cursor as stored before the batch; the batch read `file` from record
// `start`.
Result<ImportStep> WriteImportBatch(kv::Database& db, store::Catalog& catalog,
                                    const ImportJob& recorded, const std::string& file,
                                    int64_t start, const ReadBatch& b,
                                    const std::optional<std::string>& next_file, bool last,
                                    const BackupWorkerOptions& options) {
  return kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<ImportStep> {
    FDYNO_ASSIGN_OR_RETURN(std::optional<ImportJob> job, store::ReadImport(tx, recorded.id));
    if (!job || job->status != JobStatus::kInProgress) return ImportStep::kGone;
    // The fence: this batch commits only while this process holds the import's lease.
    FDYNO_ASSIGN_OR_RETURN(bool held,
                           store::TakeLease(tx, ImportLeaseKey(recorded.id), options.lease));
    if (!held) return ImportStep::kElsewhere;
    if (job->next_file != recorded.next_file || job->next_record != recorded.next_record) {
      return ImportStep::kGone;  // another attempt (1021) or process moved it: start over
    }
    FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const store::TableInfo> table,
                           catalog.Find(tx, store::ScopeOf(*job), job->table_name));
    if (!table || table->id != job->table_id) {
      return Failed(ErrorCause::kJobTableNotFound, "the table being imported was deleted");
    }
    store::Mutation mutation({.now_ms = ClockOf(options)->WallMillis()});
    for (const auto& [key, item] : b.items) {
      FDYNO_ASSIGN_OR_RETURN(store::CurrentItem current,
                             store::ReadCurrent(tx, *table, key, /*decode=*/false));
      mutation.Stage(*table, std::move(current), item);  // checked as it was read
    }
    FDYNO_ASSIGN_OR_RETURN(store::Written written, mutation.Write(tx));
    if (!written.ok()) {
      return Failed(ErrorCause::kImportCollectionTooLarge,
                    "the import would take an item collection past its limit");
    }
    job->processed_items += b.processed;
    job->processed_bytes += b.bytes;
    job->errors += b.errors;
    job->imported_items += static_cast<int64_t>(b.items.size());
    GetExportMetrics().import_items.Add(static_cast<int64_t>(b.items.size()));
    job->next_file = next_file ? *next_file : file;
    job->next_record = next_file ? 0 : start + b.records;
    if (last) {
      store::TableInfo active = *table;
      active.status = store::TableStatus::kActive;
      FDYNO_RETURN_IF_ERROR(catalog.Update(tx, active));
      job->status = JobStatus::kCompleted;
      job->end_ms = ClockOf(options)->WallMillis();
      FDYNO_RETURN_IF_ERROR(store::ReleaseLease(tx, ImportLeaseKey(recorded.id), options.lease));
    }
    store::WriteImport(tx, *job);
    return last ? ImportStep::kFinished : ImportStep::kMore;
  });
}

// Drops the table of an import that cannot finish and marks it FAILED.
Status FailImport(kv::Database& db, store::Catalog& catalog, const std::string& id,
                  const Failure& failure, const BackupWorkerOptions& options) {
  FDYNO_RETURN_IF_ERROR(kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
    FDYNO_ASSIGN_OR_RETURN(std::optional<ImportJob> job, store::ReadImport(tx, id));
    if (!job || job->status != JobStatus::kInProgress) return Status::Ok();
    FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const store::TableInfo> table,
                           catalog.Find(tx, store::ScopeOf(*job), job->table_name));
    if (table && table->id == job->table_id) FDYNO_RETURN_IF_ERROR(catalog.Drop(tx, *table));
    job->status = JobStatus::kFailed;
    job->failure_code = failure.code;
    job->failure_message = failure.message;
    job->end_ms = ClockOf(options)->WallMillis();
    store::WriteImport(tx, *job);
    FDYNO_RETURN_IF_ERROR(store::ReleaseLease(tx, ImportLeaseKey(id), options.lease));
    return Status::Ok();
  }));
  Result<int> purged = catalog.PurgeDropped(db);
  if (!purged.ok()) spdlog::warn("import: data removal deferred: {}", purged.error().message);
  return Status::Ok();
}

Result<std::optional<ImportJob>> LoadImport(kv::Database& db, const std::string& id) {
  kv::RunOptions ro;
  ro.read_only = true;
  return kv::Run(
      db, ro, [&](kv::Transaction& tx, const kv::Attempt&) { return store::ReadImport(tx, id); });
}

// Imports from the cursor to the end. Returns whether it finished.
Result<bool> ImportFiles(kv::Database& db, store::Catalog& catalog, const std::string& id,
                         const BackupWorkerOptions& options, int64_t& imported) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<ImportJob> job, LoadImport(db, id));
  if (!job || job->status != JobStatus::kInProgress) return false;
  FDYNO_ASSIGN_OR_RETURN(std::vector<std::string> files, ListSourceFiles(*job, options));
  if (files.empty()) {
    return Failed(ErrorCause::kS3NoSuchKey,
                  "no file under s3://" + job->s3.bucket + "/" + job->s3.prefix);
  }
  std::shared_ptr<const store::TableInfo> table;
  FDYNO_ASSIGN_OR_RETURN(table, kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) {
                           return catalog.Find(tx, store::ScopeOf(*job), job->table_name);
                         }));
  if (!table || table->id != job->table_id) {
    return Failed(ErrorCause::kJobTableNotFound, "the table being imported was deleted");
  }
  ImportJob recorded = *job;
  auto file = std::lower_bound(files.begin(), files.end(), recorded.next_file);
  if (recorded.next_file.empty()) spdlog::info("import {}: {} files to read", id, files.size());
  for (; file != files.end(); ++file) {
    // The first record of this file not yet imported.
    int64_t start = recorded.next_file == *file ? recorded.next_record : 0;
    // A file whose path leads out of the root (a symbolic link) is never read: the import ends.
    Result<fs::path> path = store::S3Path(options.export_root, job->s3.bucket, *file);
    if (!path.ok()) return Failed(ErrorCause::kS3AccessDenied, path.error().message);
    Result<std::unique_ptr<LineReader>> lines = LineReader::Open(*path, job->compression);
    if (!lines.ok()) return Failed(ErrorCause::kS3NoSuchKey, lines.error().message);
    RecordReader reader(std::move(lines).value(), job->format == store::ImportFormat::kCsv);
    std::vector<std::string> headers = job->csv_headers;
    // Skips what earlier batches imported (a CSV header is read again).
    for (int64_t i = 0; i < start; ++i) {
      Result<std::optional<std::string>> record = reader.Next();
      if (!record.ok()) return Failed(ErrorCause::kInvalidCompression, record.error().message);
      if (i == 0 && headers.empty() && job->format == store::ImportFormat::kCsv && *record) {
        Result<std::vector<std::string>> h = ParseCsvRecord(**record, CsvDelimiter(*job));
        if (h.ok()) headers = std::move(h).value();
      }
    }
    for (bool file_done = false; !file_done;) {
      if (StopRequested(options.stop)) return false;
      ImportJob at = recorded;
      at.next_record = start;
      Result<ReadBatch> batch = ReadBatchFrom(reader, at, *table, headers, options);
      if (!batch.ok()) return Failed(ErrorCause::kInvalidCompression, batch.error().message);
      file_done = batch->file_done;
      const bool last_file = file + 1 == files.end();
      std::optional<std::string> next_file;
      if (file_done && !last_file) next_file = *(file + 1);
      const bool last = file_done && last_file;
      FDYNO_ASSIGN_OR_RETURN(ImportStep step, WriteImportBatch(db, catalog, recorded, *file, start,
                                                               *batch, next_file, last, options));
      if (step == ImportStep::kGone || step == ImportStep::kElsewhere) return false;
      imported += static_cast<int64_t>(batch->items.size());
      CountStep(options);
      if (step == ImportStep::kFinished) return true;
      start += batch->records;
      recorded.next_file = next_file ? *next_file : *file;
      recorded.next_record = next_file ? 0 : start;
    }
  }
  return false;
}

}  // namespace

std::string ImportLeaseKey(const std::string& id) {
  return store::LeaseKey(kv::Tuple().AddString("import").AddString(id));
}

Result<ExportStats> RunExport(kv::Database& db, store::Catalog& catalog, const std::string& id,
                              const BackupWorkerOptions& options) {
  ExportStats stats;
  FDYNO_ASSIGN_OR_RETURN(auto claim, ClaimExport(db, id, options));
  if (claim.first == Claim::kWaiting) ++stats.exports_waiting;
  if (claim.first != Claim::kClaimed) return stats;
  ExportJob job = std::move(claim.second);
  spdlog::info("export {} of table {} started", id, job.table_name);
  GetExportMetrics().exports_running.Add(1);
  Status written = WriteExportFiles(db, catalog, job, options);
  GetExportMetrics().exports_running.Add(-1);
  if (!written.ok() && StopRequested(options.stop)) return stats;  // resumed after the restart
  if (!written.ok() && written.error().cause == ErrorCause::kTakenOver) {
    spdlog::warn("export {}: {}; this process stops", id, written.error().message);
    return stats;
  }
  if (!written.ok() && !FailsTheJob(written.error()) &&
      written.error().cause != ErrorCause::kSnapshotLost && !written.error().is_kv()) {
    written = Failed(ErrorCause::kUnrecoverable, written.error().message);
  }
  if (!written.ok() && written.error().is_kv()) return std::move(written).error();
  if (!written.ok()) {
    const Failure failure = written.error().cause == ErrorCause::kSnapshotLost
                                ? Failure{"UnknownError", "the export's snapshot aged out"}
                                : FailureOf(written.error());
    spdlog::warn("export {} of table {} FAILED: {}", id, job.table_name, failure.message);
    FDYNO_RETURN_IF_ERROR(EndExport(db, job, failure, options));
    ++stats.exports_failed;
    return stats;
  }
  FDYNO_RETURN_IF_ERROR(EndExport(db, job, std::nullopt, options));
  spdlog::info("export {} of table {} COMPLETED: {} items", id, job.table_name, job.items);
  ++stats.exports_completed;
  stats.items += job.items;
  return stats;
}

Result<ExportStats> RunImport(kv::Database& db, store::Catalog& catalog, const std::string& id,
                              const BackupWorkerOptions& options) {
  ExportStats stats;
  int64_t imported = 0;
  Result<bool> done = ImportFiles(db, catalog, id, options, imported);
  stats.items = imported;
  if (!done.ok()) {
    if (!FailsTheJob(done.error())) return std::move(done).error();
    const Failure failure = FailureOf(done.error());
    spdlog::warn("import {} FAILED, its table is dropped: {}", id, failure.message);
    FDYNO_RETURN_IF_ERROR(FailImport(db, catalog, id, failure, options));
    ++stats.imports_failed;
    return stats;
  }
  if (*done) {
    spdlog::info("import {} COMPLETED: {} items written by this process", id, imported);
    ++stats.imports_completed;
  }
  return stats;
}

Result<ExportStats> RunExportPass(kv::Database& db, store::Catalog& catalog,
                                  const BackupWorkerOptions& options) {
  struct Work {
    std::vector<std::string> exports, imports;
  };
  kv::RunOptions ro;
  ro.read_only = true;
  FDYNO_ASSIGN_OR_RETURN(
      Work work, kv::Run(db, ro, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<Work> {
        Work w;
        FDYNO_ASSIGN_OR_RETURN(std::vector<ExportJob> exports, store::ListExportJobs(tx, "", 0));
        for (const ExportJob& e : exports) {
          if (e.status == JobStatus::kInProgress) w.exports.push_back(e.id);
        }
        FDYNO_ASSIGN_OR_RETURN(std::vector<ImportJob> imports, store::ListImportJobs(tx, "", 0));
        for (const ImportJob& i : imports) {
          if (i.status == JobStatus::kInProgress) w.imports.push_back(i.id);
        }
        return w;
      }));
  ExportStats total;
  // Runs each job of one kind; a job that errs is logged and left for the next pass.
  auto run_each = [&](const std::vector<std::string>& ids, const char* kind, auto run) {
    for (const std::string& id : ids) {
      if (StopRequested(options.stop)) return;
      Result<ExportStats> r = run(db, catalog, id, options);
      if (!r.ok()) {
        spdlog::warn("{} {}: {}", kind, id, r.error().message);
        continue;
      }
      total.exports_completed += r->exports_completed;
      total.exports_failed += r->exports_failed;
      total.exports_waiting += r->exports_waiting;
      total.imports_completed += r->imports_completed;
      total.imports_failed += r->imports_failed;
      total.items += r->items;
    }
  };
  run_each(work.exports, "export", RunExport);
  run_each(work.imports, "import", RunImport);
  return total;
}

}  // namespace fdyno::workers
