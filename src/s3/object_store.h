// Buckets and objects of the S3 REST API kept as directories and files under fdyno's export
// root (--export-root), the same directory ExportTableToPointInTime writes to and ImportTable
// reads from: bucket B is the directory <root>/B and object K of B the file <root>/B/K, so an
// export's files are objects, and objects are what an import reads (store::S3Path maps both).
//
// What a file system cannot hold of S3 is fdyno's own, under <root>/.fdyno-s3/ (no bucket name
// begins with a dot): each object's ETag, Content-Type and user metadata (a sidecar written
// after the object, checked against the file's size and modification time, so a file written
// by an export or by hand gets an ETag computed from its bytes), uploads in progress, and
// objects being written. An object appears whole or not at all (written aside, synced, then
// renamed into place, then its directory synced): an acknowledged PUT survives a crash.
//
// Because keys are paths, a key must name a file: it is not empty, does not end with '/', has
// no empty, "." or ".." segment, and no segment over 255 bytes (InvalidArgument otherwise); and
// an object cannot be both a file and the folder of another key ("a" and "a/b").
//
// Thread-safety: every method may run on any thread at once; writes of one key race as on S3
// (the last rename wins).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "s3/errors.h"

namespace fdyno::s3 {

struct ObjectInfo {
  std::string key;
  uint64_t size = 0;
  int64_t modified_ms = 0;  // milliseconds since the epoch
  std::string etag;         // without quotes: 32 hex digits, or "<hex>-<parts>" (multipart)
  std::string content_type;
  // User metadata (x-amz-meta-<name>: value), names in lower case without the prefix.
  std::vector<std::pair<std::string, std::string>> metadata;
};

struct BucketInfo {
  std::string name;
  int64_t created_ms = 0;
};

// What a PUT (or an upload's start) says of the object besides its bytes.
struct ObjectAttributes {
  std::string content_type;  // empty: binary/octet-stream
  std::vector<std::pair<std::string, std::string>> metadata;
};

struct ListRequest {
  std::string prefix;
  std::string delimiter;
  std::string after;  // keys (and common prefixes) after this one; empty: from the first
  size_t max_keys = 1000;
};

struct ListPage {
  std::vector<ObjectInfo> objects;           // in key order
  std::vector<std::string> common_prefixes;  // in order
  bool truncated = false;
  std::string last;  // the last key or common prefix returned: where the next page starts
};

// The smallest part of a multipart upload but the last (S3's 5 MiB).
inline constexpr uint64_t kMinPartBytes = 5ull * 1024 * 1024;

class ObjectStore {
 public:
  explicit ObjectStore(std::filesystem::path root);

  S3Result<std::vector<BucketInfo>> ListBuckets() const;
  // True when created, false when it existed already.
  S3Result<bool> CreateBucket(std::string_view bucket) const;
  S3Result<Done> HeadBucket(std::string_view bucket) const;
  S3Result<Done> DeleteBucket(std::string_view bucket) const;

  S3Result<ObjectInfo> Put(std::string_view bucket, std::string_view key, std::string_view body,
                           const ObjectAttributes& attributes);
  S3Result<ObjectInfo> Head(std::string_view bucket, std::string_view key);
  // `length` bytes from `offset` (the caller checked the range against Head's size).
  S3Result<std::string> Read(std::string_view bucket, std::string_view key, uint64_t offset,
                             uint64_t length) const;
  // Deleting a key that does not exist succeeds, as on S3.
  S3Result<Done> Delete(std::string_view bucket, std::string_view key) const;
  S3Result<ListPage> List(std::string_view bucket, const ListRequest& request);

  // Multipart uploads: an upload id, then parts (each answers its ETag), then the object.
  S3Result<std::string> CreateUpload(std::string_view bucket, std::string_view key,
                                     const ObjectAttributes& attributes) const;
  S3Result<std::string> UploadPart(std::string_view bucket, std::string_view key,
                                   std::string_view upload_id, int part,
                                   std::string_view body) const;
  // `parts`: (part number, ETag as the client lists it, quotes allowed), ascending.
  S3Result<ObjectInfo> CompleteUpload(std::string_view bucket, std::string_view key,
                                      std::string_view upload_id,
                                      const std::vector<std::pair<int, std::string>>& parts);
  S3Result<Done> AbortUpload(std::string_view bucket, std::string_view key,
                             std::string_view upload_id) const;

  // S3's rules for a new bucket's name: 3 to 63 characters of a-z, 0-9, '.' and '-', beginning
  // and ending with a letter or digit, no "..", not an IPv4 address.
  static bool ValidBucketName(std::string_view name);

 private:
  S3Result<std::filesystem::path> BucketDir(std::string_view bucket) const;
  S3Result<std::filesystem::path> ObjectPath(std::string_view bucket, std::string_view key,
                                             bool for_write) const;
  std::filesystem::path MetaPath(std::string_view bucket, std::string_view key) const;
  std::filesystem::path UploadDir(std::string_view upload_id) const;
  S3Result<std::filesystem::path> CheckUpload(std::string_view bucket, std::string_view key,
                                              std::string_view upload_id) const;
  // Moves a written temporary file into place as the object, then records its sidecar.
  S3Result<ObjectInfo> Publish(std::string_view bucket, std::string_view key,
                               const std::filesystem::path& temp, const std::filesystem::path& to,
                               std::string etag, const ObjectAttributes& attributes);
  ObjectInfo Describe(std::string_view bucket, std::string key, const std::filesystem::path& file);
  std::filesystem::path TempPath() const;

  std::filesystem::path root_;
  std::filesystem::path own_;  // <root>/.fdyno-s3
  std::mutex mu_;              // guards etags_
  struct CachedEtag {
    uint64_t size = 0;
    int64_t mtime_ns = 0;
    std::string etag;
  };
  std::map<std::string, CachedEtag, std::less<>> etags_;  // files without a valid sidecar
};

}  // namespace fdyno::s3
