#include "http/router.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <stdexcept>

#include "api/api.h"
#include "http/compression.h"
#include "kv/kv.h"

namespace fdyno::http {
namespace {

namespace bhttp = boost::beast::http;

constexpr char kKeyId[] = "AKIDTEST";
constexpr char kSecret[] = "secret-key";
constexpr char kAccount[] = "123456789012";

class RouterTest : public ::testing::Test {
 protected:
  RouterTest() {
    registry_ = api::BuildOperationRegistry({nullptr, &clock_});
    registry_.Register(
        "Query", [](const api::RequestContext&, const rapidjson::Value&) -> Result<std::string> {
          throw std::runtime_error("boom");
        });
    registry_.Register("GetItem",
                       [this](const api::RequestContext& ctx,
                              const rapidjson::Value& body) -> Result<std::string> {
                         last_account_ = ctx.account_id;
                         if (body.HasMember("TableName"))
                           return Error::ResourceNotFound("Requested resource not found");
                         return std::string("{}");
                       });
    registry_.Register(
        api::Service::kStreams, "ListStreams",
        [](const api::RequestContext&, const rapidjson::Value&) -> Result<std::string> {
          return std::string(R"({"Streams":[]})");
        });
    credentials_.Add({kKeyId, kSecret, kAccount});
    options_.credentials = &credentials_;
    options_.clock = &clock_;
    options_.metrics = &metrics_;
    options_.max_body_bytes = 1 << 20;
    router_ = std::make_unique<Router>(registry_, options_);
  }

  HttpRequest Make(std::string target, std::string body, bool sign = true,
                   std::string secret = kSecret,
                   std::string content_type = "application/x-amz-json-1.0") {
    HttpRequest r{bhttp::verb::post, "/", 11};
    r.set(bhttp::field::host, "localhost:8000");
    r.set(bhttp::field::content_type, content_type);
    if (!target.empty()) r.set("X-Amz-Target", target);
    r.body() = std::move(body);
    if (sign) Sign(r, secret);
    r.prepare_payload();
    return r;
  }

  void Sign(HttpRequest& r, const std::string& secret) {
    SignedRequest s;
    s.method = "POST";
    s.target = "/";
    std::vector<std::string> storage;
    for (const auto& f : r) {
      s.headers.emplace_back(std::string_view(f.name_string().data(), f.name_string().size()),
                             std::string_view(f.value().data(), f.value().size()));
    }
    s.body = r.body();
    for (auto& [k, v] :
         SignHeaders(s, {kKeyId, secret, "us-east-1", "dynamodb", clock_.WallMillis()})) {
      r.set(k, v);
    }
  }

  static std::string Type(const HttpResponse& r) {
    rapidjson::Document d;
    d.Parse(r.body.c_str());
    if (d.HasParseError() || !d.IsObject() || !d.HasMember("__type")) return "";
    std::string t = d["__type"].GetString();
    return t.substr(t.find('#') + 1);
  }

  int64_t Count(const std::string& name, const Labels& labels) {
    return metrics_.GetCounter(name, labels).value();
  }

  ManualClock clock_;
  Metrics metrics_;
  api::OperationRegistry registry_;
  CredentialStore credentials_;
  RouterOptions options_;
  std::unique_ptr<Router> router_;
  std::string last_account_;
};

TEST_F(RouterTest, DescribeEndpointsAndLimits) {
  HttpResponse r = router_->HandleApi(Make("DynamoDB_20120810.DescribeEndpoints", "{}"));
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.body, R"({"Endpoints":[{"Address":"localhost:8000","CachePeriodInMinutes":1440}]})");
  EXPECT_EQ(r.request_id.size(), 52u);
  EXPECT_EQ(r.content_type, "application/x-amz-json-1.0");
  r = router_->HandleApi(Make("DynamoDB_20120810.DescribeLimits", "{}"));
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.body, R"({"AccountMaxReadCapacityUnits":80000,"AccountMaxWriteCapacityUnits":80000,)"
                    R"("TableMaxReadCapacityUnits":40000,"TableMaxWriteCapacityUnits":40000})");
  EXPECT_EQ(Count("fdyno_requests_total", {{"operation", "DescribeLimits"}}), 1);
}

TEST_F(RouterTest, AccountComesFromTheCredential) {
  HttpResponse r = router_->HandleApi(Make("DynamoDB_20120810.GetItem", "{}"));
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(last_account_, kAccount);
}

TEST_F(RouterTest, HandlerErrorsAreRenderedAndCounted) {
  HttpResponse r = router_->HandleApi(Make("DynamoDB_20120810.GetItem", R"({"TableName":"t"})"));
  EXPECT_EQ(r.status, 400u);
  EXPECT_EQ(Type(r), "ResourceNotFoundException");
  EXPECT_EQ(Count("fdyno_errors_total",
                  {{"operation", "GetItem"}, {"error_type", "ResourceNotFoundException"}}),
            1);
}

// An engine limit (the request's writes exceed one transaction) is a ValidationException a
// client can act on, not a 500 its SDK would retry forever; other engine errors stay 500s.
TEST_F(RouterTest, EngineLimitsAreValidationErrors) {
  api::OperationRegistry registry;
  int code = 0;
  registry.Register(
      "PutItem", [&](const api::RequestContext&, const rapidjson::Value&) -> Result<std::string> {
        return fdyno::Error::Kv(code, "engine");
      });
  Router router(registry, options_);
  for (int limit : {kv::kTransactionTooLarge, kv::kKeyTooLarge, kv::kValueTooLarge}) {
    code = limit;
    HttpResponse r = router.HandleApi(Make("DynamoDB_20120810.PutItem", "{}"));
    EXPECT_EQ(r.status, 400u) << limit;
    EXPECT_EQ(Type(r), "ValidationException");
    EXPECT_NE(r.body.find("exceed the 10000000 bytes one transaction of the storage engine can "
                          "hold"),
              std::string::npos)
        << r.body;
  }
  code = kv::kNotCommitted;
  EXPECT_EQ(router.HandleApi(Make("DynamoDB_20120810.PutItem", "{}")).status, 500u);
}

TEST_F(RouterTest, ExceptionsBecomeInternalServerError) {
  HttpResponse r = router_->HandleApi(Make("DynamoDB_20120810.Query", "{}"));
  EXPECT_EQ(r.status, 500u);
  EXPECT_EQ(Type(r), "InternalServerError");
  EXPECT_EQ(Count("fdyno_internal_errors_total", {}), 1);
  EXPECT_EQ(
      Count("fdyno_errors_total", {{"operation", "Query"}, {"error_type", "InternalServerError"}}),
      1);
}

TEST_F(RouterTest, FiveHundredsAreLoggedWithTheirCause) {
  auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(16);
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("test", sink));
  HttpResponse r = router_->HandleApi(Make("DynamoDB_20120810.Query", "{}"));
  spdlog::set_default_logger(previous);
  EXPECT_EQ(r.status, 500u);
  EXPECT_EQ(r.body, R"({"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError",)"
                    R"("message":"Internal server error"})");
  std::vector<std::string> lines = sink->last_formatted();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("request " + r.request_id +
                          " (Query) answered 500: unexpected "
                          "exception: boom"),
            std::string::npos)
      << lines[0];
}

TEST_F(RouterTest, UnknownAndUnimplementedOperations) {
  for (const char* target : {"DynamoDB_20120810.NoSuchOperation", "DynamoDB_20120810.CreateBackup",
                             "DynamoDBStreams_20120810.GetRecords", "DynamoDB_20120810.ListStreams",
                             "DynamoDB_20120810.", "Other_1.GetItem", ""}) {
    HttpResponse r = router_->HandleApi(Make(target, "{}"));
    EXPECT_EQ(r.status, 400u) << target;
    EXPECT_EQ(Type(r), "UnknownOperationException") << target;
  }
  HttpResponse r = router_->HandleApi(Make("DynamoDBStreams_20120810.ListStreams", "{}"));
  EXPECT_EQ(r.status, 200u);
  // Unknown names share one metrics label; known-but-unimplemented ones keep theirs.
  EXPECT_EQ(Count("fdyno_errors_total",
                  {{"operation", "unknown"}, {"error_type", "UnknownOperationException"}}),
            5);
  EXPECT_EQ(Count("fdyno_errors_total",
                  {{"operation", "CreateBackup"}, {"error_type", "UnknownOperationException"}}),
            1);
}

TEST_F(RouterTest, AuthenticationErrors) {
  HttpResponse r = router_->HandleApi(Make("DynamoDB_20120810.DescribeLimits", "{}", false));
  EXPECT_EQ(Type(r), "MissingAuthenticationTokenException");
  // An unsigned or wrongly signed caller learns nothing, not even which operations exist.
  for (const char* target : {"DynamoDB_20120810.NoSuchOperation", "Other_1.GetItem", ""}) {
    r = router_->HandleApi(Make(target, "{}", false));
    EXPECT_EQ(Type(r), "MissingAuthenticationTokenException") << target;
    r = router_->HandleApi(Make(target, "{}", true, "wrong"));
    EXPECT_EQ(Type(r), "InvalidSignatureException") << target;
  }
  r = router_->HandleApi(Make("DynamoDB_20120810.DescribeLimits", "{}", true, "wrong"));
  EXPECT_EQ(Type(r), "InvalidSignatureException");
  HttpRequest tampered = Make("DynamoDB_20120810.GetItem", "{}");
  tampered.body() = R"({"TableName":"x"})";
  tampered.prepare_payload();
  r = router_->HandleApi(tampered);
  EXPECT_EQ(Type(r), "InvalidSignatureException");
  HttpRequest stale = Make("DynamoDB_20120810.DescribeLimits", "{}");
  clock_.Advance(std::chrono::minutes(16));
  r = router_->HandleApi(stale);
  EXPECT_EQ(Type(r), "InvalidSignatureException");
  EXPECT_NE(r.body.find("Signature expired"), std::string::npos);
}

TEST_F(RouterTest, MalformedBodies) {
  HttpResponse r = router_->HandleApi(Make("DynamoDB_20120810.DescribeLimits", "{not json"));
  EXPECT_EQ(r.status, 400u);
  EXPECT_EQ(r.body, R"({"__type":"com.amazon.coral.service#SerializationException"})");
  r = router_->HandleApi(Make("DynamoDB_20120810.DescribeLimits", "[1]"));
  EXPECT_EQ(Type(r), "SerializationException");
  r = router_->HandleApi(Make("DynamoDB_20120810.DescribeLimits", ""));
  EXPECT_EQ(Type(r), "SerializationException");
  std::string deep(200, '[');
  deep += std::string(200, ']');
  r = router_->HandleApi(Make("DynamoDB_20120810.DescribeLimits", R"({"a":)" + deep + "}"));
  EXPECT_EQ(Type(r), "ValidationException");
  EXPECT_NE(r.body.find("Attributes in the item have nested levels beyond supported limit"),
            std::string::npos)
      << r.body;
  // Deep enough to overflow a recursive parser's stack: rejected, not a crash.
  std::string very_deep(500000, '[');
  r = router_->HandleApi(Make("DynamoDB_20120810.DescribeLimits", very_deep));
  EXPECT_EQ(Type(r), "SerializationException");
}

TEST_F(RouterTest, WrongContentTypeIsUnknownOperation404) {
  HttpRequest r = Make("DynamoDB_20120810.DescribeLimits", "{}", true, kSecret, "text/plain");
  HttpResponse resp = router_->HandleApi(r);
  EXPECT_EQ(resp.status, 404u);
  EXPECT_EQ(Type(resp), "UnknownOperationException");
  HttpRequest v11 = Make("DynamoDB_20120810.DescribeLimits", "{}", true, kSecret,
                         "application/x-amz-json-1.1; charset=utf-8");
  resp = router_->HandleApi(v11);
  EXPECT_EQ(resp.status, 200u);
  EXPECT_EQ(resp.content_type, "application/x-amz-json-1.1");
}

TEST_F(RouterTest, CompressedBodies) {
  for (auto [name, encoding] : {std::pair{"gzip", ContentEncoding::kGzip},
                                std::pair{"deflate", ContentEncoding::kDeflate}}) {
    HttpRequest r{bhttp::verb::post, "/", 11};
    r.set(bhttp::field::host, "localhost:8000");
    r.set(bhttp::field::content_type, "application/x-amz-json-1.0");
    r.set("X-Amz-Target", "DynamoDB_20120810.DescribeLimits");
    r.set(bhttp::field::content_encoding, name);
    r.body() = Compress("{}", encoding);
    Sign(r, kSecret);
    r.prepare_payload();
    HttpResponse resp = router_->HandleApi(r);
    EXPECT_EQ(resp.status, 200u) << name << " " << resp.body;
  }
  // A bomb: 64 MiB of spaces inside a JSON object, against a 1 MiB bound.
  HttpRequest bomb{bhttp::verb::post, "/", 11};
  bomb.set(bhttp::field::host, "localhost:8000");
  bomb.set(bhttp::field::content_type, "application/x-amz-json-1.0");
  bomb.set("X-Amz-Target", "DynamoDB_20120810.DescribeLimits");
  bomb.set(bhttp::field::content_encoding, "gzip");
  bomb.body() = Compress("{" + std::string(64 << 20, ' ') + "}", ContentEncoding::kGzip);
  Sign(bomb, kSecret);
  bomb.prepare_payload();
  HttpResponse resp = router_->HandleApi(bomb);
  EXPECT_EQ(resp.status, 413u);
  EXPECT_EQ(Type(resp), "RequestEntityTooLarge");
  bomb.set(bhttp::field::content_encoding, "br");
  resp = router_->HandleApi(bomb);
  EXPECT_EQ(Type(resp), "InvalidSignatureException");  // content-encoding is a signed header
}

TEST_F(RouterTest, LocalRoutes) {
  HttpRequest health{bhttp::verb::get, "/", 11};
  HttpResponse r = router_->HandleLocal(health);
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.body, "healthy: dynamodb.us-east-1.amazonaws.com ");
  router_->HandleApi(Make("DynamoDB_20120810.DescribeLimits", "{}"));
  HttpRequest prom{bhttp::verb::get, "/metrics/prometheus", 11};
  r = router_->HandleLocal(prom);
  EXPECT_EQ(r.status, 200u);
  EXPECT_NE(r.body.find("fdyno_requests_total{operation=\"DescribeLimits\"} 1\n"),
            std::string::npos);
  HttpRequest json{bhttp::verb::get, "/metrics", 11};
  r = router_->HandleLocal(json);
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.content_type, "application/json");
  HttpRequest other{bhttp::verb::get, "/nothing", 11};
  EXPECT_EQ(router_->HandleLocal(other).status, 404u);

  RouterOptions no_metrics = options_;
  no_metrics.serve_metrics = false;
  Router data_only(registry_, no_metrics);
  EXPECT_EQ(data_only.HandleLocal(prom).status, 404u);
  EXPECT_EQ(data_only.HandleLocal(health).status, 200u);
}

TEST_F(RouterTest, TheConsoleIsServedOnlyWhereItIsAskedFor) {
  HttpRequest page{bhttp::verb::get, "/console/", 11};
  HttpRequest script{bhttp::verb::get, "/console/console.js", 11};
  HttpRequest config{bhttp::verb::get, "/console/config.json", 11};
  EXPECT_EQ(router_->HandleLocal(page).status, 404u);  // not asked for

  RouterOptions admin = options_;
  admin.serve_api = false;
  admin.serve_console = true;
  Router router(registry_, admin);
  HttpResponse r = router.HandleLocal(page);
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.content_type, "text/html; charset=utf-8");
  EXPECT_NE(r.headers.find("Content-Security-Policy: default-src 'self'"), std::string::npos);
  EXPECT_EQ(router.HandleLocal(script).content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(router.HandleLocal(config).body,
            R"({"region":"us-east-1","signIn":true,"apiPath":"/console/api","metrics":true})");
  EXPECT_EQ(router.HandleLocal(HttpRequest{bhttp::verb::get, "/console/x.js", 11}).status, 404u);

  // Only the console's path takes API calls where serve_api is false.
  HttpRequest call = Make("DynamoDB_20120810.DescribeLimits", "{}");
  EXPECT_TRUE(router_->IsApiCall(call));
  EXPECT_FALSE(router.IsApiCall(call));
  call.target("/console/api");
  EXPECT_TRUE(router.IsApiCall(call));
  call.target("/console/api/more");
  EXPECT_FALSE(router.IsApiCall(call));
  EXPECT_FALSE(router.IsApiCall(page));
}

TEST_F(RouterTest, OpenModeAcceptsAnySignature) {
  RouterOptions open = options_;
  CredentialStore none;
  open.credentials = &none;
  Router router(registry_, open);
  HttpResponse r = router.HandleApi(Make("DynamoDB_20120810.GetItem", "{}", true, "anything"));
  EXPECT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(last_account_, kOpenModeAccount);
  r = router.HandleApi(Make("DynamoDB_20120810.GetItem", "{}", false));
  EXPECT_EQ(Type(r), "MissingAuthenticationTokenException");
}

TEST_F(RouterTest, ThrottledAndRejected) {
  HttpResponse r = router_->Throttled(Make("DynamoDB_20120810.GetItem", "{}"));
  EXPECT_EQ(r.status, 400u);
  EXPECT_EQ(r.body, R"({"__type":"com.amazon.coral.availability#ThrottlingException",)"
                    R"("message":"Rate of requests exceeds the allowed throughput."})");
  EXPECT_EQ(Count("fdyno_errors_total",
                  {{"operation", "GetItem"}, {"error_type", "ThrottlingException"}}),
            1);
  r = router_->Rejected(Error::Make(ErrorType::kRequestEntityTooLarge, "too big"),
                        "DynamoDB_20120810.PutItem");
  EXPECT_EQ(r.status, 413u);
  EXPECT_EQ(Count("fdyno_errors_total",
                  {{"operation", "PutItem"}, {"error_type", "RequestEntityTooLarge"}}),
            1);
}

TEST_F(RouterTest, OnlyGetItemRunsInline) {
  EXPECT_TRUE(Router::IsInlineRead(Make("DynamoDB_20120810.GetItem", "{}")));
  EXPECT_FALSE(Router::IsInlineRead(Make("DynamoDB_20120810.PutItem", "{}")));
  EXPECT_FALSE(Router::IsInlineRead(Make("DynamoDB_20120810.Query", "{}")));
  EXPECT_FALSE(Router::IsInlineRead(Make("DynamoDBStreams_20120810.GetItem", "{}")));
  EXPECT_FALSE(Router::IsInlineRead(Make("", "{}")));
}

TEST_F(RouterTest, AsyncFormsAreWritesOrReads) {
  api::Handler sync = [](const api::RequestContext&,
                         const rapidjson::Value&) -> Result<std::string> {
    return std::string("{}");
  };
  api::AsyncHandler async = [](const api::RequestContext&, const rapidjson::Value&,
                               api::Respond respond) { respond(std::string("{}")); };
  api::OperationRegistry registry;
  for (const char* op : {"PutItem", "UpdateItem", "DeleteItem", "Query", "Scan", "GetItem"}) {
    registry.Register(op, sync);
  }
  for (const char* op : {"PutItem", "UpdateItem", "DeleteItem", "Query", "Scan"}) {
    registry.RegisterAsync(op, async);
  }
  Router router(registry, options_);
  using Form = Router::AsyncForm;
  for (const char* op : {"PutItem", "UpdateItem", "DeleteItem"}) {
    EXPECT_EQ(router.AsyncFormOf(Make(std::string("DynamoDB_20120810.") + op, "{}")), Form::kWrite);
  }
  for (const char* op : {"Query", "Scan"}) {
    EXPECT_EQ(router.AsyncFormOf(Make(std::string("DynamoDB_20120810.") + op, "{}")), Form::kRead);
  }
  EXPECT_EQ(router.AsyncFormOf(Make("DynamoDB_20120810.GetItem", "{}")), Form::kNone);
  EXPECT_EQ(router.AsyncFormOf(Make("DynamoDBStreams_20120810.Query", "{}")), Form::kNone);
  EXPECT_EQ(router.AsyncFormOf(Make("", "{}")), Form::kNone);
}

TEST_F(RouterTest, AsyncAnswerAfterTheRequestIsGone) {
  // An asynchronous operation answers after HandleApiAsync returned and the request was
  // destroyed: the answer keeps its operation label, content type and request id, and is given
  // exactly once. A handler that throws before answering gets one InternalServerError.
  api::Respond parked;
  api::OperationRegistry registry;
  api::Handler sync = [](const api::RequestContext&,
                         const rapidjson::Value&) -> Result<std::string> {
    return std::string("{}");
  };
  registry.Register("PutItem", sync);
  registry.RegisterAsync("PutItem", [&](const api::RequestContext&, const rapidjson::Value&,
                                        api::Respond respond) { parked = std::move(respond); });
  registry.Register("DeleteItem", sync);
  registry.RegisterAsync("DeleteItem", [](const api::RequestContext&, const rapidjson::Value&,
                                          api::Respond) { throw std::runtime_error("boom"); });
  Router router(registry, options_);
  std::vector<HttpResponse> answers;
  auto respond = [&](HttpResponse r) { answers.push_back(std::move(r)); };
  {
    auto request = std::make_unique<HttpRequest>(
        Make("DynamoDB_20120810.PutItem", "{}", true, kSecret, "Application/X-Amz-JSON-1.1"));
    router.HandleApiAsync(*request, respond, nullptr);
  }
  ASSERT_TRUE(parked);
  EXPECT_TRUE(answers.empty());
  parked(std::string("{\"late\":true}"));
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_EQ(answers[0].status, 200u);
  EXPECT_EQ(answers[0].body, "{\"late\":true}");
  EXPECT_EQ(answers[0].content_type, "application/x-amz-json-1.1");
  EXPECT_EQ(answers[0].request_id.size(), 52u);
  EXPECT_EQ(Count("fdyno_requests_total", {{"operation", "PutItem"}}), 1);

  router.HandleApiAsync(Make("DynamoDB_20120810.DeleteItem", "{}"), respond, nullptr);
  ASSERT_EQ(answers.size(), 2u);
  EXPECT_EQ(answers[1].status, 500u);
  EXPECT_EQ(Type(answers[1]), "InternalServerError");
  EXPECT_EQ(Count("fdyno_requests_total", {{"operation", "DeleteItem"}}), 1);
}

TEST_F(RouterTest, BodiesParseInPlaceWithTheirExactStrings) {
  // The body is parsed in place, in a buffer reused across requests (or its own copy when
  // large): strings keep escaped NULs and their lengths, a request does not see the previous
  // one's bytes, and a raw NUL byte anywhere is a SerializationException.
  api::OperationRegistry registry;
  registry.Register(
      "PutItem",
      [](const api::RequestContext&, const rapidjson::Value& body) -> Result<std::string> {
        const rapidjson::Value& v = body["V"];
        return "{\"len\":" + std::to_string(v.GetStringLength()) + ",\"head\":\"" +
               std::string(v.GetString(), std::min<size_t>(v.GetStringLength(), 3)) + "\"}";
      });
  Router router(registry, options_);
  auto call = [&](const std::string& body) {
    return router.HandleApi(Make("DynamoDB_20120810.PutItem", body));
  };
  HttpResponse r = call(R"({"V":"abcdefghij"})");
  EXPECT_EQ(r.body, R"({"len":10,"head":"abc"})");
  r = call(R"({"V":"xy"})");
  EXPECT_EQ(r.body, R"({"len":2,"head":"xy"})");
  r = call(R"({"V":"a\u0000b"})");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.body.substr(0, 9), R"({"len":3,)");
  std::string large = R"({"V":")" + std::string(100 << 10, 'z') + R"("})";
  r = call(large);
  EXPECT_EQ(r.body, R"({"len":102400,"head":"zzz"})");
  r = call(R"({"V":"q"})");
  EXPECT_EQ(r.body, R"({"len":1,"head":"q"})");
  r = call(std::string(R"({"V":"a"})") + std::string(1, '\0'));
  EXPECT_EQ(Type(r), "SerializationException");
  r = call(std::string(R"({"V":"a)") + std::string(1, '\0') + R"("})");
  EXPECT_EQ(Type(r), "SerializationException");
}

// DynamoDB requires valid UTF-8: a string (a value or a member name) with any invalid sequence
// is a SerializationException and never reaches an operation, so nothing invalid is stored or
// compared as a key; valid text, escaped or not, reaches it byte for byte.
TEST_F(RouterTest, InvalidUtf8AnywhereIsASerializationException) {
  api::OperationRegistry registry;
  int calls = 0;
  registry.Register(
      "PutItem", [&](const api::RequestContext&, const rapidjson::Value&) -> Result<std::string> {
        ++calls;
        return std::string("{}");
      });
  Router router(registry, options_);
  auto call = [&](const std::string& body) {
    return router.HandleApi(Make("DynamoDB_20120810.PutItem", body));
  };
  for (const std::string& bad : {
           std::string("{\"V\":\"a\xFF"
                       "b\"}"),                      // a byte never in UTF-8
           std::string("{\"V\xFF\":\"a\"}"),         // in a member name
           std::string("{\"V\":\"\xC0\xAF\"}"),      // overlong
           std::string("{\"V\":\"\xED\xA0\x80\"}"),  // an encoded surrogate
           std::string("{\"V\":\"\xE2\x82\"}"),      // truncated
           std::string("{\"V\":\"\x80\"}"),          // a lone continuation byte
           std::string("{\"V\":\"\\uD800\"}"),       // an escaped lone surrogate
       }) {
    HttpResponse r = call(bad);
    EXPECT_EQ(r.status, 400u);
    EXPECT_EQ(r.body, R"({"__type":"com.amazon.coral.service#SerializationException"})");
  }
  EXPECT_EQ(calls, 0);
  for (const std::string& good : {std::string("{\"V\":\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\"}"),
                                  std::string("{\"V\":\"\\uD83D\\uDE00\\uFFFD\"}")}) {
    EXPECT_EQ(call(good).status, 200u) << good;
  }
  EXPECT_EQ(calls, 2);
}

TEST_F(RouterTest, OperationsOfTheApiThatFdynoLacksSaySo) {
  HttpResponse r = router_->HandleApi(Make("DynamoDB_20120810.CreateBackup", "{}"));
  EXPECT_EQ(r.status, 400u);
  EXPECT_EQ(r.body, R"({"__type":"com.amazon.coral.service#UnknownOperationException",)"
                    R"("message":"fdyno does not support the DynamoDB operation CreateBackup"})");
  r = router_->HandleApi(Make("DynamoDBStreams_20120810.GetRecords", "{}"));
  EXPECT_EQ(r.body,
            R"({"__type":"com.amazon.coral.service#UnknownOperationException",)"
            R"("message":"fdyno does not support the DynamoDB Streams operation GetRecords"})");
  // A name outside the API gets DynamoDB's bare answer.
  r = router_->HandleApi(Make("DynamoDB_20120810.NoSuchOperation", "{}"));
  EXPECT_EQ(r.body, R"({"__type":"com.amazon.coral.service#UnknownOperationException"})");
}

TEST_F(RouterTest, ResponsesAreCompressedWhenAskedAndLargeEnough) {
  api::OperationRegistry registry;
  registry.Register(
      "Scan", [](const api::RequestContext&, const rapidjson::Value& body) -> Result<std::string> {
        return "{\"x\":\"" + std::string(body["N"].GetInt(), 'x') + "\"}";
      });
  Router router(registry, options_);
  auto call = [&](int n, const char* accept) {
    HttpRequest req = Make("DynamoDB_20120810.Scan", "{\"N\":" + std::to_string(n) + "}");
    if (accept != nullptr) req.set(bhttp::field::accept_encoding, accept);
    return router.HandleApi(req);
  };
  const std::string big = "{\"x\":\"" + std::string(5000, 'x') + "\"}";
  for (auto [accept, encoding] : {std::pair{"gzip", ContentEncoding::kGzip},
                                  std::pair{"deflate", ContentEncoding::kDeflate}}) {
    HttpResponse r = call(5000, accept);
    EXPECT_EQ(r.content_encoding, accept);
    Result<std::string> plain = Decompress(r.body, encoding, 1 << 20);
    ASSERT_TRUE(plain.ok());
    EXPECT_EQ(*plain, big);
  }
  HttpResponse r = call(5000, nullptr);
  EXPECT_EQ(r.content_encoding, "");
  EXPECT_EQ(r.body, big);
  r = call(4000, "gzip");  // a 4,009-byte body: under the 4,096-byte threshold
  EXPECT_EQ(r.content_encoding, "");
  r = call(5000, "br, identity");
  EXPECT_EQ(r.content_encoding, "");
  // Several Accept-Encoding headers are one list: the later one's deflate wins over the
  // first one's refused gzip.
  HttpRequest two = Make("DynamoDB_20120810.Scan", "{\"N\":5000}");
  two.insert(bhttp::field::accept_encoding, "gzip;q=0");
  two.insert(bhttp::field::accept_encoding, "deflate");
  EXPECT_EQ(router.HandleApi(two).content_encoding, "deflate");
}

TEST_F(RouterTest, CorsHeadersForAllowedOrigins) {
  HttpRequest api = Make("DynamoDB_20120810.DescribeLimits", "{}");
  EXPECT_EQ(router_->HandleApi(api).headers, "");  // no Origin: no CORS headers
  api.set(bhttp::field::origin, "http://app.example");
  EXPECT_EQ(router_->HandleApi(api).headers,
            "Access-Control-Allow-Origin: *\r\n"
            "Access-Control-Expose-Headers: x-amzn-RequestId,x-amzn-ErrorType,x-amz-crc32,Date"
            "\r\n");
  HttpRequest preflight{bhttp::verb::options, "/", 11};
  preflight.set(bhttp::field::origin, "http://app.example");
  preflight.set(bhttp::field::access_control_request_method, "POST");
  preflight.set(bhttp::field::access_control_request_headers,
                "authorization,content-type,x-amz-date,x-amz-target");
  HttpResponse r = router_->HandleLocal(preflight);
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.body, "");
  EXPECT_EQ(r.headers,
            "Access-Control-Allow-Origin: *\r\n"
            "Access-Control-Expose-Headers: x-amzn-RequestId,x-amzn-ErrorType,x-amz-crc32,Date"
            "\r\n"
            "Access-Control-Allow-Methods: GET, HEAD, POST, OPTIONS\r\n"
            "Access-Control-Allow-Headers: authorization,content-type,x-amz-date,x-amz-target\r\n"
            "Access-Control-Max-Age: 7200\r\n");

  RouterOptions listed = options_;
  listed.cors_origins = "https://a.example, http://localhost:3000";
  Router router(registry_, listed);
  api.set(bhttp::field::origin, "http://localhost:3000");
  EXPECT_EQ(router.HandleApi(api).headers,
            "Access-Control-Allow-Origin: http://localhost:3000\r\n"
            "Access-Control-Expose-Headers: x-amzn-RequestId,x-amzn-ErrorType,x-amz-crc32,Date"
            "\r\n"
            "Vary: Origin\r\n");
  api.set(bhttp::field::origin, "http://evil.example");
  EXPECT_EQ(router.HandleApi(api).headers, "");

  RouterOptions none = options_;
  none.cors_origins = "";
  Router closed(registry_, none);
  EXPECT_EQ(closed.HandleLocal(preflight).headers, "");
}

TEST_F(RouterTest, HealthNamesTheHostAskedFor) {
  HttpRequest health{bhttp::verb::get, "/", 11};
  health.set(bhttp::field::host, "localhost:8000");
  EXPECT_EQ(router_->HandleLocal(health).body, "healthy: localhost:8000 ");
  EXPECT_EQ(router_->HandleLocal(HttpRequest{bhttp::verb::get, "/index.html", 11}).status, 404u);
}

}  // namespace
}  // namespace fdyno::http
