#include "http/router.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <exception>
#include <iterator>
#include <utility>
#include <vector>

#include "http/ascii.h"
#include "http/compression.h"
#include "http/metrics_render.h"
#include "http/wire.h"

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
  in_flight_ = &metrics_->GetGauge("fdyno_in_flight_requests");
  internal_errors_ = &metrics_->GetCounter("fdyno_internal_errors_total");
  auto add = [&](std::string_view name) {
    std::string key(name);
    if (per_operation_.count(key)) return;
    OperationMetrics m{
        &metrics_->GetCounter("fdyno_requests_total", {{"operation", key}}),
        &metrics_->GetHistogram("fdyno_request_duration_seconds", {{"operation", key}})};
    per_operation_.emplace(std::move(key), m);
  };
  for (auto name : kDynamoOperations) add(name);
  for (auto name : kStreamsOperations) add(name);
  for (auto service : {api::Service::kDynamoDB, api::Service::kStreams}) {
    for (const auto& name : registry_.Names(service)) add(name);
  }
  add(kUnknownLabel);
}

bool Router::IsApiCall(const HttpRequest& request) { return request.method() == bhttp::verb::post; }

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

HttpResponse Router::Error(std::string_view label, const fdyno::Error& error,
                           std::string_view content_type, std::string request_id) const {
  ErrorType type = error.is_kv() ? ErrorType::kInternalServerError : error.type;
  metrics_
      ->GetCounter("fdyno_errors_total",
                   {{"operation", std::string(label)}, {"error_type", std::string(WireType(type))}})
      .Add();
  HttpResponse r;
  r.status = static_cast<unsigned>(HttpStatus(type));
  r.content_type = std::string(content_type);
  r.body = RenderErrorBody(error);
  r.request_id = std::move(request_id);
  return r;
}

HttpResponse Router::HandleLocal(const HttpRequest& request) const {
  std::string_view target(request.target().data(), request.target().size());
  std::string_view path = target.substr(0, target.find('?'));
  bool get = request.method() == bhttp::verb::get || request.method() == bhttp::verb::head;
  HttpResponse r;
  if (get && path == "/") {
    r.content_type = "text/plain";
    r.body = "healthy: dynamodb." + options_.region + ".amazonaws.com ";
    return r;
  }
  if (get && options_.serve_metrics && path == "/metrics") {
    r.content_type = "application/json";
    r.body = RenderMetricsJson(*metrics_);
    return r;
  }
  if (get && options_.serve_metrics && path == "/metrics/prometheus") {
    r.content_type = kPrometheusContentType;
    r.body = RenderMetricsPrometheus(*metrics_);
    return r;
  }
  r.status = 404;
  r.body = RenderErrorBody(fdyno::Error::Make(ErrorType::kUnknownOperation, ""));
  return r;
}

HttpResponse Router::Throttled(const HttpRequest& request) const {
  Target target = ParseTarget(Header(request, "x-amz-target"));
  std::string_view label = Label(target);
  MetricsFor(label).requests->Add();
  return Error(label,
               fdyno::Error::Make(ErrorType::kThrottling,
                                  "Rate of requests exceeds the allowed throughput."),
               "application/x-amz-json-1.0", NewRequestId());
}

HttpResponse Router::Rejected(const fdyno::Error& error, std::string_view target_header) const {
  std::string_view label = Label(ParseTarget(target_header));
  MetricsFor(label).requests->Add();
  return Error(label, error, "application/x-amz-json-1.0", NewRequestId());
}

HttpResponse Router::HandleApi(const HttpRequest& request) const {
  std::optional<HttpResponse> response;
  HandleApiAsyncOrNot(request, nullptr, nullptr, &response);
  return std::move(*response);
}

void Router::HandleApiAsync(const HttpRequest& request, std::function<void(HttpResponse)> respond,
                            Resume resume) const {
  // Moved from by HandleApiAsyncOrNot.
  HandleApiAsyncOrNot(request, &respond, std::move(resume), nullptr);
}

void Router::HandleApiAsyncOrNot(const HttpRequest& request,
                                 std::function<void(HttpResponse)>* respond, Resume resume,
                                 std::optional<HttpResponse>* out) const {
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
  auto answer = std::make_shared<const Later>(
      [this, start, out,
       respond = respond != nullptr ? std::move(*respond) : std::function<void(HttpResponse)>()](
          std::string_view label, HttpResponse response) {
    const OperationMetrics& m = MetricsFor(label);
    m.requests->Add();
    m.latency->Observe(std::chrono::duration_cast<std::chrono::microseconds>(
                           std::chrono::steady_clock::now() - start)
                           .count());
    if (out != nullptr) {
      *out = std::move(response);
    } else {
      respond(std::move(response));
    }
  });
  std::string_view label = kUnknownLabel;
  std::optional<HttpResponse> response;
  try {
    response = Run(request, content_type, request_id, label,
                   respond != nullptr ? answer : nullptr, std::move(resume));
  } catch (const std::exception& e) {
    internal_errors_->Add();
    spdlog::error("request {}: unexpected exception: {}", request_id, e.what());
    response =
        Error(label, fdyno::Error::Internal("Internal server error"), content_type, request_id);
  } catch (...) {
    internal_errors_->Add();
    spdlog::error("request {}: unexpected non-standard exception", request_id);
    response =
        Error(label, fdyno::Error::Internal("Internal server error"), content_type, request_id);
  }
  if (response) (*answer)(label, std::move(*response));
}

Router::AsyncForm Router::AsyncFormOf(const HttpRequest& request) const {
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
                                        std::shared_ptr<const Later> later, Resume resume) const {
  auto fail = [&](const fdyno::Error& e) { return Error(label, e, content_type, request_id); };
  const std::string& raw = request.body();

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
  const api::Handler* handler =
      target.valid ? registry_.Find(target.service, target.operation) : nullptr;
  if (handler == nullptr) return fail(fdyno::Error::Make(ErrorType::kUnknownOperation, ""));

  // Authentication comes before any expensive work (decompression, parsing).
  SignedRequest signed_request;
  signed_request.method = {request.method_string().data(), request.method_string().size()};
  signed_request.target = {request.target().data(), request.target().size()};
  signed_request.headers.reserve(16);
  for (const auto& field : request) {
    signed_request.headers.emplace_back(
        std::string_view(field.name_string().data(), field.name_string().size()),
        std::string_view(field.value().data(), field.value().size()));
  }
  signed_request.body = raw;
  VerifyOptions verify;
  verify.region = options_.region;
  verify.now_ms = options_.clock->WallMillis();
  const CredentialStore& store = options_.credentials ? *options_.credentials : open_store_;
  Result<Identity> identity = Verify(signed_request, store, verify);
  if (!identity.ok()) return fail(identity.error());

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

  api::RequestContext ctx;
  ctx.account_id = identity->account_id;
  ctx.access_key_id = identity->access_key_id;
  ctx.region = options_.region;
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
    (*async)(
        ctx, document,
        // label and content_type are static strings (see Label and HandleApiAsyncOrNot).
        [this, later = std::move(later), label, content_type,
         request_id = std::move(request_id)](Result<std::string> result) mutable {
          (*later)(label, Render(label, std::move(result), content_type, std::move(request_id)));
        });
    return std::nullopt;
  }
  return Render(label, (*handler)(ctx, document), content_type, std::move(request_id));
}

}  // namespace fdyno::http
