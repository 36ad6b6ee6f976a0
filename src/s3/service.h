// The S3 REST API subset that export and import tools need, over an ObjectStore: ListBuckets,
// CreateBucket, HeadBucket, DeleteBucket, GetBucketLocation, PutObject, GetObject (with a
// Range), HeadObject, DeleteObject, DeleteObjects, ListObjectsV2 (and ListObjects),
// CreateMultipartUpload, UploadPart, CompleteMultipartUpload, AbortMultipartUpload. Any other
// request (a subresource such as ?acl or ?tagging, CopyObject, ListParts) answers S3's 501
// NotImplemented rather than being taken for one of these.
//
// The request arrives authenticated and with its body decoded (http/s3_endpoint.h reads the
// HTTP request, checks its SigV4 signature for service "s3" and undoes aws-chunked).
//
// Thread-safety: Handle may run on any thread at once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "s3/object_store.h"

namespace fdyno::s3 {

struct S3Request {
  std::string method;  // "GET", "HEAD", "PUT", "POST", "DELETE"
  std::string bucket;  // decoded; empty: the service (ListBuckets)
  std::string key;     // decoded; empty: the bucket
  std::vector<std::pair<std::string, std::string>> query;    // decoded, in order
  std::vector<std::pair<std::string, std::string>> headers;  // names in lower case
  std::string_view body;
  std::string region;      // of the request's signature
  std::string host;        // the Host header (for Location)
  std::string request_id;  // rendered in error bodies

  const std::string* Header(std::string_view name) const;  // name in lower case
  const std::string* Query(std::string_view name) const;
};

struct S3Response {
  unsigned status = 200;
  std::string content_type = "application/xml";
  std::string headers;  // further complete header lines ("ETag: \"...\"\r\n")
  std::string body;
  // HEAD: the Content-Length a GET would have (the body stays empty).
  std::optional<uint64_t> head_length;
  std::string_view operation;   // "PutObject", ... ("unknown" when none matched): logs, metrics
  std::string_view error_code;  // S3's code of an error answer; empty on success
};

// The operation names Handle reports (S3Response::operation), for metrics.
const std::vector<std::string_view>& OperationNames();

class Service {
 public:
  explicit Service(ObjectStore& store) : store_(store) {}
  S3Response Handle(const S3Request& request);

  // S3's error body (<Error><Code>..</Code><Message>..</Message>...</Error>), or none for HEAD.
  static S3Response ErrorResponse(const S3Request& request, const S3Error& error);

 private:
  S3Response ListAllBuckets(const S3Request& r);
  S3Response Bucket(const S3Request& r);
  S3Response Object(const S3Request& r);
  S3Response ListObjects(const S3Request& r, bool v2);
  S3Response DeleteObjects(const S3Request& r);
  S3Response PutObject(const S3Request& r);
  S3Response GetObject(const S3Request& r, bool head);
  S3Response UploadPart(const S3Request& r);
  S3Response CompleteUpload(const S3Request& r);

  ObjectStore& store_;
};

}  // namespace fdyno::s3
