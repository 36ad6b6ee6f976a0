// libFuzzer target for SigV4 verification (http/sigv4.h). The input is split at NUL bytes into
// the Authorization header, X-Amz-Date, the request target and the body, and verified both
// against a store holding one key (the fuzzer may guess its id) and in open mode (form only).
// Invariants: no crash, no sanitizer report, a result (an identity or one of the signature
// errors), never an InternalServerError.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "http/sigv4.h"

namespace {

std::vector<std::string_view> Split(std::string_view in, size_t parts) {
  std::vector<std::string_view> out;
  while (out.size() + 1 < parts) {
    const size_t nul = in.find('\0');
    if (nul == std::string_view::npos) break;
    out.push_back(in.substr(0, nul));
    in.remove_prefix(nul + 1);
  }
  out.push_back(in);
  while (out.size() < parts) out.push_back({});
  return out;
}

void Check(const fdyno::Result<fdyno::http::Identity>& r) {
  if (!r.ok() && r.error().type == fdyno::ErrorType::kInternalServerError) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const std::vector<std::string_view> p = Split(in, 4);
  fdyno::http::SignedRequest request;
  request.method = "POST";
  request.target = p[2].empty() ? std::string_view("/") : p[2];
  request.headers = {{"Authorization", p[0]},
                     {"X-Amz-Date", p[1]},
                     {"Host", "localhost:8000"},
                     {"Content-Type", "application/x-amz-json-1.0"},
                     {"X-Amz-Target", "DynamoDB_20120810.GetItem"}};
  request.body = p[3];
  fdyno::http::VerifyOptions options;
  options.now_ms = 1'700'000'000'000;
  static const fdyno::http::CredentialStore open;
  static const fdyno::http::CredentialStore one = [] {
    auto s = fdyno::http::CredentialStore::Parse("AKIDFUZZ secret 123456789012\n", "fuzz");
    if (!s.ok()) std::abort();
    return std::move(s).value();
  }();
  Check(fdyno::http::Verify(request, open, options));
  Check(fdyno::http::Verify(request, one, options));
  return 0;
}
