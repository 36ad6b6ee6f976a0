#include "http/s3_endpoint.h"

#include <spdlog/spdlog.h>

#include <charconv>

#include "http/ascii.h"

namespace fdyno::http {

namespace bhttp = boost::beast::http;

namespace {

// The service of a SigV4 credential "<key>/<date>/<region>/<service>/aws4_request".
std::string_view ServiceOfCredential(std::string_view credential) {
  size_t at = 0;
  for (int slash = 0; slash < 3; ++slash) {
    at = credential.find('/', at);
    if (at == std::string_view::npos) return {};
    ++at;
  }
  return credential.substr(at, credential.find('/', at) - at);
}

std::string_view SignedService(const HttpRequest& request) {
  std::string_view auth = Header(request, "authorization");
  if (const size_t c = auth.find("Credential="); c != std::string_view::npos) {
    std::string_view credential = auth.substr(c + 11);
    return ServiceOfCredential(credential.substr(0, credential.find_first_of(", ")));
  }
  std::string_view target(request.target().data(), request.target().size());
  if (const size_t c = target.find("X-Amz-Credential="); c != std::string_view::npos) {
    std::string_view credential = target.substr(c + 17);
    credential = credential.substr(0, credential.find('&'));
    // The presigned form's slashes arrive percent-encoded.
    std::string decoded = UriDecode(credential);
    return ServiceOfCredential(decoded) == "s3" ? std::string_view("s3") : std::string_view();
  }
  return {};
}

// What SigV4's check says, as S3 says it.
s3::S3Error S3AuthError(const Error& e) {
  switch (e.type) {
    case ErrorType::kMissingAuthenticationToken:
      return s3::S3Error{403, "AccessDenied", "Access Denied"};
    case ErrorType::kUnrecognizedClient:
      return s3::S3Error{403, "InvalidAccessKeyId",
                         "The AWS Access Key Id you provided does not exist in our records."};
    case ErrorType::kInvalidSignature:
      return s3::S3Error{403, "SignatureDoesNotMatch",
                         "The request signature we calculated does not match the signature you "
                         "provided. Check your key and signing method."}
          .With("fdyno", e.message);
    default:
      return s3::S3Error{400, "AuthorizationHeaderMalformed", e.message};
  }
}

// The bucket and key of a request: path-style /bucket/key, or bucket.localhost[:port] + /key.
std::pair<std::string, std::string> BucketAndKey(std::string_view host, std::string_view path) {
  std::string_view name = host.substr(
      0, host.rfind(':') == std::string_view::npos || host.find(']') != std::string_view::npos
             ? host.size()
             : host.rfind(':'));
  if (const size_t dot = name.find('.');
      dot != std::string_view::npos && name.substr(dot + 1) == "localhost") {
    std::string_view key = path.starts_with('/') ? path.substr(1) : path;
    return {UriDecode(name.substr(0, dot)), UriDecode(key)};
  }
  std::string_view rest = path.starts_with('/') ? path.substr(1) : path;
  const size_t slash = rest.find('/');
  if (slash == std::string_view::npos) return {UriDecode(rest), ""};
  return {UriDecode(rest.substr(0, slash)), UriDecode(rest.substr(slash + 1))};
}

std::vector<std::pair<std::string, std::string>> ParseQueryString(std::string_view query) {
  std::vector<std::pair<std::string, std::string>> out;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    std::string_view part = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (part.empty()) continue;
    const size_t eq = part.find('=');
    out.emplace_back(UriDecode(part.substr(0, eq)),
                     eq == std::string_view::npos ? "" : UriDecode(part.substr(eq + 1)));
  }
  return out;
}

HttpResponse ToHttp(s3::S3Response r, const std::string& request_id) {
  HttpResponse out;
  out.status = r.status;
  out.content_type = std::move(r.content_type);
  out.body = std::move(r.body);
  out.headers = std::move(r.headers);
  out.headers += "x-amz-request-id: " + request_id + "\r\n";
  out.request_id = request_id;
  out.head_content_length = r.head_length;
  out.error_type = r.error_code;
  return out;
}

}  // namespace

SignedRequest SignedRequestOf(const HttpRequest& request) {
  SignedRequest s;
  s.method = {request.method_string().data(), request.method_string().size()};
  s.target = {request.target().data(), request.target().size()};
  s.headers.reserve(16);
  for (const auto& field : request) {
    s.headers.emplace_back(std::string_view(field.name_string().data(), field.name_string().size()),
                           std::string_view(field.value().data(), field.value().size()));
  }
  s.body = request.body();
  return s;
}

bool IsS3Request(const HttpRequest& request) {
  return request.find("x-amz-target") == request.end() && SignedService(request) == "s3";
}

std::optional<std::string> DecodeAwsChunked(std::string_view body) {
  std::string out;
  while (true) {
    const size_t line_end = body.find("\r\n");
    if (line_end == std::string_view::npos) return std::nullopt;
    std::string_view line = body.substr(0, line_end);
    std::string_view hex = line.substr(0, line.find(';'));
    uint64_t size = 0;
    auto [end, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), size, 16);
    if (ec != std::errc() || end != hex.data() + hex.size() || hex.empty()) return std::nullopt;
    body.remove_prefix(line_end + 2);
    if (size == 0) break;
    // Compared without adding to `size`, which the client chose (up to 2^64 - 1).
    if (size > body.size() || body.size() - size < 2 || body.substr(size, 2) != "\r\n") {
      return std::nullopt;
    }
    out.append(body.substr(0, size));
    body.remove_prefix(size + 2);
  }
  // Trailers (x-amz-checksum-crc32:..., x-amz-trailer-signature:...), each a line, then an
  // empty line; some clients end right after the last chunk.
  while (!body.empty()) {
    const size_t line_end = body.find("\r\n");
    if (line_end == std::string_view::npos) return std::nullopt;
    body.remove_prefix(line_end + 2);
    if (line_end == 0) break;
  }
  return out;
}

S3Answer AnswerS3(const HttpRequest& request, s3::Service& service, const CredentialStore& store,
                  VerifyOptions verify, std::string request_id) {
  s3::S3Request r;
  r.method = std::string(request.method_string().data(), request.method_string().size());
  r.request_id = request_id;
  std::string_view target(request.target().data(), request.target().size());
  const size_t q = target.find('?');
  r.host = std::string(Header(request, "host"));
  std::tie(r.bucket, r.key) = BucketAndKey(r.host, target.substr(0, q));
  if (q != std::string_view::npos) r.query = ParseQueryString(target.substr(q + 1));
  for (const auto& field : request) {
    std::string name(field.name_string().data(), field.name_string().size());
    for (char& c : name) c = AsciiLower(c);
    r.headers.emplace_back(std::move(name),
                           std::string(field.value().data(), field.value().size()));
  }
  S3Answer answer;
  verify.service = "s3";
  verify.s3 = true;
  Result<Identity> identity = Verify(SignedRequestOf(request), store, verify);
  if (!identity.ok()) {
    answer.response =
        ToHttp(s3::Service::ErrorResponse(r, S3AuthError(identity.error())), request_id);
    answer.operation = "unknown";
    return answer;
  }
  answer.account = identity->account_id;
  r.region = identity->region;
  std::string decoded;
  const std::string* sha = r.Header("x-amz-content-sha256");
  const std::string* encoding = r.Header("content-encoding");
  if ((sha && sha->starts_with("STREAMING-")) ||
      (encoding && encoding->find("aws-chunked") != std::string::npos)) {
    std::optional<std::string> body = DecodeAwsChunked(request.body());
    const std::string* length = r.Header("x-amz-decoded-content-length");
    if (!body || (length && *length != std::to_string(body->size()))) {
      answer.response =
          ToHttp(s3::Service::ErrorResponse(
                     r, s3::S3Error{400, "IncompleteBody",
                                    "You did not provide the number of bytes specified by the "
                                    "Content-Length HTTP header."}),
                 request_id);
      answer.operation = "unknown";
      return answer;
    }
    decoded = std::move(*body);
    r.body = decoded;
  } else {
    r.body = request.body();
  }
  s3::S3Response response = service.Handle(r);
  if (response.status == 500) spdlog::error("S3 {} {}: {}", r.method, target, response.body);
  answer.operation = response.operation;
  answer.response = ToHttp(std::move(response), request_id);
  return answer;
}

}  // namespace fdyno::http
