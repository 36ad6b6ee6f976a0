// Amazon S3's REST API beside the DynamoDB endpoint (s3/service.h over the export root), for
// tools and tests that export to and import from S3 against a local DynamoDB: requests are told
// apart from DynamoDB's by SigV4's service name "s3" (the credential scope of the Authorization
// header, or of a presigned URL's X-Amz-Credential) and by having no X-Amz-Target. Buckets are
// addressed path-style (http://host:port/bucket/key), or virtual-hosted under localhost
// (http://bucket.localhost:port/key).
//
// Thread-safety: functions; AnswerS3 may run on any thread at once.
#pragma once

#include <string>
#include <string_view>

#include "http/router.h"
#include "http/sigv4.h"
#include "s3/service.h"

namespace fdyno::http {

// Whether `request` is an S3 API call (see above).
bool IsS3Request(const HttpRequest& request);

struct S3Answer {
  HttpResponse response;
  std::string_view operation;  // s3::OperationNames()
  std::string account;         // of the signature, when it was accepted
};

// Checks the request's signature for service "s3" against `store` (SigV4 as S3 has it), undoes
// an aws-chunked body, and answers with `service`. Errors are S3's (XML, S3's codes).
S3Answer AnswerS3(const HttpRequest& request, s3::Service& service, const CredentialStore& store,
                  VerifyOptions verify, std::string request_id);

// An aws-chunked body ("<hex size>[;chunk-signature=...]\r\n<bytes>\r\n" ... "0...\r\n",
// trailers, "\r\n") as the bytes it carries; nullopt when malformed.
std::optional<std::string> DecodeAwsChunked(std::string_view body);

// The SigV4 view of a request (http/sigv4.h), pointing into it.
SignedRequest SignedRequestOf(const HttpRequest& request);

}  // namespace fdyno::http
