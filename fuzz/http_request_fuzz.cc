// libFuzzer target for reading HTTP/1.1 requests as a connection reads them (http/connection.cc:
// Beast's request parser under the header and body limits, fed what each read brings, several
// keep-alive requests in a row), then answering each complete one through the router
// (http/router.h: health and metrics pages, or an API call through X-Amz-Target, SigV4 in open
// mode, Content-Encoding, JSON parsing, to an operation that answers "{}"), and writing the
// response head (http/wire.h AppendResponseHead). The first byte picks the limits (bits 0-1:
// the server's defaults, or small ones that fuzz-sized input can exceed) and the size of each
// read (bits 2-3: 1 byte, about 7, about 64, or everything at once, sizes varying with bits
// 4-7); the rest is what the client sends, after which it half-closes.
//
// Invariants: no crash, no sanitizer report. Each request either completes, or waits for more
// bytes, or fails with an error the connection answers with 400 or 413 (header_limit,
// body_limit, a full read buffer, and the malformed-request errors of connection.cc's
// IsMalformed); the client's half-close is answered as a partial message when a request had
// begun. The read buffer, bounded as the connection bounds it (the header limit plus one read),
// fills up only in a chunked body, whose chunk-size lines and trailer Beast leaves unbounded: a
// connection's memory is bounded by its limits, not by what a client sends in its time. A
// complete request's body holds at most the body limit and exactly its Content-Length. A
// response is a 500 only for a body in an unsupported or corrupt Content-Encoding (DynamoDB's
// answer); an API error body is a JSON object with "__type"; a compressed body decompresses;
// the head ends once, at its end, so nothing a client sends splits it.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "api/operation.h"
#include "base/clock.h"
#include "http/compression.h"
#include "http/config.h"
#include "http/router.h"
#include "http/wire.h"

namespace {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using fdyno::http::ContentEncoding;
using fdyno::http::HttpRequest;
using fdyno::http::HttpResponse;
using fdyno::http::Router;

// Keep-alive requests read from one input at most.
constexpr int kMaxRequests = 16;

void Require(bool ok) {
  if (!ok) std::abort();
}

// The connection's limits, and the most it holds unparsed past the header limit: one read
// (connection.cc's kMaxReadBytes, 64 KiB). The small ones keep the same rule at sizes that
// fuzz-sized input can exceed.
struct Limits {
  size_t header_bytes;
  size_t body_bytes;
  size_t read_bytes;
};

Limits LimitsFor(uint8_t control) {
  const fdyno::http::ServerConfig defaults;
  switch (control & 3) {
    case 0:
      return {defaults.max_header_bytes, defaults.max_body_bytes, 64 * 1024};
    case 1:
      return {512, 256, 256};
    case 2:
      return {200, 0, 64};
    default:
      return {1024, 4096, 512};
  }
}

// The errors connection.cc answers (OnHeader, OnRequest): 400 for the malformed ones
// (IsMalformed), an oversized header and a full read buffer, 413 for an oversized body. Any
// other error closes the connection without an answer.
bool Answered(beast::error_code ec) {
  using E = bhttp::error;
  for (E e : {E::header_limit, E::body_limit, E::buffer_overflow, E::bad_line_ending, E::bad_method,
              E::bad_target, E::bad_version, E::bad_field, E::bad_value, E::bad_content_length,
              E::bad_transfer_encoding, E::bad_chunk, E::bad_chunk_extension, E::bad_obs_fold,
              E::partial_message}) {
    if (ec == e) return true;
  }
  return false;
}

// Sizes of the client's successive reads.
class Reads {
 public:
  explicit Reads(uint8_t control) : state_(0x9E3779B9u ^ control) {
    static constexpr size_t kAverage[] = {1, 7, 64, 0};
    average_ = kAverage[(control >> 2) & 3];
  }
  size_t Next(size_t left) {
    if (average_ == 0) return left;
    state_ ^= state_ << 13;
    state_ ^= state_ >> 17;
    state_ ^= state_ << 5;
    return std::min(left, 1 + state_ % (2 * average_));
  }

 private:
  uint32_t state_;
  size_t average_ = 0;
};

const Router& TheRouter() {
  static const fdyno::api::OperationRegistry* registry = [] {
    auto* r = new fdyno::api::OperationRegistry();
    auto answer = [](const fdyno::api::RequestContext&, const rapidjson::Value& body) {
      Require(body.IsObject());
      return fdyno::Result<std::string>(std::string("{}"));
    };
    r->Register("GetItem", answer);
    r->Register("Query", answer);
    r->Register(fdyno::api::Service::kStreams, "GetRecords", answer);
    return r;
  }();
  static const Router* router = [] {
    spdlog::set_level(spdlog::level::off);  // a 500 is logged; the fuzzer answers many
    static fdyno::ManualClock clock;
    fdyno::http::RouterOptions options;
    options.clock = &clock;
    options.compress_min_bytes = 16;  // so that error bodies are compressed when asked
    return new Router(*registry, options);
  }();
  return *router;
}

// The response-head lines a response may add (CORS).
bool KnownExtraHeader(std::string_view line) {
  for (std::string_view name : {"Access-Control-Allow-Origin: ", "Access-Control-Expose-Headers: ",
                                "Vary: ", "Access-Control-Allow-Methods: ",
                                "Access-Control-Allow-Headers: ", "Access-Control-Max-Age: "}) {
    if (line.substr(0, name.size()) == name) return true;
  }
  return false;
}

void CheckResponse(const HttpRequest& request, const HttpResponse& r) {
  if (r.status >= 500) {
    // Only a body the server cannot decode: an unsupported or a corrupt Content-Encoding.
    Require(r.status == 500);
    const auto header = request[bhttp::field::content_encoding];
    const std::optional<ContentEncoding> encoding =
        fdyno::http::ParseContentEncoding(std::string_view(header.data(), header.size()));
    Require(encoding != ContentEncoding::kIdentity);
  }
  std::string body = r.body;
  if (!r.content_encoding.empty()) {
    const std::optional<ContentEncoding> encoding =
        fdyno::http::ParseContentEncoding(r.content_encoding);
    Require(encoding.has_value());
    fdyno::Result<std::string> plain = fdyno::http::Decompress(r.body, *encoding, 64 << 20);
    Require(plain.ok());
    body = std::move(plain).value();
  }
  if (!r.error_type.empty() && TheRouter().IsApiCall(request)) {
    rapidjson::Document doc;
    doc.Parse(body.data(), body.size());
    Require(!doc.HasParseError() && doc.IsObject() && doc.HasMember("__type"));
  }
  // Extra header lines: complete, known, nothing a client sent breaking a line.
  std::string_view extra = r.headers;
  while (!extra.empty()) {
    const size_t end = extra.find("\r\n");
    Require(end != std::string_view::npos);
    const std::string_view line = extra.substr(0, end);
    Require(line.find_first_of("\r\n") == std::string_view::npos && KnownExtraHeader(line));
    extra.remove_prefix(end + 2);
  }
  std::string head;
  fdyno::http::AppendResponseHead(
      {r.status, request.version() == 10 ? 10u : 11u, fdyno::http::HttpDate(), r.content_type,
       r.content_encoding, r.request_id.empty() ? "R" : r.request_id, fdyno::http::Crc32(r.body),
       r.headers, r.body.size(), request.keep_alive()},
      &head);
  Require(head.find("\r\n\r\n") == head.size() - 4);
}

// What the connection does with a complete request (OnRequest).
void Answer(const HttpRequest& request, const Limits& limits) {
  Require(request.body().size() <= limits.body_bytes);
  const Router& router = TheRouter();
  HttpResponse response;
  if (!router.IsApiCall(request)) {
    response = router.HandleLocal(request);
  } else if (Router::IsInlineRead(request)) {
    std::optional<HttpResponse> inline_response = router.HandleInline(request);
    Require(inline_response.has_value());
    response = std::move(*inline_response);
  } else {
    (void)router.AsyncFormOf(request);
    response = router.HandleApi(request);
  }
  CheckResponse(request, response);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const Limits limits = LimitsFor(data[0]);
  Reads reads(data[0]);
  const std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
  size_t sent = 0;
  // The connection's read buffer, bounded as connection.cc bounds it.
  beast::flat_buffer buffer(limits.header_bytes + limits.read_bytes);
  for (int served = 0; served < kMaxRequests; ++served) {
    bhttp::request_parser<bhttp::string_body> parser;
    parser.header_limit(static_cast<uint32_t>(limits.header_bytes));
    parser.body_limit(limits.body_bytes);
    beast::error_code ec;
    std::optional<uint64_t> content_length;  // as the header says, once it is complete
    bool header_done = false;
    while (true) {
      // Parse what is buffered (ParseBuffered, and Beast's read loop alike).
      while (!parser.is_done() && buffer.size() > 0) {
        const size_t n = parser.put(buffer.data(), ec);
        buffer.consume(n);
        if (!header_done && parser.is_header_done()) {
          // Read before the body: the parser counts it down as the body arrives.
          header_done = true;
          if (const auto length = parser.content_length()) {
            content_length = *length;
            Require(*length <= limits.body_bytes);
          }
        }
        if (ec || n == 0) break;
      }
      if (ec == bhttp::error::need_more) ec = {};
      if (ec || parser.is_done()) break;
      if (sent == input.size()) {
        // The client half-closes. Nothing begun: the connection closes (end_of_stream);
        // otherwise the request is partial, and answered.
        if (!parser.got_some()) return 0;
        parser.put_eof(ec);
        Require(ec == bhttp::error::partial_message);
        break;
      }
      // Beast's read: at most what the buffer has room for; none left is buffer_overflow,
      // which only what Beast leaves unbounded (a chunk-size line, a trailer) ever reaches:
      // the header limit ends a header first.
      const size_t room = buffer.max_size() - buffer.size();
      if (room == 0) {
        Require(parser.is_header_done() && parser.chunked());
        ec = bhttp::error::buffer_overflow;
        break;
      }
      const size_t n = std::min(room, reads.Next(input.size() - sent));
      auto space = buffer.prepare(n);
      std::memcpy(space.data(), input.data() + sent, n);
      buffer.commit(n);
      sent += n;
    }
    if (ec) {
      Require(Answered(ec));
      return 0;
    }
    if (content_length) Require(parser.get().body().size() == *content_length);
    const HttpRequest request = parser.release();
    Answer(request, limits);
    if (!request.keep_alive()) return 0;
  }
  return 0;
}
