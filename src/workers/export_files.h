// The files of DynamoDB's table export layout and of ImportTable's inputs: item lines in
// DynamoDB JSON ({"Item":{...}}) and Amazon Ion text ($ion_1_0 {Item:{...}}), CSV records, and
// the compressed files that hold them (gzip through zlib, zstd through libzstd). Format:
// docs/format/exports.md.
//
// Ion: Debian ships no Ion library, so this holds a small Ion text writer and reader of the
// subset DynamoDB's exports use (structs, lists, strings, symbols, decimals, ints, floats, blobs,
// bools, nulls, annotations, comments); clobs, long strings and binary Ion are not read
// (ValidationException-like errors: the line counts as an error).
//
// Thread-safety: values and pure functions; a reader or writer is used by one thread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "model/attribute_value.h"
#include "store/catalog.h"
#include "store/exports.h"

namespace fdyno::workers {

// ---- items as lines -------------------------------------------------------------------------

// {"Item":{...}} (DynamoDB JSON, as DynamoDB's DYNAMODB_JSON export writes it), no newline.
std::string DynamoJsonLine(const model::Item& item);
// $ion_1_0 {Item:{...}} (as DynamoDB's ION export writes it), no newline.
std::string IonLine(const model::Item& item);
// An incremental export's line: {"Metadata":{"WriteTimestampMicros":{"N":".."}},"Keys":{..},
// "NewImage":{..},"OldImage":{..}} (images only when given), in DynamoDB JSON or Ion.
std::string IncrementalLine(store::ExportFormat format, int64_t write_micros,
                            const model::Item& keys, const model::Item* new_image,
                            const model::Item* old_image);

// The item of one DynamoDB JSON line ({"Item":{...}}), or an error naming what is wrong.
Result<model::Item> ParseDynamoJsonLine(std::string_view line);
// The items of one line of Ion text: every top-level {Item:{...}} on it ($ion_1_0 markers and
// comments are skipped). An error when the line is not such Ion.
Result<std::vector<model::Item>> ParseIonLine(std::string_view line);

// Ion text of one value (exposed for tests).
std::string IonText(const model::AttributeValue& value);

// ---- CSV ------------------------------------------------------------------------------------

// The fields of one CSV record (RFC 4180 quoting with '"'; `delimiter` between fields). An error
// when a quoted field is not closed or a quote is followed by something else.
Result<std::vector<std::string>> ParseCsvRecord(std::string_view record, char delimiter);
// Whether `text` (a record so far) ends inside a quoted field, so the record goes on after the
// newline.
bool CsvRecordOpen(std::string_view text);
// The item of one CSV record (not the header) under `headers`, as ImportTable reads it: cells of
// key attributes of types N and B (the table's AttributeDefinitions) are typed, every other
// non-empty cell is a string; an empty cell is no attribute.
Result<model::Item> CsvItem(const store::TableInfo& table, const std::vector<std::string>& headers,
                            const std::vector<std::string>& cells);

// ---- compressed files -----------------------------------------------------------------------

// Reads a file's lines, decompressing it as `compression` says. Lines end at '\n' (a "\r\n"
// ending loses its '\r'); the last line may lack it.
class LineReader {
 public:
  static Result<std::unique_ptr<LineReader>> Open(const std::filesystem::path& path,
                                                  store::Compression compression);
  virtual ~LineReader() = default;
  // The next line; nullopt at the end. An error for a file that does not decompress.
  virtual Result<std::optional<std::string>> Next() = 0;
  // Bytes of the file read so far (compressed).
  virtual int64_t file_bytes() const = 0;
};

// Writes a gzip file (multi-part writes are one gzip member), and the S3 object checksums of
// what it wrote.
class GzipFileWriter {
 public:
  static Result<std::unique_ptr<GzipFileWriter>> Create(const std::filesystem::path& path);
  ~GzipFileWriter();
  Status Append(std::string_view data);
  // Ends the gzip stream, syncs and closes the file.
  Status Finish();
  // After Finish: the MD5 of the file's bytes, base64 (md5Checksum) and hex (etag).
  std::string md5_base64() const;
  std::string md5_hex() const;

 private:
  struct State;
  explicit GzipFileWriter(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// Writes `text` to `path` through a temporary file and a rename, synced: the file is either
// absent or whole.
Status WriteFileAtomically(const std::filesystem::path& path, std::string_view text);

}  // namespace fdyno::workers
