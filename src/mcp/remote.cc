#include "mcp/remote.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <boost/asio/connect.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <charconv>

#include "api/json_util.h"
#include "base/clock.h"
#include "http/config.h"
#include "http/resolve.h"
#include "http/sigv4.h"

namespace fdyno::mcp {
namespace {

namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = boost::asio::ip::tcp;

// "http://HOST[:PORT][/]" -> HOST:PORT (port 80 by default).
Result<http::Endpoint> ParseUrl(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  auto bad = [&](std::string_view why) {
    return Error::Validation("--endpoint " + std::string(url) + ": " + std::string(why));
  };
  if (url.substr(0, kScheme.size()) != kScheme) return bad("must start with http://");
  std::string_view rest = url.substr(kScheme.size());
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.find('/') != std::string_view::npos) return bad("must not have a path");
  if (rest.empty()) return bad("has no host");
  if (rest.front() == '[' || rest.rfind(':') != std::string_view::npos) {
    return http::ParseEndpoint(rest);
  }
  return http::Endpoint{std::string(rest), 80};
}

std::string Serialize(const rapidjson::Value& body) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  body.Accept(w);
  return std::string(buffer.GetString(), buffer.GetSize());
}

// An error body ({"__type":"<namespace>#<Type>","message":"..."}) as "Type: message".
std::string ErrorText(unsigned status, const std::string& body) {
  rapidjson::Document d;
  d.Parse(body.data(), body.size());
  const rapidjson::Value* type = d.IsObject() ? api::Member(d, "__type") : nullptr;
  if (type == nullptr || !type->IsString()) {
    return "HTTP " + std::to_string(status) + ": " + body.substr(0, 200);
  }
  std::string_view name = api::AsStringView(*type);
  name = name.substr(name.find('#') == std::string_view::npos ? 0 : name.find('#') + 1);
  const rapidjson::Value* message = api::Member(d, "message");
  if (message == nullptr) message = api::Member(d, "Message");
  return std::string(name) + ": " +
         (message != nullptr && message->IsString() ? std::string(api::AsStringView(*message))
                                                    : std::string());
}

class Remote {
 public:
  Remote(RemoteOptions options, http::Endpoint endpoint)
      : options_(std::move(options)), endpoint_(std::move(endpoint)) {}

  ToolResult operator()(api::Service service, std::string_view operation,
                        const rapidjson::Value& body) const {
    const std::string target =
        std::string(service == api::Service::kStreams ? "DynamoDBStreams_20120810."
                                                      : "DynamoDB_20120810.") +
        std::string(operation);
    const std::string payload = Serialize(body);
    const std::string host = endpoint_.ToString();
    http::SignedRequest signed_request{.method = "POST",
                                       .target = "/",
                                       .headers = {{"Host", host},
                                                   {"Content-Type", "application/x-amz-json-1.0"},
                                                   {"X-Amz-Target", target}},
                                       .body = payload};
    http::SigningParams params{.access_key_id = options_.access_key_id,
                               .secret_access_key = options_.secret_access_key,
                               .region = options_.region,
                               .service = "dynamodb",
                               .now_ms = Clock::Real()->WallMillis()};
    bhttp::request<bhttp::string_body> request{bhttp::verb::post, "/", 11};
    for (const auto& [name, value] : signed_request.headers) {
      request.set(beast::string_view(name.data(), name.size()),
                  beast::string_view(value.data(), value.size()));
    }
    for (const auto& [name, value] : http::SignHeaders(signed_request, params)) {
      request.set(name, value);
    }
    request.body() = payload;
    request.prepare_payload();
    boost::asio::io_context io;
    Result<tcp::endpoint> address = http::ResolveEndpoint(io, endpoint_, /*passive=*/false);
    if (!address.ok()) return Unreachable(address.error().message);
    beast::tcp_stream stream(io);
    stream.expires_after(options_.timeout);
    beast::error_code ec;
    stream.connect(*address, ec);
    if (!ec) bhttp::write(stream, request, ec);
    beast::flat_buffer buffer;
    bhttp::response<bhttp::string_body> response;
    if (!ec) bhttp::read(stream, buffer, response, ec);
    if (ec) return Unreachable(ec.message());
    if (response.result_int() != 200) {
      return {.is_error = true, .text = ErrorText(response.result_int(), response.body())};
    }
    return {.is_error = false, .text = std::move(response.body())};
  }

 private:
  ToolResult Unreachable(const std::string& why) const {
    return {.is_error = true,
            .text = "cannot reach the server at " + options_.endpoint + ": " + why};
  }

  RemoteOptions options_;
  http::Endpoint endpoint_;
};

}  // namespace

Result<Invoke> RemoteInvoke(RemoteOptions options) {
  FDYNO_ASSIGN_OR_RETURN(http::Endpoint endpoint, ParseUrl(options.endpoint));
  return Invoke(Remote(std::move(options), std::move(endpoint)));
}

}  // namespace fdyno::mcp
