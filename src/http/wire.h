// DynamoDB's wire conventions shared by every response: the error body, the request id and
// the CRC32 header.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/error.h"

namespace fdyno::http {

// The error body DynamoDB sends: {"__type":"<namespace>#<Type>","message":"..."}. The
// namespace is the one DynamoDB uses for that type (com.amazon.coral.service for protocol and
// authentication errors, com.amazon.coral.validate for ValidationException,
// com.amazon.coral.availability for ThrottlingException, com.amazonaws.dynamodb.v20120810 for
// the rest); SDKs read the part after '#'. An empty message is left out, as DynamoDB does for
// SerializationException on malformed JSON; SerializationException spells the key "Message".
// Error::item_json, when set, becomes the body's "Item" member; Error::cancellation_reasons_json
// (TransactionCanceledException) the "CancellationReasons" member.
std::string RenderErrorBody(const Error& error);

// What the client is told of `error`. An engine limit (kv 2101-2103: the writes of one request,
// with their index entries and stream records, exceed what one transaction of the storage
// engine holds) is a ValidationException the client can act on, never a retryable 500 it would
// resend forever; every other engine error stays an internal server error; the rest is as is.
Error ClientError(const Error& error);
std::string_view ErrorNamespace(ErrorType type);

// A fresh 52-character request id ([A-Z0-9]), like DynamoDB's x-amzn-RequestId.
std::string NewRequestId();

// CRC32 (zlib's, as in x-amz-crc32) of a body.
uint32_t Crc32(std::string_view body);

// A response's status line and headers. AppendResponseHead writes exactly what Beast's
// serializer writes for the same response (the status's standard reason; Server, Date,
// Content-Type, Content-Encoding when set, x-amzn-RequestId, x-amz-crc32, the extra header
// lines; Connection when keep_alive differs from the version's default; Content-Length), so
// the connection sends head and body in one gather write without building a Beast message for
// every response. x-amz-crc32 is of the body as sent (compressed, when it is), as DynamoDB's.
struct ResponseHead {
  unsigned status = 200;
  unsigned version = 11;              // 10 or 11
  std::string_view date;              // HttpDate()
  std::string_view content_type;      // empty: none
  std::string_view content_encoding;  // empty: none
  std::string_view request_id;
  uint32_t crc32 = 0;
  std::string_view extra_headers;  // complete "Name: value\r\n" lines, or empty
  size_t content_length = 0;
  bool keep_alive = true;
};
void AppendResponseHead(const ResponseHead& head, std::string* out);

// The Server header's value.
inline constexpr std::string_view kServerName = "fdyno";

// The current time as an HTTP Date ("Tue, 01 Dec 2026 15:03:32 GMT"), formatted at most once a
// second per thread. Valid until the calling thread's next call.
std::string_view HttpDate();

}  // namespace fdyno::http
