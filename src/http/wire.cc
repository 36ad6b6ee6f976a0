#include "http/wire.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <zlib.h>

#include <algorithm>
#include <boost/beast/http.hpp>
#include <ctime>
#include <random>

#include "base/time_text.h"
#include "base/utf8.h"
#include "kv/kv.h"

namespace fdyno::http {

std::string_view ErrorNamespace(ErrorType type) {
  switch (type) {
    case ErrorType::kValidation:
      return "com.amazon.coral.validate";
    case ErrorType::kThrottling:
      return "com.amazon.coral.availability";
    case ErrorType::kAccessDenied:
    case ErrorType::kIncompleteSignature:
    case ErrorType::kInvalidSignature:
    case ErrorType::kMissingAuthenticationToken:
    case ErrorType::kUnrecognizedClient:
    case ErrorType::kSerialization:
    case ErrorType::kUnknownOperation:
    case ErrorType::kRequestEntityTooLarge:
      return "com.amazon.coral.service";
    default:
      return "com.amazonaws.dynamodb.v20120810";
  }
}

Error ClientError(const Error& error) {
  if (!error.is_kv()) return error;
  switch (error.kv_code) {
    case kv::kTransactionTooLarge:
    case kv::kKeyTooLarge:
    case kv::kValueTooLarge:
      return Error::Validation(
          "The request's writes, with the index entries and stream records they make, exceed "
          "the " +
          std::to_string(kv::kMaxTransactionBytes) +
          " bytes one transaction of the storage engine can hold: send fewer or smaller items "
          "per request, or project fewer attributes into the table's indexes");
    default:
      return error;
  }
}

std::string RenderErrorBody(const Error& error) {
  // Engine errors never reach clients as such: they are internal server errors.
  ErrorType type = error.is_kv() ? ErrorType::kInternalServerError : error.type;
  std::string full_type = std::string(ErrorNamespace(type)) + "#" + std::string(WireType(type));
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("__type");
  w.String(full_type.data(), static_cast<rapidjson::SizeType>(full_type.size()));
  // A message may quote what the client sent (an operation name from a header): the body
  // stays valid UTF-8 whatever it held.
  std::string message = ToValidUtf8(error.message);
  if (error.is_kv()) message = "Internal server error";
  if (!message.empty()) {
    w.Key(type == ErrorType::kSerialization ? "Message" : "message");
    w.String(message.data(), static_cast<rapidjson::SizeType>(message.size()));
  }
  if (!error.item_json.empty()) {
    // ConditionalCheckFailedException with ReturnValuesOnConditionCheckFailure: the old item.
    w.Key("Item");
    w.RawValue(error.item_json.data(), error.item_json.size(), rapidjson::kObjectType);
  }
  if (!error.cancellation_reasons_json.empty()) {
    // TransactionCanceledException: one reason per action, in request order.
    w.Key("CancellationReasons");
    w.RawValue(error.cancellation_reasons_json.data(), error.cancellation_reasons_json.size(),
               rapidjson::kArrayType);
  }
  if (!error.throttling_reasons_json.empty()) {
    w.Key("ThrottlingReasons");
    w.RawValue(error.throttling_reasons_json.data(), error.throttling_reasons_json.size(),
               rapidjson::kArrayType);
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

namespace {

// SplitMix64 (Steele, Lea, Flood 2014): a few instructions a draw, where mt19937_64 spends
// hundreds for an id's six draws. Ids need to be distinct, not unpredictable.
class SplitMix64 {
 public:
  SplitMix64() : state_((uint64_t{std::random_device{}()} << 32) ^ std::random_device{}()) {}
  uint64_t operator()() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

 private:
  uint64_t state_;
};

}  // namespace

std::string NewRequestId() {
  // 6 random bits a symbol, folded into 36 ([A-Z0-9]; a slight bias is fine for an id).
  static constexpr char kSymbols[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ01";
  static_assert(sizeof(kSymbols) == 64 + 1);
  thread_local SplitMix64 rng;
  std::string id(52, '\0');
  for (size_t at = 0; at < id.size(); at += 10) {  // 10 symbols from each 64-bit draw
    uint64_t bits = rng();
    const size_t end = std::min(at + 10, id.size());
    for (size_t i = at; i < end; ++i, bits >>= 6) id[i] = kSymbols[bits & 63];
  }
  return id;
}

uint32_t Crc32(std::string_view body) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths; feed in chunks for bodies beyond 4 GiB (never expected).
  while (!body.empty()) {
    size_t n = std::min<size_t>(body.size(), 1u << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(n));
    body.remove_prefix(n);
  }
  return static_cast<uint32_t>(crc);
}

void AppendResponseHead(const ResponseHead& h, std::string* out) {
  namespace bhttp = boost::beast::http;
  const auto reason = bhttp::obsolete_reason(static_cast<bhttp::status>(h.status));
  out->append(h.version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ");
  out->append(std::to_string(h.status))
      .append(" ")
      .append(reason.data(), reason.size())
      .append("\r\n");
  out->append("Server: ").append(kServerName).append("\r\n");
  out->append("Date: ").append(h.date).append("\r\n");
  if (!h.content_type.empty()) out->append("Content-Type: ").append(h.content_type).append("\r\n");
  if (!h.content_encoding.empty()) {
    out->append("Content-Encoding: ").append(h.content_encoding).append("\r\n");
  }
  out->append("x-amzn-RequestId: ").append(h.request_id).append("\r\n");
  out->append("x-amz-crc32: ").append(std::to_string(h.crc32)).append("\r\n");
  out->append(h.extra_headers);
  if (h.version == 10 && h.keep_alive) out->append("Connection: keep-alive\r\n");
  if (h.version != 10 && !h.keep_alive) out->append("Connection: close\r\n");
  out->append("Content-Length: ").append(std::to_string(h.content_length)).append("\r\n\r\n");
}

std::string_view HttpDate() {
  thread_local std::time_t formatted_second = -1;
  thread_local char text[40];
  const std::time_t now = std::time(nullptr);
  if (now != formatted_second) {
    const std::string formatted = HttpDateText(now);
    formatted.copy(text, sizeof text - 1);
    text[std::min(formatted.size(), sizeof text - 1)] = '\0';
    formatted_second = now;
  }
  return text;
}

}  // namespace fdyno::http
