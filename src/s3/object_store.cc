#include "s3/object_store.h"

#include <fcntl.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>

#include "base/hex.h"
#include "base/md5.h"
#include "store/exports.h"

namespace fdyno::s3 {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kMetaSuffix = ".fdyno-meta";
constexpr int kSidecarVersion = 1;  // docs/format/s3.md
constexpr std::string_view kDefaultContentType = "binary/octet-stream";
constexpr size_t kMaxKeyBytes = 1024;
constexpr size_t kMaxSegmentBytes = 255;

std::string RandomHex(size_t bytes) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string raw;
  while (raw.size() < bytes) {
    const uint64_t v = rng();
    raw.append(reinterpret_cast<const char*>(&v), std::min<size_t>(8, bytes - raw.size()));
  }
  return HexLower(raw);
}

S3Error FileError(std::string_view what, const fs::path& path) {
  return Internal(std::string(what) + " " + path.string() + ": " + std::strerror(errno));
}

// Writes `data` to a new file and syncs it.
S3Result<Done> WriteSynced(const fs::path& path, std::string_view data) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return FileError("cannot create", path);
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      S3Error e = FileError("cannot write", path);
      ::close(fd);
      return e;
    }
    done += static_cast<size_t>(n);
  }
  if (::fdatasync(fd) != 0) {
    S3Error e = FileError("cannot sync", path);
    ::close(fd);
    return e;
  }
  ::close(fd);
  return Done{};
}

void SyncDirectory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

struct FileStat {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
};

std::optional<FileStat> StatFile(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return FileStat{static_cast<uint64_t>(st.st_size),
                  static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
}

std::optional<std::string> ReadWhole(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  return std::move(out).str();
}

// The MD5 of a file, read in pieces; nullopt when it cannot be read.
std::optional<std::string> FileMd5(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  Md5 md5;
  std::string buffer(1 << 16, '\0');
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    md5.Add(std::string_view(buffer.data(), static_cast<size_t>(in.gcount())));
  }
  return md5.Raw();
}

// The sidecar of an object: what S3 keeps beside its bytes, valid while the file is the one it
// was written for (same size and modification time).
struct Sidecar {
  FileStat file;
  std::string etag;
  std::string content_type;
  std::vector<std::pair<std::string, std::string>> metadata;
};

std::string EncodeSidecar(const Sidecar& s) {
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  auto str = [&](std::string_view v) {
    w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
  };
  w.StartObject();
  w.Key("version");
  w.Int(kSidecarVersion);
  w.Key("size");
  w.Uint64(s.file.size);
  w.Key("mtime_ns");
  w.Int64(s.file.mtime_ns);
  w.Key("etag");
  str(s.etag);
  w.Key("content_type");
  str(s.content_type);
  w.Key("metadata");
  w.StartArray();
  for (const auto& [name, value] : s.metadata) {
    w.StartArray();
    str(name);
    str(value);
    w.EndArray();
  }
  w.EndArray();
  w.EndObject();
  return out.GetString();
}

std::optional<Sidecar> DecodeSidecar(std::string_view text) {
  rapidjson::Document d;
  d.Parse(text.data(), text.size());
  if (d.HasParseError() || !d.IsObject()) return std::nullopt;
  const rapidjson::Value& v = d;
  auto member = [&](const char* name) -> const rapidjson::Value* {
    auto it = v.FindMember(name);
    return it == v.MemberEnd() ? nullptr : &it->value;
  };
  const rapidjson::Value* version = member("version");
  if (version == nullptr || !version->IsInt() || version->GetInt() != kSidecarVersion) {
    return std::nullopt;  // another format: not believed (the object's bytes still are)
  }
  const rapidjson::Value* size = member("size");
  const rapidjson::Value* mtime = member("mtime_ns");
  const rapidjson::Value* etag = member("etag");
  const rapidjson::Value* type = member("content_type");
  const rapidjson::Value* meta = member("metadata");
  if (!size || !size->IsUint64() || !mtime || !mtime->IsInt64() || !etag || !etag->IsString() ||
      !type || !type->IsString() || !meta || !meta->IsArray()) {
    return std::nullopt;
  }
  Sidecar s{{size->GetUint64(), mtime->GetInt64()}, etag->GetString(), type->GetString(), {}};
  for (const rapidjson::Value& pair : meta->GetArray()) {
    if (!pair.IsArray() || pair.Size() != 2 || !pair[0].IsString() || !pair[1].IsString()) {
      return std::nullopt;
    }
    s.metadata.emplace_back(pair[0].GetString(), pair[1].GetString());
  }
  return s;
}

// Whether `key` can be a file's path under a bucket (see the header).
bool KeyIsAFile(std::string_view key) {
  if (key.empty() || key.size() > kMaxKeyBytes || key.ends_with('/') ||
      key.find('\0') != std::string_view::npos) {
    return false;
  }
  size_t at = 0;
  while (at <= key.size()) {
    const size_t slash = std::min(key.find('/', at), key.size());
    std::string_view part = key.substr(at, slash - at);
    if (part.empty() || part == "." || part == ".." || part.size() > kMaxSegmentBytes) return false;
    at = slash + 1;
  }
  return true;
}

int64_t MillisOf(int64_t ns) { return ns / 1'000'000; }

// What an upload's "target" file holds: the bucket and the key it writes.
std::string UploadTarget(std::string_view bucket, std::string_view key) {
  return std::string(bucket) + "\n" + std::string(key);
}

}  // namespace

ObjectStore::ObjectStore(fs::path root) : root_(std::move(root)), own_(root_ / ".fdyno-s3") {}

bool ObjectStore::ValidBucketName(std::string_view name) {
  if (name.size() < 3 || name.size() > 63) return false;
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!alnum(name.front()) || !alnum(name.back())) return false;
  for (char c : name) {
    if (!alnum(c) && c != '.' && c != '-') return false;
  }
  if (name.find("..") != std::string_view::npos) return false;
  int dots = 0;
  bool digits_and_dots = true;
  for (char c : name) {
    dots += c == '.';
    digits_and_dots = digits_and_dots && (c == '.' || (c >= '0' && c <= '9'));
  }
  return !(digits_and_dots && dots == 3);  // 192.168.5.4
}

S3Result<fs::path> ObjectStore::BucketDir(std::string_view bucket) const {
  if (bucket.starts_with('.')) return NoSuchBucket(std::string(bucket));
  Result<fs::path> dir = store::S3Path(root_, bucket, "");
  if (!dir.ok()) return InvalidBucketName(std::string(bucket));
  std::error_code ec;
  if (!fs::is_directory(*dir, ec)) return NoSuchBucket(std::string(bucket));
  return *dir;
}

S3Result<fs::path> ObjectStore::ObjectPath(std::string_view bucket, std::string_view key,
                                           bool for_write) const {
  S3Result<fs::path> dir = BucketDir(bucket);
  if (!dir.ok()) return std::move(dir).error();
  if (!KeyIsAFile(key)) {
    if (!for_write) return NoSuchKey(std::string(key));
    return InvalidArgument(
        "fdyno keeps S3 objects as files under --export-root: a key must not be empty, end with "
        "'/', or have an empty, '.' or '..' segment or one over 255 bytes");
  }
  Result<fs::path> path = store::S3Path(root_, bucket, key);
  if (!path.ok()) return InvalidArgument("the key would leave the export root");
  return *path;
}

fs::path ObjectStore::MetaPath(std::string_view bucket, std::string_view key) const {
  return own_ / "meta" / std::string(bucket) / (std::string(key) + std::string(kMetaSuffix));
}

fs::path ObjectStore::UploadDir(std::string_view upload_id) const {
  return own_ / "uploads" / std::string(upload_id);
}

fs::path ObjectStore::TempPath() const { return own_ / "tmp" / RandomHex(12); }

S3Result<std::vector<BucketInfo>> ObjectStore::ListBuckets() const {
  std::vector<BucketInfo> out;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(root_, ec)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with('.') || !e.is_directory(ec)) continue;
    struct stat st {};
    int64_t created = 0;
    if (::stat(e.path().c_str(), &st) == 0) created = int64_t{st.st_mtim.tv_sec} * 1000;
    out.push_back({name, created});
  }
  std::sort(out.begin(), out.end(),
            [](const BucketInfo& a, const BucketInfo& b) { return a.name < b.name; });
  return out;
}

S3Result<bool> ObjectStore::CreateBucket(std::string_view bucket) const {
  if (!ValidBucketName(bucket)) return InvalidBucketName(std::string(bucket));
  Result<fs::path> dir = store::S3Path(root_, bucket, "");
  if (!dir.ok()) return InvalidBucketName(std::string(bucket));
  std::error_code ec;
  fs::create_directories(root_, ec);
  const bool created = fs::create_directory(*dir, ec);
  if (ec) return FileError("cannot create", *dir);
  if (created) SyncDirectory(root_);
  return created;
}

S3Result<Done> ObjectStore::HeadBucket(std::string_view bucket) const {
  S3Result<fs::path> dir = BucketDir(bucket);
  if (!dir.ok()) return std::move(dir).error();
  return Done{};
}

S3Result<Done> ObjectStore::DeleteBucket(std::string_view bucket) const {
  S3Result<fs::path> dir = BucketDir(bucket);
  if (!dir.ok()) return std::move(dir).error();
  std::error_code ec;
  if (!fs::is_empty(*dir, ec)) {
    return S3Error{409, "BucketNotEmpty", "The bucket you tried to delete is not empty"}.With(
        "BucketName", std::string(bucket));
  }
  fs::remove(*dir, ec);
  fs::remove_all(own_ / "meta" / std::string(bucket), ec);
  SyncDirectory(root_);
  return Done{};
}

S3Result<ObjectInfo> ObjectStore::Publish(std::string_view bucket, std::string_view key,
                                          const fs::path& temp, const fs::path& to,
                                          std::string etag, const ObjectAttributes& attributes) {
  std::error_code ec;
  fs::create_directories(to.parent_path(), ec);
  if (ec || fs::is_directory(to, ec)) {
    fs::remove(temp, ec);
    return InvalidArgument(
        "fdyno keeps S3 objects as files: this key needs a folder where an object is, or is "
        "the folder of other objects");
  }
  if (::rename(temp.c_str(), to.c_str()) != 0) {
    S3Error e = FileError("cannot rename into", to);
    fs::remove(temp, ec);
    return e;
  }
  SyncDirectory(to.parent_path());
  const std::optional<FileStat> st = StatFile(to);
  if (!st) return FileError("cannot stat", to);
  Sidecar sidecar{
      *st, etag,
      attributes.content_type.empty() ? std::string(kDefaultContentType) : attributes.content_type,
      attributes.metadata};
  const fs::path meta = MetaPath(bucket, key);
  fs::create_directories(meta.parent_path(), ec);
  const fs::path meta_temp = TempPath();
  if (WriteSynced(meta_temp, EncodeSidecar(sidecar)).ok()) fs::rename(meta_temp, meta, ec);
  return ObjectInfo{std::string(key),     st->size,        MillisOf(st->mtime_ns), std::move(etag),
                    sidecar.content_type, sidecar.metadata};
}

S3Result<ObjectInfo> ObjectStore::Put(std::string_view bucket, std::string_view key,
                                      std::string_view body, const ObjectAttributes& attributes) {
  S3Result<fs::path> path = ObjectPath(bucket, key, /*for_write=*/true);
  if (!path.ok()) return std::move(path).error();
  std::error_code ec;
  fs::create_directories(own_ / "tmp", ec);
  const fs::path temp = TempPath();
  if (S3Result<Done> w = WriteSynced(temp, body); !w.ok()) return std::move(w).error();
  Md5 md5;
  md5.Add(body);
  return Publish(bucket, key, temp, *path, HexLower(md5.Raw()), attributes);
}

ObjectInfo ObjectStore::Describe(std::string_view bucket, std::string key, const fs::path& file) {
  const std::optional<FileStat> st = StatFile(file);
  ObjectInfo info{std::move(key),
                  st ? st->size : 0,
                  st ? MillisOf(st->mtime_ns) : 0,
                  "",
                  std::string(kDefaultContentType),
                  {}};
  if (!st) return info;
  if (std::optional<std::string> text = ReadWhole(MetaPath(bucket, info.key))) {
    std::optional<Sidecar> s = DecodeSidecar(*text);
    if (s && s->file.size == st->size && s->file.mtime_ns == st->mtime_ns) {
      info.etag = s->etag;
      info.content_type = s->content_type;
      info.metadata = s->metadata;
      return info;
    }
  }
  // A file written outside the S3 API (an export, by hand): its ETag is its MD5, computed once
  // per version of the file.
  std::lock_guard<std::mutex> lock(mu_);
  auto it = etags_.find(file.string());
  if (it != etags_.end() && it->second.size == st->size && it->second.mtime_ns == st->mtime_ns) {
    info.etag = it->second.etag;
    return info;
  }
  if (std::optional<std::string> md5 = FileMd5(file)) {
    info.etag = HexLower(*md5);
    etags_[file.string()] = {st->size, st->mtime_ns, info.etag};
  }
  return info;
}

S3Result<ObjectInfo> ObjectStore::Head(std::string_view bucket, std::string_view key) {
  S3Result<fs::path> path = ObjectPath(bucket, key, /*for_write=*/false);
  if (!path.ok()) return std::move(path).error();
  if (!StatFile(*path)) return NoSuchKey(std::string(key));
  return Describe(bucket, std::string(key), *path);
}

S3Result<std::string> ObjectStore::Read(std::string_view bucket, std::string_view key,
                                        uint64_t offset, uint64_t length) const {
  S3Result<fs::path> path = ObjectPath(bucket, key, /*for_write=*/false);
  if (!path.ok()) return std::move(path).error();
  std::ifstream in(*path, std::ios::binary);
  if (!in) return NoSuchKey(std::string(key));
  std::string out(length, '\0');
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(out.data(), static_cast<std::streamsize>(length));
  out.resize(static_cast<size_t>(in.gcount()));
  return out;
}

S3Result<Done> ObjectStore::Delete(std::string_view bucket, std::string_view key) const {
  S3Result<fs::path> path = ObjectPath(bucket, key, /*for_write=*/false);
  if (!path.ok() && path.error().code != "NoSuchKey") return std::move(path).error();
  if (!path.ok()) return Done{};
  std::error_code ec;
  if (!StatFile(*path)) return Done{};  // a folder is no object
  fs::remove(*path, ec);
  fs::remove(MetaPath(bucket, key), ec);
  // Folders left empty go too: S3 has none.
  const fs::path bucket_dir = root_ / std::string(bucket);
  for (fs::path dir = path->parent_path(); dir != bucket_dir && dir.has_parent_path();
       dir = dir.parent_path()) {
    if (!fs::is_empty(dir, ec) || ec) break;
    fs::remove(dir, ec);
  }
  fs::path synced = path->parent_path();
  while (synced != bucket_dir && !fs::exists(synced, ec)) synced = synced.parent_path();
  SyncDirectory(synced);
  return Done{};
}

S3Result<ListPage> ObjectStore::List(std::string_view bucket, const ListRequest& request) {
  S3Result<fs::path> dir = BucketDir(bucket);
  if (!dir.ok()) return std::move(dir).error();
  // Start the walk at the deepest folder the prefix names whole.
  fs::path start = *dir;
  const size_t last_slash = request.prefix.rfind('/');
  if (last_slash != std::string::npos) {
    Result<fs::path> sub = store::S3Path(root_, bucket, request.prefix.substr(0, last_slash));
    if (!sub.ok()) return ListPage{};
    start = *sub;
  }
  std::vector<std::pair<std::string, fs::path>> files;
  std::error_code ec;
  if (fs::is_directory(start, ec)) {
    for (fs::recursive_directory_iterator it(start, ec), end; !ec && it != end; it.increment(ec)) {
      if (!it->is_regular_file(ec)) continue;
      std::string key = it->path().lexically_relative(*dir).generic_string();
      if (key.starts_with(request.prefix)) files.emplace_back(std::move(key), it->path());
    }
  }
  std::sort(files.begin(), files.end());
  ListPage page;
  const bool after_a_prefix =
      !request.delimiter.empty() && request.after.ends_with(request.delimiter);
  for (auto& [key, path] : files) {
    if (!request.after.empty() &&
        (key <= request.after || (after_a_prefix && key.starts_with(request.after)))) {
      continue;
    }
    std::string common;
    if (!request.delimiter.empty()) {
      const size_t at = key.find(request.delimiter, request.prefix.size());
      if (at != std::string::npos) common = key.substr(0, at + request.delimiter.size());
    }
    if (!common.empty() && !page.common_prefixes.empty() && page.common_prefixes.back() == common) {
      continue;
    }
    if (page.objects.size() + page.common_prefixes.size() >= request.max_keys) {
      page.truncated = true;
      break;
    }
    if (!common.empty()) {
      page.common_prefixes.push_back(common);
      page.last = common;
    } else {
      page.last = key;
      page.objects.push_back(Describe(bucket, key, path));
    }
  }
  return page;
}

S3Result<std::string> ObjectStore::CreateUpload(std::string_view bucket, std::string_view key,
                                                const ObjectAttributes& attributes) const {
  S3Result<fs::path> path = ObjectPath(bucket, key, /*for_write=*/true);
  if (!path.ok()) return std::move(path).error();
  const std::string id = RandomHex(24);
  const fs::path dir = UploadDir(id);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return FileError("cannot create", dir);
  // The upload's target, and the attributes its object gets (a sidecar without a file yet).
  const Sidecar pending{
      {},
      "",
      attributes.content_type.empty() ? std::string(kDefaultContentType) : attributes.content_type,
      attributes.metadata};
  for (const auto& [name, text] :
       {std::pair<const char*, std::string>{"target", UploadTarget(bucket, key)},
        {"attributes", EncodeSidecar(pending)}}) {
    if (S3Result<Done> w = WriteSynced(dir / name, text); !w.ok()) return std::move(w).error();
  }
  return id;
}

S3Result<fs::path> ObjectStore::CheckUpload(std::string_view bucket, std::string_view key,
                                            std::string_view upload_id) const {
  if (upload_id.empty() || upload_id.size() > 64 ||
      upload_id.find_first_not_of("0123456789abcdef") != std::string_view::npos) {
    return NoSuchUpload(std::string(upload_id));
  }
  const fs::path dir = UploadDir(upload_id);
  if (ReadWhole(dir / "target") != UploadTarget(bucket, key)) {
    return NoSuchUpload(std::string(upload_id));
  }
  return dir;
}

S3Result<std::string> ObjectStore::UploadPart(std::string_view bucket, std::string_view key,
                                              std::string_view upload_id, int part,
                                              std::string_view body) const {
  if (part < 1 || part > 10000) {
    return InvalidArgument("Part number must be an integer between 1 and 10000, inclusive")
        .With("ArgumentName", "partNumber")
        .With("ArgumentValue", std::to_string(part));
  }
  S3Result<fs::path> dir = CheckUpload(bucket, key, upload_id);
  if (!dir.ok()) return std::move(dir).error();
  const fs::path temp = *dir / ("part-" + std::to_string(part) + ".writing-" + RandomHex(6));
  if (S3Result<Done> w = WriteSynced(temp, body); !w.ok()) return std::move(w).error();
  std::error_code ec;
  fs::rename(temp, *dir / ("part-" + std::to_string(part)), ec);
  if (ec) return FileError("cannot rename", temp);
  Md5 md5;
  md5.Add(body);
  return HexLower(md5.Raw());
}

S3Result<ObjectInfo> ObjectStore::CompleteUpload(
    std::string_view bucket, std::string_view key, std::string_view upload_id,
    const std::vector<std::pair<int, std::string>>& parts) {
  S3Result<fs::path> dir = CheckUpload(bucket, key, upload_id);
  if (!dir.ok()) return std::move(dir).error();
  S3Result<fs::path> to = ObjectPath(bucket, key, /*for_write=*/true);
  if (!to.ok()) return std::move(to).error();
  if (parts.empty()) {
    return MalformedXml();  // S3: "The XML you provided was not well-formed ..."
  }
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].first <= parts[i - 1].first) {
      return S3Error{400, "InvalidPartOrder",
                     "The list of parts was not in ascending order. Parts must be ordered by "
                     "part number."};
    }
  }
  const S3Error invalid_part{400, "InvalidPart",
                             "One or more of the specified parts could not be found.  The part "
                             "may not have been uploaded, or the specified entity tag may not "
                             "match the part's entity tag."};
  std::error_code ec;
  fs::create_directories(own_ / "tmp", ec);
  const fs::path temp = TempPath();
  std::ofstream out(temp, std::ios::binary | std::ios::trunc);
  std::string digests;
  for (size_t i = 0; i < parts.size(); ++i) {
    const fs::path part = *dir / ("part-" + std::to_string(parts[i].first));
    std::optional<std::string> bytes = ReadWhole(part);
    std::string want = parts[i].second;
    want.erase(std::remove(want.begin(), want.end(), '"'), want.end());
    Md5 md5;
    if (bytes) md5.Add(*bytes);
    const std::string raw = bytes ? md5.Raw() : std::string();
    if (!bytes || HexLower(raw) != want) {
      out.close();
      fs::remove(temp, ec);
      return S3Error(invalid_part);
    }
    if (i + 1 < parts.size() && bytes->size() < kMinPartBytes) {
      out.close();
      fs::remove(temp, ec);
      return S3Error{400, "EntityTooSmall",
                     "Your proposed upload is smaller than the minimum allowed object size."}
          .With("PartNumber", std::to_string(parts[i].first));
    }
    digests += raw;
    out.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
  }
  out.close();
  if (!out) return FileError("cannot write", temp);
  {
    const int fd = ::open(temp.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      ::fdatasync(fd);
      ::close(fd);
    }
  }
  Md5 of_digests;
  of_digests.Add(digests);
  std::optional<std::string> text = ReadWhole(*dir / "attributes");
  std::optional<Sidecar> upload = text ? DecodeSidecar(*text) : std::nullopt;
  ObjectAttributes attributes;
  if (upload) attributes = {upload->content_type, upload->metadata};
  S3Result<ObjectInfo> info =
      Publish(bucket, key, temp, *to,
              HexLower(of_digests.Raw()) + "-" + std::to_string(parts.size()), attributes);
  if (info.ok()) fs::remove_all(*dir, ec);
  return info;
}

S3Result<Done> ObjectStore::AbortUpload(std::string_view bucket, std::string_view key,
                                        std::string_view upload_id) const {
  S3Result<fs::path> dir = CheckUpload(bucket, key, upload_id);
  if (!dir.ok()) return std::move(dir).error();
  std::error_code ec;
  fs::remove_all(*dir, ec);
  return Done{};
}

}  // namespace fdyno::s3
