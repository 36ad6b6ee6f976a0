#include "s3/errors.h"

namespace fdyno::s3 {

S3Error NoSuchBucket(std::string bucket) {
  return S3Error{404, "NoSuchBucket", "The specified bucket does not exist"}.With(
      "BucketName", std::move(bucket));
}

S3Error NoSuchKey(std::string key) {
  return S3Error{404, "NoSuchKey", "The specified key does not exist."}.With("Key", std::move(key));
}

S3Error NoSuchUpload(std::string upload_id) {
  return S3Error{404, "NoSuchUpload",
                 "The specified upload does not exist. The upload ID may be invalid, or the "
                 "upload may have been aborted or completed."}
      .With("UploadId", std::move(upload_id));
}

S3Error InvalidBucketName(std::string bucket) {
  return S3Error{400, "InvalidBucketName", "The specified bucket is not valid."}.With(
      "BucketName", std::move(bucket));
}

S3Error InvalidArgument(std::string message) {
  return S3Error{400, "InvalidArgument", std::move(message)};
}

S3Error NotImplemented(std::string what) {
  return S3Error{501, "NotImplemented",
                 "A header you provided implies functionality that is not implemented"}
      .With("fdyno", "fdyno's S3 does not implement " + std::move(what));
}

S3Error MalformedXml() {
  return S3Error{400, "MalformedXML",
                 "The XML you provided was not well-formed or did not validate against our "
                 "published schema"};
}

S3Error Internal(std::string why) { return S3Error{}.With("fdyno", std::move(why)); }

}  // namespace fdyno::s3
