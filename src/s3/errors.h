// Amazon S3's errors, as the S3 REST API reports them: an HTTP status, a code clients act on
// ("NoSuchKey"), S3's message, and the resource it names (rendered as <Key>, <BucketName>, ...).
// S3Result<T> is a value or such an error, like base/result.h's Result<T> for DynamoDB's.
//
// Thread-safety: values.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace fdyno::s3 {

struct S3Error {
  unsigned status = 500;
  std::string_view code = "InternalError";  // a literal: one of S3's codes
  std::string message = "We encountered an internal error. Please try again.";
  // Extra elements of the <Error> body, in order: {"Key", "a/b"}, {"BucketName", "bkt"}, ...
  std::vector<std::pair<std::string, std::string>> details = {};

  S3Error&& With(std::string name, std::string value) && {
    details.emplace_back(std::move(name), std::move(value));
    return std::move(*this);
  }
};

// The errors S3 answers, with its status and message.
S3Error NoSuchBucket(std::string bucket);
S3Error NoSuchKey(std::string key);
S3Error NoSuchUpload(std::string upload_id);
S3Error InvalidBucketName(std::string bucket);
S3Error InvalidArgument(std::string message);
S3Error NotImplemented(std::string what);
S3Error MalformedXml();
S3Error Internal(std::string why);

template <typename T>
class [[nodiscard]] S3Result {
 public:
  S3Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}        // NOLINT: implicit
  S3Result(S3Error error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  T& value() & {
    assert(ok());
    return std::get<0>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(v_));
  }
  T* operator->() { return &value(); }
  T& operator*() & { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  const S3Error& error() const& {
    assert(!ok());
    return std::get<1>(v_);
  }
  S3Error&& error() && {
    assert(!ok());
    return std::get<1>(std::move(v_));
  }

 private:
  std::variant<T, S3Error> v_;
};

struct Done {};  // S3Result<Done>: success without a value

}  // namespace fdyno::s3
