#include "http/router.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <exception>
#include <iterator>
#include <thread>
#include <utility>
#include <vector>

#include "base/utf8.h"
#include "console/files.h"
#include "http/access_log.h"
#include "http/ascii.h"
#include "http/compression.h"
#include "http/mcp_endpoint.h"
#include "http/metrics_render.h"
#include "http/s3_endpoint.h"
#include "http/wire.h"
#include "kv/run.h"

namespace fdyno::http {
namespace {

namespace bhttp = boost::beast::http;

constexpr std::string_view kDynamoPrefix = "DynamoDB_20120810.";
constexpr std::string_view kStreamsPrefix = "DynamoDBStreams_20120810.";
constexpr std::string_view kUnknownLabel = "unknown";
// JSON nesting deeper than this is rejected before any handler walks the document (DynamoDB
// allows 32 levels of nested attributes, which take at most about 70 JSON levels).
constexpr int kMaxJsonDepth = 100;
// A thread keeps its parse buffer (ParseBuffer) for bodies up to this size.
constexpr size_t kReusedParseBufferBytes = 64 << 10;

// Sorted, for binary search.
constexpr std::string_view kDynamoOperations[] = {
    "BatchExecuteStatement",
    "BatchGetItem",
    "BatchWriteItem",
    "CreateBackup",
    "CreateGlobalTable",
    "CreateTable",
    "DeleteBackup",
    "DeleteItem",
    "DeleteResourcePolicy",
    "DeleteTable",
    "DescribeBackup",
    "DescribeContinuousBackups",
    "DescribeContributorInsights",
    "DescribeEndpoints",
    "DescribeExport",
    "DescribeGlobalTable",
    "DescribeGlobalTableSettings",
    "DescribeImport",
    "DescribeKinesisStreamingDestination",
    "DescribeLimits",
    "DescribeTable",
    "DescribeTableReplicaAutoScaling",
    "DescribeTimeToLive",
    "DisableKinesisStreamingDestination",
    "EnableKinesisStreamingDestination",
    "ExecuteStatement",
    "ExecuteTransaction",
    "ExportTableToPointInTime",
    "GetItem",
    "GetResourcePolicy",
    "ImportTable",
    "ListBackups",
    "ListContributorInsights",
    "ListExports",
    "ListGlobalTables",
    "ListImports",
    "ListTables",
    "ListTagsOfResource",
    "PutItem",
    "PutResourcePolicy",
    "Query",
    "RestoreTableFromBackup",
    "RestoreTableToPointInTime",
    "Scan",
    "TagResource",
    "TransactGetItems",
    "TransactWriteItems",
    "UntagResource",
    "UpdateContinuousBackups",
    "UpdateContributorInsights",
    "UpdateGlobalTable",
    "UpdateGlobalTableSettings",
    "UpdateItem",
    "UpdateKinesisStreamingDestination",
    "UpdateTable",
    "UpdateTableReplicaAutoScaling",
    "UpdateTimeToLive",
};
constexpr std::string_view kStreamsOperations[] = {"DescribeStream", "GetRecords",
                                                   "GetShardIterator", "ListStreams"};

// The media type of a Content-Type value (parameters and surrounding spaces dropped), to be
// compared without regard to case.
std::string_view MediaType(std::string_view content_type) {
  size_t semi = content_type.find(';');
  std::string_view type = content_type.substr(0, semi);
  while (!type.empty() && type.back() == ' ') type.remove_suffix(1);
  while (!type.empty() && type.front() == ' ') type.remove_prefix(1);
  return type;
}

// A copy of a request body to parse in place. Its storage is this thread's spare buffer, taken
// here and handed back when the copy dies (after the document that points into it), so small
// bodies reuse one allocation; a nested use finds no spare and allocates its own.
struct ParseBuffer {
  explicit ParseBuffer(std::string_view body) : text(std::exchange(Spare(), {})) {
    text.assign(body);
  }
  ~ParseBuffer() {
    if (text.capacity() <= kReusedParseBufferBytes) Spare() = std::move(text);
  }
  ParseBuffer(const ParseBuffer&) = delete;
  ParseBuffer& operator=(const ParseBuffer&) = delete;

  static std::string& Spare() {
    thread_local std::string spare;
    return spare;
  }

  std::string text;
};

// Names of response headers a browser page may read (CORS).
constexpr std::string_view kCorsExposed = "x-amzn-RequestId,x-amzn-ErrorType,x-amz-crc32,Date";
constexpr int kCorsMaxAgeSeconds = 7200;  // Chrome's maximum
constexpr size_t kMaxCorsRequestHeaders = 4096;
// Paths and hosts echoed into logs and answers are cut to this many bytes.
constexpr size_t kMaxLoggedPathBytes = 256;
// zlib level for response bodies: 1 (fastest) compresses DynamoDB JSON well at a fraction of
// level 6's CPU (bench/README.md, "Figures behind settings in the code"), and the answer may
// be compressed on a network thread.
constexpr int kResponseCompressionLevel = 1;
// The cause a 500 injected by a fault rule is logged with.
constexpr std::string_view kInjected = "injected by a fault rule";
// The access log names at most this many tables of one request.
constexpr size_t kMaxLoggedTables = 4;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The table of a stream ARN (arn:aws:dynamodb:<region>:<account>:table/<name>/stream/<label>),
// or "" when `arn` is not shaped like one.
std::string_view TableOfStreamArn(std::string_view arn) {
  const size_t begin = arn.find(":table/");
  if (begin == std::string_view::npos) return {};
  std::string_view rest = arn.substr(begin + 7);
  const size_t end = rest.find("/stream/");
  return end == std::string_view::npos ? std::string_view() : rest.substr(0, end);
}

// The table(s) a request names, for the access log: TableName, the keys of RequestItems
// (batches), the TableName of each TransactItems action, the table of a StreamArn. Names only,
// never keys or values (a GetRecords ShardIterator is not looked into).
std::string TablesOf(const rapidjson::Value& document) {
  std::vector<std::string_view> names;
  auto add_name = [&](std::string_view name) {
    name = name.substr(0, 255);
    if (name.empty()) return;
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  };
  auto add = [&](const rapidjson::Value& v) {
    if (v.IsString()) add_name({v.GetString(), v.GetStringLength()});
  };
  if (auto it = document.FindMember("TableName"); it != document.MemberEnd()) add(it->value);
  if (auto it = document.FindMember("StreamArn");
      it != document.MemberEnd() && it->value.IsString()) {
    add_name(TableOfStreamArn({it->value.GetString(), it->value.GetStringLength()}));
  }
  if (auto it = document.FindMember("RequestItems");
      it != document.MemberEnd() && it->value.IsObject()) {
    for (const auto& m : it->value.GetObject()) add(m.name);
  }
  if (auto it = document.FindMember("TransactItems");
      it != document.MemberEnd() && it->value.IsArray()) {
    for (const auto& action : it->value.GetArray()) {
      if (!action.IsObject()) continue;
      for (const auto& kind : action.GetObject()) {
        if (!kind.value.IsObject()) continue;
        if (auto t = kind.value.FindMember("TableName"); t != kind.value.MemberEnd()) {
          add(t->value);
        }
      }
    }
  }
  std::string out;
  for (size_t i = 0; i < names.size() && i < kMaxLoggedTables; ++i) {
    if (i > 0) out += ',';
    out += names[i];
  }
  if (names.size() > kMaxLoggedTables) {
    out += ",+" + std::to_string(names.size() - kMaxLoggedTables);
  }
  return out;
}

int JsonDepth(const rapidjson::Value& root) {
  std::vector<std::pair<const rapidjson::Value*, int>> stack{{&root, 1}};
  int max_depth = 0;
  while (!stack.empty()) {
    auto [v, depth] = stack.back();
    stack.pop_back();
    max_depth = std::max(max_depth, depth);
    if (max_depth > kMaxJsonDepth) return max_depth;
    if (v->IsObject()) {
      for (const auto& m : v->GetObject()) {
        if (m.value.IsObject() || m.value.IsArray()) stack.emplace_back(&m.value, depth + 1);
      }
    } else if (v->IsArray()) {
      for (const auto& e : v->GetArray()) {
        if (e.IsObject() || e.IsArray()) stack.emplace_back(&e, depth + 1);
      }
    }
  }
  return max_depth;
}

}  // namespace

std::string_view Header(const HttpRequest& r, bhttp::field f) {
  auto it = r.find(f);
  if (it == r.end()) return {};
  return {it->value().data(), it->value().size()};
}

std::string_view Header(const HttpRequest& r, std::string_view name) {
  auto it = r.find(boost::beast::string_view(name.data(), name.size()));
  if (it == r.end()) return {};
  return {it->value().data(), it->value().size()};
}

bool IsKnownOperation(api::Service service, std::string_view name) {
  if (name.empty()) return false;
  if (service == api::Service::kStreams) {
    return std::find(std::begin(kStreamsOperations), std::end(kStreamsOperations), name) !=
           std::end(kStreamsOperations);
  }
  return std::binary_search(std::begin(kDynamoOperations), std::end(kDynamoOperations), name);
}

Router::Router(const api::OperationRegistry& registry, RouterOptions options)
    : registry_(registry), options_(std::move(options)) {
  if (options_.clock == nullptr) options_.clock = Clock::Real();
  metrics_ = options_.metrics ? options_.metrics : &Metrics::Global();
  metrics_->Describe("fdyno_in_flight_requests",
                     "API requests read in full and not yet answered (queued or running).");
  metrics_->Describe("fdyno_internal_errors_total",
                     "Requests answered 500 because of an unexpected exception (a bug).");
  metrics_->Describe("fdyno_requests_total", "API requests answered, by operation.");
  metrics_->Describe("fdyno_s3_requests_total",
                     "S3 API calls beside the DynamoDB endpoint, by operation.");
  metrics_->Describe("fdyno_errors_total",
                     "API requests answered with an error, by operation and error type.");
  metrics_->Describe("fdyno_request_duration_seconds",
                     "Time from a request's arrival to its answer, by operation; the last finite "
                     "bucket is the operation timeout.");
  in_flight_ = &metrics_->GetGauge("fdyno_in_flight_requests");
  internal_errors_ = &metrics_->GetCounter("fdyno_internal_errors_total");
  // Up to the operation timeout, past which no operation runs.
  const std::vector<int64_t> latency_bounds = Histogram::LatencyBoundsUpToUs(
      std::chrono::duration_cast<std::chrono::microseconds>(options_.operation_timeout).count());
  auto add = [&](std::string_view name) {
    std::string key(name);
    if (per_operation_.count(key)) return;
    OperationMetrics m{&metrics_->GetCounter("fdyno_requests_total", {{"operation", key}}),
                       &metrics_->GetHistogram("fdyno_request_duration_seconds",
                                               {{"operation", key}}, latency_bounds)};
    per_operation_.emplace(std::move(key), m);
  };
  for (auto name : kDynamoOperations) add(name);
  for (auto name : kStreamsOperations) add(name);
  for (auto service : {api::Service::kDynamoDB, api::Service::kStreams}) {
    for (const auto& name : registry_.Names(service)) add(name);
  }
  add(kUnknownLabel);
  std::string_view origins = options_.cors_origins;
  while (!origins.empty()) {
    size_t comma = origins.find(',');
    std::string_view origin = Trim(origins.substr(0, comma));
    origins = comma == std::string_view::npos ? std::string_view() : origins.substr(comma + 1);
    if (!origin.empty()) cors_allowed_.emplace_back(origin);
  }
}

bool Router::IsApiCall(const HttpRequest& request) const {
  if (request.method() != bhttp::verb::post) {
    return options_.s3 != nullptr && options_.serve_api && IsS3Request(request);
  }
  if (options_.serve_api) return true;
  std::string_view target(request.target().data(), request.target().size());
  return options_.serve_console && target.substr(0, target.find('?')) == kConsoleApiPath;
}

bool Router::IsInlineRead(const HttpRequest& request) {
  Target target = ParseTarget(Header(request, "x-amz-target"));
  return target.service == api::Service::kDynamoDB && target.operation == "GetItem";
}

Router::Target Router::ParseTarget(std::string_view header) {
  Target t;
  if (header.substr(0, kDynamoPrefix.size()) == kDynamoPrefix) {
    t.service = api::Service::kDynamoDB;
    t.operation = header.substr(kDynamoPrefix.size());
  } else if (header.substr(0, kStreamsPrefix.size()) == kStreamsPrefix) {
    t.service = api::Service::kStreams;
    t.operation = header.substr(kStreamsPrefix.size());
  }
  t.valid = !t.operation.empty();
  return t;
}

std::string_view Router::Label(const Target& target) const {
  if (!target.valid) return kUnknownLabel;
  if (IsKnownOperation(target.service, target.operation) ||
      registry_.Find(target.service, target.operation) != nullptr) {
    // The metrics map's own copy of the name, which outlives the request: an asynchronous
    // answer uses the label after the request is gone.
    auto it = per_operation_.find(target.operation);
    if (it != per_operation_.end()) return it->first;
  }
  return kUnknownLabel;
}

const Router::OperationMetrics& Router::MetricsFor(std::string_view label) const {
  auto it = per_operation_.find(label);
  if (it == per_operation_.end()) it = per_operation_.find(kUnknownLabel);
  return it->second;
}

HttpResponse Router::Error(std::string_view label, const fdyno::Error& original,
                           std::string_view content_type, std::string request_id,
                           std::string_view cause) const {
  const fdyno::Error error = ClientError(original);
  ErrorType type = error.is_kv() ? ErrorType::kInternalServerError : error.type;
  metrics_
      ->GetCounter("fdyno_errors_total",
                   {{"operation", std::string(label)}, {"error_type", std::string(WireType(type))}})
      .Add();
  HttpResponse r;
  r.status = static_cast<unsigned>(HttpStatus(type));
  if (r.status == 500) {
    // The client sees "Internal server error"; the operator sees why.
    spdlog::error("request {} ({}) answered 500: {}{}", request_id, label,
                  error.is_kv() ? "engine error " + std::to_string(error.kv_code) + ": " : "",
                  cause.empty() ? std::string_view(error.message) : cause);
  }
  r.content_type = std::string(content_type);
  r.body = RenderErrorBody(error);
  r.request_id = std::move(request_id);
  r.error_type = WireType(type);
  return r;
}

Router::Exchange Router::Begin(const HttpRequest& request) const {
  Exchange e;
  e.start = std::chrono::steady_clock::now();
  e.bytes_in = request.body().size();
  // Several Accept-Encoding headers are one list (RFC 9110 section 5.3), in their order.
  std::string accept;
  auto [first, last] = request.equal_range(bhttp::field::accept_encoding);
  for (auto it = first; it != last; ++it) {
    if (!accept.empty()) accept += ", ";
    accept.append(it->value().data(), it->value().size());
  }
  if (!accept.empty()) e.encoding = ChooseResponseEncoding(accept);
  std::string_view origin = Header(request, bhttp::field::origin);
  if (origin.empty() || cors_allowed_.empty()) return e;
  const bool any = cors_allowed_.front() == "*";
  if (!any &&
      std::find(cors_allowed_.begin(), cors_allowed_.end(), origin) == cors_allowed_.end()) {
    return e;  // not allowed: no CORS headers, so the browser keeps the answer from the page
  }
  e.cors_headers = "Access-Control-Allow-Origin: ";
  e.cors_headers += any ? std::string_view("*") : origin;
  e.cors_headers += "\r\nAccess-Control-Expose-Headers: " + std::string(kCorsExposed) + "\r\n";
  if (!any) e.cors_headers += "Vary: Origin\r\n";
  if (request.method() == bhttp::verb::options) {
    e.cors_headers += "Access-Control-Allow-Methods: GET, HEAD, POST, OPTIONS\r\n";
    std::string_view asked = Header(request, bhttp::field::access_control_request_headers);
    if (!asked.empty() && asked.size() <= kMaxCorsRequestHeaders) {
      e.cors_headers += "Access-Control-Allow-Headers: " + std::string(asked) + "\r\n";
    }
    e.cors_headers += "Access-Control-Max-Age: " + std::to_string(kCorsMaxAgeSeconds) + "\r\n";
  }
  return e;
}

void Router::Finish(const Exchange& e, std::string_view label, HttpResponse& r) const {
  if (e.encoding && r.body.size() >= options_.compress_min_bytes) {
    r.body = Compress(r.body, *e.encoding, kResponseCompressionLevel);
    r.content_encoding = EncodingName(*e.encoding);
  }
  r.headers += e.cors_headers;
  if (options_.access_log == nullptr) return;
  AccessRecord record;
  record.time = std::chrono::system_clock::now();
  record.request_id = r.request_id;
  record.account = e.account;
  record.operation = e.operation.empty() ? label : std::string_view(e.operation);
  record.table = e.table;
  record.status = r.status;
  record.error_type = r.error_type;
  record.latency_us = std::chrono::duration_cast<std::chrono::microseconds>(
                          std::chrono::steady_clock::now() - e.start)
                          .count();
  record.bytes_in = e.bytes_in;
  record.bytes_out = r.body.size();
  options_.access_log->info(FormatAccessRecord(record, options_.access_log_json));
}

HttpResponse Router::HandleLocal(const HttpRequest& request) const {
  if (options_.mcp != nullptr) return AnswerMcp(request, *options_.mcp);  // never POST here
  Exchange exchange = Begin(request);
  std::string_view target(request.target().data(), request.target().size());
  std::string_view path = target.substr(0, target.find('?'));
  // The access log names the route, never the query string (a presigned URL's signature).
  exchange.operation = std::string(request.method_string().data(), request.method_string().size())
                           .append(" ")
                           .append(path.substr(0, kMaxLoggedPathBytes));
  HttpResponse r = Local(request, path);
  r.request_id = NewRequestId();
  Finish(exchange, kUnknownLabel, r);
  return r;
}

HttpResponse Router::Local(const HttpRequest& request, std::string_view path) const {
  bool get = request.method() == bhttp::verb::get || request.method() == bhttp::verb::head;
  HttpResponse r;
  if (request.method() == bhttp::verb::options) {  // a CORS preflight: Finish adds the headers
    r.content_type = "text/plain";
    return r;
  }
  if (get && path == "/") {
    // DynamoDB answers with the host it was asked by ("healthy: dynamodb.us-east-1...").
    std::string_view host = Header(request, bhttp::field::host);
    r.content_type = "text/plain";
    r.body = "healthy: " +
             (host.empty() ? "dynamodb." + options_.region + ".amazonaws.com"
                           : std::string(host.substr(0, kMaxLoggedPathBytes))) +
             " ";
    return r;
  }
  if (options_.serve_fault_api && options_.faults != nullptr && path == "/faults") {
    return FaultsApi(request);
  }
  if (get && options_.serve_console && (path == "/console" || path.starts_with("/console/"))) {
    return Console(path);
  }
  if (get && options_.serve_metrics && path == "/metrics") {
    r.content_type = "application/json";
    r.body = RenderMetricsJson(*metrics_);
    return r;
  }
  if (auto page = options_.metrics_pages.find(path);
      get && options_.serve_metrics && page != options_.metrics_pages.end()) {
    r.content_type = "application/json";
    r.body = page->second();
    return r;
  }
  if (get && options_.serve_metrics && path == "/metrics/prometheus") {
    r.content_type = kPrometheusContentType;
    r.body = RenderMetricsPrometheus(*metrics_);
    return r;
  }
  r.status = 404;
  r.body = RenderErrorBody(fdyno::Error::Make(ErrorType::kUnknownOperation, ""));
  r.error_type = WireType(ErrorType::kUnknownOperation);
  return r;
}

const CredentialStore& Router::Credentials() const {
  return options_.credentials ? *options_.credentials : open_store_;
}

VerifyOptions Router::VerifyNow() const {
  VerifyOptions verify;
  verify.region = options_.region;
  verify.now_ms = options_.clock->WallMillis();
  return verify;
}

HttpResponse Router::S3Call(const HttpRequest& request) const {
  Exchange exchange = Begin(request);
  exchange.encoding.reset();  // S3 sends objects as they are
  S3Answer answer = AnswerS3(request, *options_.s3, Credentials(), VerifyNow(), NewRequestId());
  exchange.account = std::move(answer.account);
  exchange.operation = "S3 " + std::string(answer.operation);
  metrics_->GetCounter("fdyno_s3_requests_total", {{"operation", std::string(answer.operation)}})
      .Add();
  Finish(exchange, answer.operation, answer.response);
  return std::move(answer.response);
}

HttpResponse Router::Console(std::string_view path) const {
  HttpResponse r;
  // The page loads nothing from elsewhere and talks to this listener only.
  r.headers =
      "Content-Security-Policy: default-src 'self'; img-src 'self' data:; "
      "frame-ancestors 'none'\r\nX-Content-Type-Options: nosniff\r\n";
  std::string_view name = path.size() > 9 ? path.substr(9) : std::string_view();  // "/console/"
  if (name == "config.json") {
    r.content_type = "application/json";
    r.body = ConsoleConfigJson();
    return r;
  }
  const console::EmbeddedFile* file = console::FindFile(name);
  if (file == nullptr) {
    r.status = 404;
    r.content_type = "text/plain; charset=utf-8";
    r.body = "no such console file\n";
    return r;
  }
  r.content_type = std::string(console::ContentTypeOf(file->name));
  r.body = std::string(file->body);
  return r;
}

std::string Router::ConsoleConfigJson() const {
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  w.StartObject();
  w.Key("region");
  w.String(options_.region.data(), static_cast<rapidjson::SizeType>(options_.region.size()));
  w.Key("signIn");  // whether the page must ask for a key pair (--credentials)
  w.Bool(!Credentials().empty());
  w.Key("apiPath");
  w.String(kConsoleApiPath.data(), static_cast<rapidjson::SizeType>(kConsoleApiPath.size()));
  w.Key("metrics");
  w.Bool(options_.serve_metrics);
  w.EndObject();
  return out.GetString();
}

HttpResponse Router::FaultsApi(const HttpRequest& request) const {
  HttpResponse r;
  r.content_type = "application/json";
  if (request.method() == bhttp::verb::put) {
    if (Status set = options_.faults->Replace(request.body()); !set.ok()) {
      r.status = 400;
      r.body = RenderErrorBody(set.error());
      r.error_type = WireType(set.error().type);
      return r;
    }
  } else if (request.method() == bhttp::verb::delete_) {
    options_.faults->Clear();
  } else if (request.method() != bhttp::verb::get && request.method() != bhttp::verb::head) {
    r.status = 405;
    r.body = RenderErrorBody(fdyno::Error::Validation("/faults answers GET, PUT and DELETE"));
    r.error_type = WireType(ErrorType::kValidation);
    return r;
  }
  r.body = options_.faults->Describe();
  return r;
}

HttpResponse Router::Throttled(const HttpRequest& request) const {
  Exchange exchange = Begin(request);
  Target target = ParseTarget(Header(request, "x-amz-target"));
  std::string_view label = Label(target);
  MetricsFor(label).requests->Add();
  HttpResponse r = Error(label,
                         fdyno::Error::Make(ErrorType::kThrottling,
                                            "Rate of requests exceeds the allowed throughput."),
                         "application/x-amz-json-1.0", NewRequestId());
  Finish(exchange, label, r);
  return r;
}

HttpResponse Router::Rejected(const fdyno::Error& error, std::string_view target_header) const {
  Exchange exchange;
  exchange.start = std::chrono::steady_clock::now();
  std::string_view label = Label(ParseTarget(target_header));
  MetricsFor(label).requests->Add();
  HttpResponse r = Error(label, error, "application/x-amz-json-1.0", NewRequestId());
  Finish(exchange, label, r);
  return r;
}

HttpResponse Router::HandleApi(const HttpRequest& request) const {
  if (options_.mcp != nullptr) return AnswerMcp(request, *options_.mcp);
  if (options_.s3 != nullptr && IsS3Request(request)) return S3Call(request);
  std::optional<HttpResponse> response;
  HandleApiAsyncOrNot(request, nullptr, nullptr, &response);
  return std::move(*response);
}

std::optional<HttpResponse> Router::HandleInline(const HttpRequest& request) const {
  if (options_.mcp != nullptr) return std::nullopt;  // a tool call may wait: on a worker
  std::optional<HttpResponse> response;
  HandleApiAsyncOrNot(request, nullptr, nullptr, &response, /*no_wait=*/true);
  return response;
}

void Router::HandleApiAsync(const HttpRequest& request, std::function<void(HttpResponse)> respond,
                            Resume resume) const {
  // Moved from by HandleApiAsyncOrNot.
  HandleApiAsyncOrNot(request, &respond, std::move(resume), nullptr);
}

void Router::HandleApiAsyncOrNot(const HttpRequest& request,
                                 std::function<void(HttpResponse)>* respond, Resume resume,
                                 std::optional<HttpResponse>* out, bool no_wait) const {
  auto start = std::chrono::steady_clock::now();
  std::string request_id = NewRequestId();
  // A static string: an asynchronous answer may use it after the request is gone.
  std::string_view content_type =
      AsciiIEquals(MediaType(Header(request, bhttp::field::content_type)),
                   "application/x-amz-json-1.1")
          ? "application/x-amz-json-1.1"
          : "application/x-amz-json-1.0";
  // Counts the request and its latency, then answers: into *out (HandleApi), or through
  // respond, now or from an operation that answers after Run returned (HandleApiAsync).
  // Shared with such an operation's continuation, and kept here for the exception paths.
  auto exchange = std::make_shared<Exchange>(Begin(request));
  exchange->start = start;
  auto answer = std::make_shared<const Later>(
      [this, start, out, exchange,
       respond = respond != nullptr ? std::move(*respond) : std::function<void(HttpResponse)>()](
          std::string_view label, HttpResponse response) {
        const OperationMetrics& m = MetricsFor(label);
        m.requests->Add();
        m.latency->Observe(std::chrono::duration_cast<std::chrono::microseconds>(
                               std::chrono::steady_clock::now() - start)
                               .count());
        Finish(*exchange, label, response);
        if (out != nullptr) {
          *out = std::move(response);
        } else {
          respond(std::move(response));
        }
      });
  std::string_view label = kUnknownLabel;
  std::optional<HttpResponse> response;
  try {
    response = Run(request, content_type, request_id, label, exchange.get(),
                   respond != nullptr ? answer : nullptr, std::move(resume), no_wait);
  } catch (const std::exception& e) {
    internal_errors_->Add();
    response = Error(label, fdyno::Error::Internal("Internal server error"), content_type,
                     request_id, std::string("unexpected exception: ") + e.what());
  } catch (...) {
    internal_errors_->Add();
    response = Error(label, fdyno::Error::Internal("Internal server error"), content_type,
                     request_id, "unexpected non-standard exception");
  }
  if (response) (*answer)(label, std::move(*response));
}

Router::AsyncForm Router::AsyncFormOf(const HttpRequest& request) const {
  if (options_.mcp != nullptr) return AsyncForm::kNone;
  Target target = ParseTarget(Header(request, "x-amz-target"));
  if (target.service != api::Service::kDynamoDB ||
      registry_.FindAsync(target.operation) == nullptr) {
    return AsyncForm::kNone;
  }
  const bool write = target.operation == "PutItem" || target.operation == "UpdateItem" ||
                     target.operation == "DeleteItem";
  return write ? AsyncForm::kWrite : AsyncForm::kRead;
}

HttpResponse Router::Render(std::string_view label, Result<std::string> result,
                            std::string_view content_type, std::string request_id) const {
  if (!result.ok()) return Error(label, result.error(), content_type, std::move(request_id));
  HttpResponse r;
  r.content_type = std::string(content_type);
  r.body = std::move(result).value();
  r.request_id = std::move(request_id);
  return r;
}

std::optional<HttpResponse> Router::Run(const HttpRequest& request, std::string_view content_type,
                                        std::string request_id, std::string_view& label,
                                        Exchange* exchange, std::shared_ptr<const Later> later,
                                        Resume resume, bool no_wait) const {
  auto fail = [&](const fdyno::Error& e) { return Error(label, e, content_type, request_id); };
  const std::string& raw = request.body();
  // Under fault rules every request runs whole on a worker, where a rule's delay may wait.
  const bool faulty = faults_active();
  if (faulty && no_wait) return std::nullopt;
  if (faulty) later = nullptr;

  // DynamoDB answers requests that are not its JSON protocol as an unknown operation, 404.
  std::string_view media_type = MediaType(Header(request, bhttp::field::content_type));
  if (!raw.empty() && !AsciiIEquals(media_type, "application/x-amz-json-1.0") &&
      !AsciiIEquals(media_type, "application/x-amz-json-1.1") &&
      !AsciiIEquals(media_type, "application/json")) {
    HttpResponse r = fail(fdyno::Error::Make(ErrorType::kUnknownOperation, ""));
    r.status = 404;
    return r;
  }

  Target target = ParseTarget(Header(request, "x-amz-target"));
  label = Label(target);

  // Authentication comes before anything else is answered (an unsigned caller learns nothing,
  // not even which operations exist) and before any expensive work (decompression, parsing).
  const CredentialStore& store = Credentials();
  Result<Identity> identity = Verify(SignedRequestOf(request), store, VerifyNow());
  if (!identity.ok()) return fail(identity.error());
  // The request acts in the region its signature is scoped to, as a regional endpoint would.
  std::string region =
      options_.one_region || identity->region.empty() ? options_.region : identity->region;
  if (options_.database_per_key && store.empty()) {
    identity->account_id = LocalAccount(identity->access_key_id, identity->region);
  }
  exchange->account = identity->account_id;
  const api::Handler* handler =
      target.valid ? registry_.Find(target.service, target.operation) : nullptr;
  if (handler == nullptr) {
    // An operation of DynamoDB's API that fdyno lacks says so; any other name gets DynamoDB's
    // own answer to an unknown operation, which has no message.
    std::string message;
    if (IsKnownOperation(target.service, target.operation)) {
      message = std::string("fdyno does not support the ") +
                (target.service == api::Service::kStreams ? "DynamoDB Streams" : "DynamoDB") +
                " operation " + std::string(target.operation);
    }
    return fail(fdyno::Error::Make(ErrorType::kUnknownOperation, std::move(message)));
  }

  if (raw.size() > options_.max_body_bytes) {
    return fail(fdyno::Error::Make(ErrorType::kRequestEntityTooLarge,
                                   "Request body exceeds the maximum of " +
                                       std::to_string(options_.max_body_bytes) + " bytes"));
  }
  std::string_view encoding_header = Header(request, bhttp::field::content_encoding);
  std::optional<ContentEncoding> encoding = ParseContentEncoding(encoding_header);
  if (!encoding) {
    // A body in an encoding the server cannot decode fails to decompress: HTTP 500, as
    // DynamoDB answers.
    return fail(
        fdyno::Error::Internal("Unsupported Content-Encoding: " + std::string(encoding_header)));
  }
  std::string decoded;
  std::string_view body = raw;
  if (*encoding != ContentEncoding::kIdentity) {
    Result<std::string> inflated = Decompress(raw, *encoding, options_.max_body_bytes);
    if (!inflated.ok()) return fail(inflated.error());
    decoded = std::move(inflated).value();
    body = decoded;
  }

  if (body.empty()) return fail(fdyno::Error::Serialization(""));
  // A NUL byte is never valid JSON here; past this check the body parses as a C string.
  if (std::memchr(body.data(), '\0', body.size()) != nullptr) {
    return fail(fdyno::Error::Serialization(""));
  }
  // Every string must be valid UTF-8, as DynamoDB requires: nothing invalid is stored, compared
  // as a key or echoed. Checked over the raw body (bytes outside strings that are not ASCII
  // fail the parse anyway), faster than RapidJSON's per-character validation; escaped lone
  // surrogates are refused by the parser itself.
  if (!IsValidUtf8(body)) return fail(fdyno::Error::Serialization(""));
  // Parsed in place (RapidJSON's fastest path: no copy of each string), in a copy of the body
  // that the document's strings point into and that outlives it. Iterative parsing: deeply
  // nested input cannot exhaust the stack.
  ParseBuffer insitu(body);
  rapidjson::Document document;
  document.ParseInsitu<rapidjson::kParseIterativeFlag>(insitu.text.data());
  if (document.HasParseError()) return fail(fdyno::Error::Serialization(""));
  if (document.IsArray()) {
    return fail(fdyno::Error::Serialization("Start of list found where not expected"));
  }
  if (!document.IsObject()) return fail(fdyno::Error::Serialization(""));
  if (JsonDepth(document) > kMaxJsonDepth) {
    return fail(fdyno::Error::Validation(
        "Nesting Levels have exceeded supported limits: Attributes in the item have nested "
        "levels beyond supported limit"));
  }
  if (options_.access_log != nullptr) exchange->table = TablesOf(document);
  std::optional<FaultDecision> fault;
  if (faulty) {
    fault =
        options_.faults->Decide({target.operation, identity->account_id, request_id, &document});
  }

  api::RequestContext ctx;
  ctx.account_id = identity->account_id;
  ctx.access_key_id = identity->access_key_id;
  ctx.region = std::move(region);
  ctx.request_id = request_id;
  ctx.endpoint_host = std::string(Header(request, bhttp::field::host));
  ctx.clock = options_.clock;
  ctx.deadline = options_.clock->Now() + options_.operation_timeout;
  ctx.blocking = options_.blocking;
  ctx.resume = std::move(resume);
  const api::AsyncHandler* async = nullptr;
  if (later != nullptr && target.service == api::Service::kDynamoDB) {
    async = registry_.FindAsync(target.operation);
  }
  if (async != nullptr) {
    (*async)(ctx, document,
             // label and content_type are static strings (see Label and HandleApiAsyncOrNot).
             [this, later = std::move(later), label, content_type,
              request_id = std::move(request_id)](Result<std::string> result) mutable {
               (*later)(label,
                        Render(label, std::move(result), content_type, std::move(request_id)));
             });
    return std::nullopt;
  }
  if (no_wait) {
    kv::NoWaitScope scope;
    Result<std::string> result = (*handler)(ctx, document);
    if (!result.ok() && result.error().is_kv() && kv::IsRetryable(result.error().kv_code)) {
      return std::nullopt;  // to be run again where a retry may wait
    }
    return Render(label, std::move(result), content_type, std::move(request_id));
  }
  if (fault) {
    return RunFaulted(std::move(*fault), label, content_type, std::move(request_id),
                      [&] { return (*handler)(ctx, document); });
  }
  return Render(label, (*handler)(ctx, document), content_type, std::move(request_id));
}

HttpResponse Router::RunFaulted(FaultDecision fault, std::string_view label,
                                std::string_view content_type, std::string request_id,
                                const std::function<Result<std::string>()>& run) const {
  if (fault.delay_before.count() > 0) std::this_thread::sleep_for(fault.delay_before);
  HttpResponse r;
  if (fault.instead) {
    r = Error(label, *fault.instead, content_type, std::move(request_id), kInjected);
  } else {
    r = Render(label, run(), content_type, request_id);
    if (fault.unknown_after) {
      r = Error(label, fdyno::Error::Internal(std::string(kv::kOutcomeUnknownMessage)),
                content_type, std::move(request_id), kInjected);
    }
  }
  r.fault = fault.response;
  return r;
}

}  // namespace fdyno::http
