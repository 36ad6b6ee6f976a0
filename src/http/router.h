// The request pipeline above the socket: routes a complete HTTP request to the health check,
// the metrics pages or a DynamoDB operation, and produces the response body. For API calls:
// X-Amz-Target and content type, SigV4, Content-Encoding (bounded), JSON parsing, the
// operation handler, DynamoDB's error rendering, and per-operation metrics. It knows nothing
// about sockets, so it is tested directly.
//
// Thread-safety: a Router is immutable after construction; every method may run on any thread.
#pragma once

#include <spdlog/logger.h>

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/operation.h"
#include "base/clock.h"
#include "base/metrics.h"
#include "http/compression.h"
#include "http/faults.h"
#include "http/sigv4.h"

namespace fdyno::s3 {
class Service;
}

namespace fdyno::http {

using HttpRequest = boost::beast::http::request<boost::beast::http::string_body>;

struct McpHttp;

struct HttpResponse {
  unsigned status = 200;
  std::string content_type = "application/x-amz-json-1.0";
  std::string body;                   // as sent: compressed when content_encoding is set
  std::string request_id;             // empty: the connection makes one
  std::string_view error_type;        // the error's wire type; empty on success (static)
  std::string_view content_encoding;  // "gzip", "deflate" or empty (static)
  std::string headers;                // further header lines ("Name: value\r\n"), e.g. CORS
  ResponseFault fault;                // a fault rule's hold or drop (http/faults.h)
  // A HEAD's Content-Length: the length of the body a GET would get (S3's HeadObject); unset:
  // the body's, which is then not sent.
  std::optional<uint64_t> head_content_length;
};

struct RouterOptions {
  std::string region = "us-east-1";
  const CredentialStore* credentials = nullptr;  // null or empty: open mode
  size_t max_body_bytes = 16 * 1024 * 1024;      // raw and after decompression
  bool serve_metrics = true;  // false when --admin-listen moves /metrics to its own listener
  // JSON documents served by GET at their path wherever /metrics is served (the Contributor
  // Insights report at /contributor-insights), each rendered by its function per request.
  std::map<std::string, std::function<std::string()>, std::less<>> metrics_pages;
  std::chrono::milliseconds operation_timeout{30'000};
  Clock* clock = nullptr;      // null: Clock::Real()
  Metrics* metrics = nullptr;  // null: Metrics::Global()
  // Where operations run work that may block (RequestContext::blocking).
  std::function<void(std::function<void()>)> blocking;
  // Where each answered request is logged (http/access_log.h); null: nowhere.
  std::shared_ptr<spdlog::logger> access_log;
  bool access_log_json = false;
  // Origins a browser may call from (CORS): "*" for any, a comma-separated list of origins
  // ("https://a.example,http://localhost:3000"), or empty for none.
  std::string cors_origins = "*";
  // Response bodies of at least this many bytes are compressed when the request's
  // Accept-Encoding asks for gzip or deflate (DynamoDB's threshold is 4 KB).
  size_t compress_min_bytes = 4096;
  // Fault rules for applications (http/faults.h); null: none. Shared by the listeners.
  FaultInjector* faults = nullptr;
  // Whether this listener answers PUT, GET and DELETE /faults (the admin listener always; the
  // data listener with --allow-fault-api).
  bool serve_fault_api = false;
  // Open mode only: each access key and region has its own tables (LocalAccount), and requests
  // act in the region they are signed for, as DynamoDB Local does without -sharedDb.
  bool database_per_key = false;
  // Every request acts in `region`, whatever region it is signed for (DynamoDB Local's
  // -sharedDb); otherwise a request acts in the region of its signature.
  bool one_region = false;
  // The --mcp-listen listener's router only: every request is a Model Context Protocol request
  // (http/mcp_endpoint.h), none a DynamoDB call. Null on the other listeners.
  const McpHttp* mcp = nullptr;
  // Whether POSTs are API calls (the data listener). The admin listener takes none, except at
  // kConsoleApiPath when it serves the console.
  bool serve_api = true;
  // Whether GET /console/ answers with the browser console (console/files.h) and
  // /console/config.json with what the page needs to know; its API calls are POSTs to
  // kConsoleApiPath. The admin listener serves it, and the data listener when it has no admin
  // listener beside it, is in open mode and listens on loopback (server.cc decides).
  bool serve_console = false;
  // Amazon S3's REST API over the export root (http/s3_endpoint.h), for requests signed for
  // service "s3"; null: none (the admin and MCP listeners, and tests).
  s3::Service* s3 = nullptr;
};

// A header's value ("" when absent; the first of several), looked up without regard to case.
std::string_view Header(const HttpRequest& request, boost::beast::http::field field);
std::string_view Header(const HttpRequest& request, std::string_view name);

// Where the console page sends its API calls (signed for this path, as SigV4 requires).
inline constexpr std::string_view kConsoleApiPath = "/console/api";

// Every operation in the DynamoDB and DynamoDB Streams API models (botocore's service-2
// files plus operations added to DynamoDB since). Used to label metrics: any other name is
// counted as "unknown", so clients cannot grow the metrics without bound.
bool IsKnownOperation(api::Service service, std::string_view name);

class Router {
 public:
  Router(const api::OperationRegistry& registry, RouterOptions options);

  // POST requests are API calls (DynamoDB ignores the path); everything else is local. On a
  // router with serve_api false (the admin listener), only the console's POSTs to
  // kConsoleApiPath are.
  bool IsApiCall(const HttpRequest& request) const;

  // API calls cheap and bounded enough to run on the network thread: GetItem (one item of at
  // most 400 KB, read without waiting for any commit).
  static bool IsInlineRead(const HttpRequest& request);

  // GET / (health: "healthy: <Host> "), GET /metrics, GET /metrics/prometheus, GET /console/...
  // (when served), OPTIONS (a CORS preflight); 404 UnknownOperationException for anything else, as
  // DynamoDB answers a GET of another path. Cheap: runs on the IO thread.
  HttpResponse HandleLocal(const HttpRequest& request) const;

  // The whole API pipeline. Never throws: anything unexpected becomes InternalServerError,
  // counted in fdyno_internal_errors_total.
  HttpResponse HandleApi(const HttpRequest& request) const;

  // HandleApi on a thread that must never wait (a network thread) for an IsInlineRead request:
  // its kv::Run makes its attempts without backing off (kv::NoWaitScope). nullopt when an attempt
  // met a retryable engine error: the read had no effect, nothing was counted or logged, and the
  // request is to be run again with HandleApi on a thread that may wait (a worker).
  std::optional<HttpResponse> HandleInline(const HttpRequest& request) const;

  // Whether the request's operation has an asynchronous form (api::AsyncHandler), which
  // HandleApiAsync runs on the network thread: kWrite for the single-item writes (up to their
  // commit, which completes without a waiting thread), kRead for Query and Scan (small pages).
  enum class AsyncForm { kNone, kRead, kWrite };
  AsyncForm AsyncFormOf(const HttpRequest& request) const;

  // Whether fault rules are set: API calls then run on a worker, where a rule's delay may wait.
  bool faults_active() const { return options_.faults != nullptr && options_.faults->active(); }

  // Runs a task later on the calling connection's network thread.
  using Resume = std::function<void(std::function<void()>)>;

  // HandleApi answering through `respond`: called exactly once, on this thread before
  // HandleApiAsync returns, or later on a task handed to `resume` (or, after a retry, on a
  // worker). The request may be destroyed once this returns.
  void HandleApiAsync(const HttpRequest& request, std::function<void(HttpResponse)> respond,
                      Resume resume) const;

  // The answer when the worker pool's queue is full: ThrottlingException, counted.
  HttpResponse Throttled(const HttpRequest& request) const;

  // A DynamoDB-style error for a request rejected before it was complete (body too large,
  // header too large, ...), counted under operation "unknown" unless the target is known.
  HttpResponse Rejected(const Error& error, std::string_view target_header = {}) const;

  // API requests read in full and not yet answered (queued for a worker or running). The
  // connection layer moves it, since it sees requests before a worker takes them.
  Gauge& in_flight() const { return *in_flight_; }

 private:
  struct OperationMetrics {
    Counter* requests;
    Histogram* latency;
  };
  // What answering a request needs of it once it may be gone: the response encoding it
  // accepts, its CORS origin, and what the access log says of it.
  struct Exchange {
    std::chrono::steady_clock::time_point start;
    std::optional<ContentEncoding> encoding;  // for the response
    std::string cors_headers;                 // header lines for an allowed Origin; empty: none
    uint64_t bytes_in = 0;
    std::string account;
    std::string table;
    std::string operation;  // for the access log when not an API call ("GET /metrics")
  };
  struct Target {
    api::Service service = api::Service::kDynamoDB;
    std::string_view operation;  // empty: no or malformed X-Amz-Target
    bool valid = false;
  };
  static Target ParseTarget(std::string_view header);
  std::string_view Label(const Target& target) const;
  const OperationMetrics& MetricsFor(std::string_view label) const;
  // An error response, counted; a 500 is logged with `cause` (default: the error's message,
  // which for an engine error never reaches the client).
  HttpResponse Error(std::string_view label, const fdyno::Error& error,
                     std::string_view content_type, std::string request_id,
                     std::string_view cause = {}) const;
  Exchange Begin(const HttpRequest& request) const;
  HttpResponse Local(const HttpRequest& request, std::string_view path) const;
  // PUT (replace the rules with the body's), GET (the rules and their counts), DELETE /faults.
  HttpResponse FaultsApi(const HttpRequest& request) const;
  // The keys signatures are checked against: --credentials', or none (open mode).
  const CredentialStore& Credentials() const;
  // SigV4's options for a request arriving now.
  VerifyOptions VerifyNow() const;
  // An S3 API call (http/s3_endpoint.h), counted and logged.
  HttpResponse S3Call(const HttpRequest& request) const;
  // GET /console and /console/<file>: the embedded page, or its config.json.
  HttpResponse Console(std::string_view path) const;
  std::string ConsoleConfigJson() const;
  // Compresses the body when the client asked, adds the CORS headers, writes the access log.
  void Finish(const Exchange& exchange, std::string_view label, HttpResponse& response) const;
  // HandleApi (respond null: the response in *out) or HandleApiAsync (through *respond).
  // *respond is moved from. no_wait: HandleInline (*out left empty when the request is to be
  // run again elsewhere).
  void HandleApiAsyncOrNot(const HttpRequest& request, std::function<void(HttpResponse)>* respond,
                           Resume resume, std::optional<HttpResponse>* out,
                           bool no_wait = false) const;
  // Receives an operation's response with its metrics label (HandleApiAsync).
  using Later = std::function<void(std::string_view label, HttpResponse response)>;
  // The API pipeline. With `later`, an operation that has an asynchronous form answers
  // through it, and Run returns nullopt. With no_wait, the handler runs under kv::NoWaitScope
  // and Run returns nullopt when it ended on a retryable engine error.
  std::optional<HttpResponse> Run(const HttpRequest& request, std::string_view content_type,
                                  std::string request_id, std::string_view& label,
                                  Exchange* exchange, std::shared_ptr<const Later> later,
                                  Resume resume, bool no_wait) const;
  HttpResponse Render(std::string_view label, Result<std::string> result,
                      std::string_view content_type, std::string request_id) const;
  // Runs the operation (`run`) as a fault rule decided: delayed, answered instead, its answer
  // replaced by an unknown outcome, or held or dropped by the connection.
  HttpResponse RunFaulted(FaultDecision fault, std::string_view label,
                          std::string_view content_type, std::string request_id,
                          const std::function<Result<std::string>()>& run) const;

  const api::OperationRegistry& registry_;
  RouterOptions options_;
  CredentialStore open_store_;
  Metrics* metrics_;
  Gauge* in_flight_;
  Counter* internal_errors_;
  std::map<std::string, OperationMetrics, std::less<>> per_operation_;
  std::vector<std::string> cors_allowed_;  // options_.cors_origins split; {"*"} for any
};

}  // namespace fdyno::http
