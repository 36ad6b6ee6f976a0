#include "mcp/remote.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <charconv>
#include <memory>

#include "api/json_util.h"
#include "base/clock.h"
#include "http/config.h"
#include "http/resolve.h"
#include "http/sigv4.h"

namespace fdyno::mcp {
namespace {

namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace ssl = boost::asio::ssl;
using tcp = boost::asio::ip::tcp;

struct Url {
  bool tls = false;
  http::Endpoint endpoint;
};

// "http[s]://HOST[:PORT][/]" -> whether TLS, and HOST:PORT (port 80 or 443 by default).
Result<Url> ParseUrl(std::string_view url) {
  auto bad = [&](std::string_view why) {
    return Error::Validation("--endpoint " + std::string(url) + ": " + std::string(why));
  };
  Url out;
  std::string_view rest;
  if (url.substr(0, 7) == "http://") {
    rest = url.substr(7);
  } else if (url.substr(0, 8) == "https://") {
    out.tls = true;
    rest = url.substr(8);
  } else {
    return bad("must start with http:// or https://");
  }
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  if (rest.find('/') != std::string_view::npos) return bad("must not have a path");
  if (rest.empty()) return bad("has no host");
  const bool bracketed = rest.front() == '[';
  const size_t colon = rest.rfind(':');
  if ((bracketed && rest.back() != ']') || (!bracketed && colon != std::string_view::npos)) {
    FDYNO_ASSIGN_OR_RETURN(out.endpoint, http::ParseEndpoint(rest));
  } else {
    if (bracketed) rest = rest.substr(1, rest.size() - 2);
    out.endpoint = http::Endpoint{std::string(rest), static_cast<uint16_t>(out.tls ? 443 : 80)};
  }
  return out;
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
  Remote(RemoteOptions options, Url url, std::shared_ptr<ssl::context> tls)
      : options_(std::move(options)), url_(std::move(url)), tls_(std::move(tls)) {}

  ToolResult operator()(api::Service service, std::string_view operation,
                        const rapidjson::Value& body) const {
    const std::string target =
        std::string(service == api::Service::kStreams ? "DynamoDBStreams_20120810."
                                                      : "DynamoDB_20120810.") +
        std::string(operation);
    const std::string payload = Serialize(body);
    const std::string host = url_.endpoint.ToString();
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
    Result<tcp::endpoint> address = http::ResolveEndpoint(io, url_.endpoint, /*passive=*/false);
    if (!address.ok()) return Unreachable(address.error().message);
    bhttp::response<bhttp::string_body> response;
    beast::error_code ec = tls_ ? ExchangeTls(io, *address, request, response)
                                : Exchange(io, *address, request, response);
    if (ec) return Unreachable(ec.message());
    if (response.result_int() != 200) {
      return {.is_error = true, .text = ErrorText(response.result_int(), response.body())};
    }
    return {.is_error = false, .text = std::move(response.body())};
  }

 private:
  using Request = bhttp::request<bhttp::string_body>;
  using Response = bhttp::response<bhttp::string_body>;

  beast::error_code Exchange(boost::asio::io_context& io, const tcp::endpoint& address,
                             Request& request, Response& response) const {
    beast::tcp_stream stream(io);
    stream.expires_after(options_.timeout);
    beast::error_code ec;
    stream.connect(address, ec);
    beast::flat_buffer buffer;
    if (!ec) bhttp::write(stream, request, ec);
    if (!ec) bhttp::read(stream, buffer, response, ec);
    return ec;
  }

  // The same over TLS, the server's certificate checked against the CA file (or the system's)
  // and the endpoint's host name.
  beast::error_code ExchangeTls(boost::asio::io_context& io, const tcp::endpoint& address,
                                Request& request, Response& response) const {
    beast::ssl_stream<beast::tcp_stream> stream(io, *tls_);
    const std::string& host = url_.endpoint.host;
    if (!SSL_set_tlsext_host_name(stream.native_handle(), host.c_str())) {
      return beast::error_code(static_cast<int>(::ERR_get_error()),
                               boost::asio::error::get_ssl_category());
    }
    stream.set_verify_callback(ssl::host_name_verification(host));
    beast::get_lowest_layer(stream).expires_after(options_.timeout);
    beast::error_code ec;
    beast::get_lowest_layer(stream).connect(address, ec);
    if (!ec) stream.handshake(ssl::stream_base::client, ec);
    beast::flat_buffer buffer;
    if (!ec) bhttp::write(stream, request, ec);
    if (!ec) bhttp::read(stream, buffer, response, ec);
    return ec;
  }

  ToolResult Unreachable(const std::string& why) const {
    return {.is_error = true,
            .text = "cannot reach the server at " + options_.endpoint + ": " + why};
  }

  RemoteOptions options_;
  Url url_;
  std::shared_ptr<ssl::context> tls_;  // https only
};

}  // namespace

Result<Invoke> RemoteInvoke(RemoteOptions options) {
  FDYNO_ASSIGN_OR_RETURN(Url url, ParseUrl(options.endpoint));
  std::shared_ptr<ssl::context> tls;
  if (url.tls) {
    tls = std::make_shared<ssl::context>(ssl::context::tls_client);
    tls->set_verify_mode(ssl::verify_peer);
    beast::error_code ec;
    if (options.ca_file.empty()) {
      tls->set_default_verify_paths(ec);
    } else {
      tls->load_verify_file(options.ca_file, ec);
    }
    if (ec) {
      return Error::Validation("--endpoint " + options.endpoint + ": certificate authorities " +
                               (options.ca_file.empty() ? "of the system" : options.ca_file) +
                               ": " + ec.message());
    }
  }
  return Invoke(Remote(std::move(options), std::move(url), std::move(tls)));
}

}  // namespace fdyno::mcp
