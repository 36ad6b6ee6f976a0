#include "s3/service.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <ctime>
#include <set>

#include "base/hex.h"
#include "base/md5.h"
#include "base/time_text.h"
#include "model/base64.h"
#include "s3/xml.h"

namespace fdyno::s3 {

namespace {

// Query parameters that select an operation or shape its answer; any other name but these and
// the presigned form's X-Amz-* is a subresource this service does not implement.
const std::set<std::string_view>& KnownParameters() {
  static const std::set<std::string_view> kKnown = {
      "list-type",   "prefix",        "delimiter",   "max-keys", "continuation-token",
      "start-after", "encoding-type", "fetch-owner", "marker",   "uploadId",
      "partNumber",  "uploads",       "delete",      "location", "x-id"};
  return kKnown;
}

std::optional<std::string> Unsupported(const S3Request& r) {
  for (const auto& [name, value] : r.query) {
    if (name.starts_with("X-Amz-") || name.starts_with("response-")) continue;
    if (!KnownParameters().contains(name)) return "the subresource or parameter '" + name + "'";
  }
  return std::nullopt;
}

std::string Quoted(std::string_view etag) { return "\"" + std::string(etag) + "\""; }

void AddHeader(S3Response& out, std::string_view name, std::string_view value) {
  out.headers.append(name).append(": ").append(value).append("\r\n");
}

// S3's encoding-type=url: every byte but unreserved ones and '/' as %XX, a space as '+'.
std::string UrlEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '/') {
      out.push_back(static_cast<char>(c));
    } else if (c == ' ') {
      out.push_back('+');
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::optional<int64_t> ParseInt(std::string_view s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// The x-amz-meta-* headers of a PUT, and its Content-Type.
ObjectAttributes AttributesOf(const S3Request& r) {
  ObjectAttributes a;
  if (const std::string* type = r.Header("content-type")) a.content_type = *type;
  for (const auto& [name, value] : r.headers) {
    if (name.starts_with("x-amz-meta-")) a.metadata.emplace_back(name.substr(11), value);
  }
  return a;
}

// Content-MD5, when sent, must be the body's.
std::optional<S3Error> CheckContentMd5(const S3Request& r) {
  const std::string* sent = r.Header("content-md5");
  if (sent == nullptr) return std::nullopt;
  std::optional<std::string> want = model::Base64Decode(*sent);
  if (!want || want->size() != 16) {
    return S3Error{400, "InvalidDigest", "The Content-MD5 you specified was invalid."};
  }
  if (Md5Of(r.body) != *want) {
    return S3Error{400, "BadDigest",
                   "The Content-MD5 you specified did not match what we received."};
  }
  return std::nullopt;
}

void AddObjectHeaders(S3Response& out, const ObjectInfo& info) {
  out.content_type = info.content_type;
  AddHeader(out, "ETag", Quoted(info.etag));
  AddHeader(out, "Last-Modified", HttpDateText(info.modified_ms / 1000));
  AddHeader(out, "Accept-Ranges", "bytes");
  for (const auto& [name, value] : info.metadata) AddHeader(out, "x-amz-meta-" + name, value);
}

// A Range header's bytes of an object of `size` bytes: nullopt for the whole object (no range,
// or one S3 ignores: not "bytes=", several ranges, malformed); an error when unsatisfiable.
S3Result<std::optional<std::pair<uint64_t, uint64_t>>> RangeOf(const std::string* header,
                                                               uint64_t size) {
  using Range = std::optional<std::pair<uint64_t, uint64_t>>;
  if (header == nullptr || !header->starts_with("bytes=") ||
      header->find(',') != std::string::npos) {
    return Range();
  }
  std::string_view spec = std::string_view(*header).substr(6);
  const size_t dash = spec.find('-');
  if (dash == std::string_view::npos) return Range();
  std::optional<int64_t> first = dash == 0 ? std::nullopt : ParseInt(spec.substr(0, dash));
  std::optional<int64_t> last =
      dash + 1 == spec.size() ? std::nullopt : ParseInt(spec.substr(dash + 1));
  if ((dash != 0 && !first) || (dash + 1 != spec.size() && !last) || (!first && !last)) {
    return Range();
  }
  auto unsatisfiable = [&] {
    return S3Error{416, "InvalidRange", "The requested range is not satisfiable"}
        .With("RangeRequested", *header)
        .With("ActualObjectSize", std::to_string(size));
  };
  uint64_t from = 0, to = size == 0 ? 0 : size - 1;
  if (!first) {  // the last N bytes
    if (*last == 0) return unsatisfiable();
    from = size > static_cast<uint64_t>(*last) ? size - static_cast<uint64_t>(*last) : 0;
  } else {
    from = static_cast<uint64_t>(*first);
    if (last) {
      if (*last < *first) return Range();
      to = std::min<uint64_t>(to, static_cast<uint64_t>(*last));
    }
  }
  if (size == 0 || from >= size) return unsatisfiable();
  return Range(std::pair{from, to});
}

S3Response XmlResponse(std::string body, std::string_view operation) {
  S3Response out;
  out.body = std::move(body);
  out.operation = operation;
  return out;
}

S3Response Empty(unsigned status, std::string_view operation) {
  S3Response out;
  out.status = status;
  out.content_type.clear();
  out.operation = operation;
  return out;
}

}  // namespace

const std::vector<std::string_view>& OperationNames() {
  static const std::vector<std::string_view> kNames = {"ListBuckets",
                                                       "CreateBucket",
                                                       "HeadBucket",
                                                       "DeleteBucket",
                                                       "GetBucketLocation",
                                                       "ListObjects",
                                                       "ListObjectsV2",
                                                       "DeleteObjects",
                                                       "PutObject",
                                                       "GetObject",
                                                       "HeadObject",
                                                       "DeleteObject",
                                                       "CreateMultipartUpload",
                                                       "UploadPart",
                                                       "CompleteMultipartUpload",
                                                       "AbortMultipartUpload",
                                                       "unknown"};
  return kNames;
}

const std::string* S3Request::Header(std::string_view name) const {
  for (const auto& [n, v] : headers) {
    if (n == name) return &v;
  }
  return nullptr;
}

const std::string* S3Request::Query(std::string_view name) const {
  for (const auto& [n, v] : query) {
    if (n == name) return &v;
  }
  return nullptr;
}

S3Response Service::ErrorResponse(const S3Request& request, const S3Error& error) {
  S3Response out;
  out.status = error.status;
  out.operation = "unknown";
  out.error_code = error.code;
  if (request.method == "HEAD") {
    out.content_type.clear();
    return out;
  }
  XmlWriter w;
  w.Open("Error").Element("Code", error.code).Element("Message", error.message);
  for (const auto& [name, value] : error.details) w.Element(name, value);
  w.Element("RequestId", request.request_id).Element("HostId", request.request_id);
  w.Close("Error");
  out.body = w.Take();
  return out;
}

S3Response Service::Handle(const S3Request& r) {
  if (std::optional<std::string> what = Unsupported(r)) {
    return ErrorResponse(r, NotImplemented(*what));
  }
  if (r.bucket.empty()) return ListAllBuckets(r);
  if (r.key.empty()) return Bucket(r);
  return Object(r);
}

S3Response Service::ListAllBuckets(const S3Request& r) {
  if (r.method != "GET") {
    return ErrorResponse(r, S3Error{405, "MethodNotAllowed",
                                    "The specified method is not allowed against this resource."});
  }
  S3Result<std::vector<BucketInfo>> buckets = store_.ListBuckets();
  if (!buckets.ok()) return ErrorResponse(r, buckets.error());
  XmlWriter w;
  w.OpenRoot("ListAllMyBucketsResult")
      .Open("Owner")
      .Element("ID", "fdyno")
      .Element("DisplayName", "fdyno");
  w.Close("Owner").Open("Buckets");
  for (const BucketInfo& b : *buckets) {
    w.Open("Bucket").Element("Name", b.name).Element("CreationDate", Iso8601Millis(b.created_ms));
    w.Close("Bucket");
  }
  w.Close("Buckets").Close("ListAllMyBucketsResult");
  return XmlResponse(w.Take(), "ListBuckets");
}

S3Response Service::Bucket(const S3Request& r) {
  if (r.method == "PUT") {
    S3Result<bool> created = store_.CreateBucket(r.bucket);
    if (!created.ok()) return ErrorResponse(r, created.error());
    // us-east-1 answers 200 to its owner's repeated CreateBucket; other regions 409.
    if (!*created && r.region != "us-east-1") {
      return ErrorResponse(
          r, S3Error{409, "BucketAlreadyOwnedByYou",
                     "Your previous request to create the named bucket succeeded and you "
                     "already own it."}
                 .With("BucketName", r.bucket));
    }
    S3Response out = Empty(200, "CreateBucket");
    AddHeader(out, "Location", "/" + r.bucket);
    return out;
  }
  if (r.method == "HEAD") {
    S3Result<Done> there = store_.HeadBucket(r.bucket);
    if (!there.ok()) return ErrorResponse(r, there.error());
    S3Response out = Empty(200, "HeadBucket");
    AddHeader(out, "x-amz-bucket-region", r.region);
    return out;
  }
  if (r.method == "DELETE") {
    S3Result<Done> deleted = store_.DeleteBucket(r.bucket);
    if (!deleted.ok()) return ErrorResponse(r, deleted.error());
    return Empty(204, "DeleteBucket");
  }
  if (r.method == "POST" && r.Query("delete")) return DeleteObjects(r);
  if (r.method == "GET" && r.Query("location")) {
    S3Result<Done> there = store_.HeadBucket(r.bucket);
    if (!there.ok()) return ErrorResponse(r, there.error());
    XmlWriter w;
    w.OpenRoot("LocationConstraint");
    std::string body = w.Take();
    body += XmlEscape(r.region == "us-east-1" ? "" : r.region) + "</LocationConstraint>";
    return XmlResponse(std::move(body), "GetBucketLocation");
  }
  if (r.method == "GET") {
    const std::string* type = r.Query("list-type");
    if (type && *type != "2") {
      return ErrorResponse(
          r, InvalidArgument("Invalid List Type specified").With("ArgumentName", "list-type"));
    }
    return ListObjects(r, type != nullptr);
  }
  return ErrorResponse(r, NotImplemented(r.method + " of a bucket"));
}

S3Response Service::ListObjects(const S3Request& r, bool v2) {
  ListRequest request;
  if (const std::string* p = r.Query("prefix")) request.prefix = *p;
  if (const std::string* d = r.Query("delimiter")) request.delimiter = *d;
  if (const std::string* m = r.Query("max-keys")) {
    std::optional<int64_t> n = ParseInt(*m);
    if (!n || *n < 0 || *n > INT32_MAX) {
      return ErrorResponse(
          r, InvalidArgument("Provided max-keys not an integer or within integer range")
                 .With("ArgumentName", "max-keys")
                 .With("ArgumentValue", *m));
    }
    request.max_keys = static_cast<size_t>(std::min<int64_t>(*n, 1000));
  }
  const std::string* token = v2 ? r.Query("continuation-token") : nullptr;
  const std::string* start_after = r.Query(v2 ? "start-after" : "marker");
  if (token) {
    std::optional<std::string> after = HexBytes(*token);
    if (!after) {
      return ErrorResponse(r, InvalidArgument("The continuation token provided is incorrect")
                                  .With("ArgumentName", "continuation-token"));
    }
    request.after = *after;
  } else if (start_after) {
    request.after = *start_after;
  }
  S3Result<ListPage> page = store_.List(r.bucket, request);
  if (!page.ok()) return ErrorResponse(r, page.error());
  const std::string* encoding = r.Query("encoding-type");
  const bool url = encoding && *encoding == "url";
  auto text = [&](std::string_view s) { return url ? UrlEncode(s) : std::string(s); };
  XmlWriter w;
  w.OpenRoot("ListBucketResult").Element("Name", r.bucket).Element("Prefix", text(request.prefix));
  if (v2) {
    if (token) w.Element("ContinuationToken", *token);
    if (start_after) w.Element("StartAfter", text(*start_after));
    w.Element("KeyCount", std::to_string(page->objects.size() + page->common_prefixes.size()));
    if (page->truncated) w.Element("NextContinuationToken", HexLower(page->last));
  } else {
    w.Element("Marker", text(start_after ? *start_after : ""));
    if (page->truncated && !request.delimiter.empty()) w.Element("NextMarker", text(page->last));
  }
  w.Element("MaxKeys", std::to_string(request.max_keys));
  if (!request.delimiter.empty()) w.Element("Delimiter", text(request.delimiter));
  if (url) w.Element("EncodingType", "url");
  w.Element("IsTruncated", page->truncated ? "true" : "false");
  for (const ObjectInfo& o : page->objects) {
    w.Open("Contents")
        .Element("Key", text(o.key))
        .Element("LastModified", Iso8601Millis(o.modified_ms));
    w.Element("ETag", Quoted(o.etag)).Element("Size", std::to_string(o.size));
    if (!v2) w.Open("Owner").Element("ID", "fdyno").Element("DisplayName", "fdyno").Close("Owner");
    w.Element("StorageClass", "STANDARD").Close("Contents");
  }
  for (const std::string& p : page->common_prefixes) {
    w.Open("CommonPrefixes").Element("Prefix", text(p)).Close("CommonPrefixes");
  }
  w.Close("ListBucketResult");
  return XmlResponse(w.Take(), v2 ? "ListObjectsV2" : "ListObjects");
}

S3Response Service::DeleteObjects(const S3Request& r) {
  std::optional<XmlElement> doc = ParseXml(r.body);
  if (!doc || doc->name != "Delete") return ErrorResponse(r, MalformedXml());
  std::vector<std::string> keys;
  bool quiet = false;
  for (const XmlElement& e : doc->children) {
    if (e.name == "Quiet") quiet = e.text == "true";
    if (e.name != "Object") continue;
    const XmlElement* key = e.Child("Key");
    if (key == nullptr) return ErrorResponse(r, MalformedXml());
    keys.push_back(key->text);
  }
  if (keys.empty() || keys.size() > 1000) return ErrorResponse(r, MalformedXml());
  if (S3Result<Done> there = store_.HeadBucket(r.bucket); !there.ok()) {
    return ErrorResponse(r, there.error());
  }
  XmlWriter w;
  w.OpenRoot("DeleteResult");
  for (const std::string& key : keys) {
    S3Result<Done> deleted = store_.Delete(r.bucket, key);
    if (deleted.ok()) {
      if (!quiet) w.Open("Deleted").Element("Key", key).Close("Deleted");
    } else {
      w.Open("Error").Element("Key", key).Element("Code", deleted.error().code);
      w.Element("Message", deleted.error().message).Close("Error");
    }
  }
  w.Close("DeleteResult");
  return XmlResponse(w.Take(), "DeleteObjects");
}

S3Response Service::Object(const S3Request& r) {
  const std::string* upload = r.Query("uploadId");
  if (r.method == "PUT") {
    if (r.Header("x-amz-copy-source")) return ErrorResponse(r, NotImplemented("CopyObject"));
    if (upload || r.Query("partNumber")) return UploadPart(r);
    return PutObject(r);
  }
  if (r.method == "GET" && upload) return ErrorResponse(r, NotImplemented("ListParts"));
  if (r.method == "GET" || r.method == "HEAD") return GetObject(r, r.method == "HEAD");
  if (r.method == "DELETE" && upload) {
    S3Result<Done> aborted = store_.AbortUpload(r.bucket, r.key, *upload);
    if (!aborted.ok()) return ErrorResponse(r, aborted.error());
    return Empty(204, "AbortMultipartUpload");
  }
  if (r.method == "DELETE") {
    S3Result<Done> deleted = store_.Delete(r.bucket, r.key);
    if (!deleted.ok()) return ErrorResponse(r, deleted.error());
    return Empty(204, "DeleteObject");
  }
  if (r.method == "POST" && r.Query("uploads")) {
    S3Result<std::string> id = store_.CreateUpload(r.bucket, r.key, AttributesOf(r));
    if (!id.ok()) return ErrorResponse(r, id.error());
    XmlWriter w;
    w.OpenRoot("InitiateMultipartUploadResult").Element("Bucket", r.bucket).Element("Key", r.key);
    w.Element("UploadId", *id).Close("InitiateMultipartUploadResult");
    return XmlResponse(w.Take(), "CreateMultipartUpload");
  }
  if (r.method == "POST" && upload) return CompleteUpload(r);
  return ErrorResponse(r, NotImplemented(r.method + " of an object"));
}

S3Response Service::PutObject(const S3Request& r) {
  if (std::optional<S3Error> digest = CheckContentMd5(r)) return ErrorResponse(r, *digest);
  S3Result<ObjectInfo> info = store_.Put(r.bucket, r.key, r.body, AttributesOf(r));
  if (!info.ok()) return ErrorResponse(r, info.error());
  S3Response out = Empty(200, "PutObject");
  AddHeader(out, "ETag", Quoted(info->etag));
  return out;
}

S3Response Service::GetObject(const S3Request& r, bool head) {
  S3Result<ObjectInfo> info = store_.Head(r.bucket, r.key);
  if (!info.ok()) return ErrorResponse(r, info.error());
  const std::string etag = Quoted(info->etag);
  if (const std::string* match = r.Header("if-match"); match && *match != etag && *match != "*") {
    return ErrorResponse(r, S3Error{412, "PreconditionFailed",
                                    "At least one of the pre-conditions you specified did not hold"}
                                .With("Condition", "If-Match"));
  }
  if (const std::string* none = r.Header("if-none-match");
      none && (*none == etag || *none == "*")) {
    S3Response out = Empty(304, head ? "HeadObject" : "GetObject");
    AddHeader(out, "ETag", etag);
    return out;
  }
  S3Result<std::optional<std::pair<uint64_t, uint64_t>>> range =
      head ? S3Result<std::optional<std::pair<uint64_t, uint64_t>>>(std::nullopt)
           : RangeOf(r.Header("range"), info->size);
  if (!range.ok()) return ErrorResponse(r, range.error());
  S3Response out;
  out.operation = head ? "HeadObject" : "GetObject";
  AddObjectHeaders(out, *info);
  if (head) {
    out.head_length = info->size;
    return out;
  }
  uint64_t from = 0, length = info->size;
  if (*range) {
    from = (*range)->first;
    length = (*range)->second - from + 1;
    out.status = 206;
    AddHeader(out, "Content-Range",
              "bytes " + std::to_string(from) + "-" + std::to_string((*range)->second) + "/" +
                  std::to_string(info->size));
  }
  S3Result<std::string> bytes = store_.Read(r.bucket, r.key, from, length);
  if (!bytes.ok()) return ErrorResponse(r, bytes.error());
  out.body = std::move(*bytes);
  return out;
}

S3Response Service::UploadPart(const S3Request& r) {
  const std::string* upload = r.Query("uploadId");
  const std::string* part = r.Query("partNumber");
  std::optional<int64_t> number = part ? ParseInt(*part) : std::nullopt;
  if (upload == nullptr || !number || *number < 1 || *number > 10000) {
    return ErrorResponse(
        r, InvalidArgument("Part number must be an integer between 1 and 10000, inclusive")
               .With("ArgumentName", "partNumber")
               .With("ArgumentValue", part ? *part : ""));
  }
  if (std::optional<S3Error> digest = CheckContentMd5(r)) return ErrorResponse(r, *digest);
  S3Result<std::string> etag =
      store_.UploadPart(r.bucket, r.key, *upload, static_cast<int>(*number), r.body);
  if (!etag.ok()) return ErrorResponse(r, etag.error());
  S3Response out = Empty(200, "UploadPart");
  AddHeader(out, "ETag", Quoted(*etag));
  return out;
}

S3Response Service::CompleteUpload(const S3Request& r) {
  std::optional<XmlElement> doc = ParseXml(r.body);
  if (!doc || doc->name != "CompleteMultipartUpload") return ErrorResponse(r, MalformedXml());
  std::vector<std::pair<int, std::string>> parts;
  for (const XmlElement& e : doc->children) {
    if (e.name != "Part") continue;
    const XmlElement* number = e.Child("PartNumber");
    const XmlElement* etag = e.Child("ETag");
    std::optional<int64_t> n = number ? ParseInt(number->text) : std::nullopt;
    if (!n || !etag || *n < 1 || *n > 10000) return ErrorResponse(r, MalformedXml());
    parts.emplace_back(static_cast<int>(*n), etag->text);
  }
  S3Result<ObjectInfo> info = store_.CompleteUpload(r.bucket, r.key, *r.Query("uploadId"), parts);
  if (!info.ok()) return ErrorResponse(r, info.error());
  XmlWriter w;
  w.OpenRoot("CompleteMultipartUploadResult")
      .Element("Location", "http://" + r.host + "/" + r.bucket + "/" + r.key)
      .Element("Bucket", r.bucket)
      .Element("Key", r.key)
      .Element("ETag", Quoted(info->etag))
      .Close("CompleteMultipartUploadResult");
  return XmlResponse(w.Take(), "CompleteMultipartUpload");
}

}  // namespace fdyno::s3
