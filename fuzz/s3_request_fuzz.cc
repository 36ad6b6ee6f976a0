// S3 API fuzzer (s3/xml.h, http/s3_endpoint.h, s3/service.h): arbitrary bytes as an XML body,
// an aws-chunked body, and the parts of a read or delete request (key, query, Range header,
// body) answered by the service over an empty bucket. Nothing may crash; every answer is a
// status S3 uses, and an error answer names a code.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "http/s3_endpoint.h"
#include "s3/service.h"
#include "s3/xml.h"

namespace {
void Check(bool ok) {
  if (!ok) std::abort();
}

// The next field of the input: bytes up to a NUL (or the end).
std::string Next(std::string_view& in) {
  const size_t nul = in.find('\0');
  std::string out(in.substr(0, nul));
  in = nul == std::string_view::npos ? std::string_view() : in.substr(nul + 1);
  return out;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  (void)fdyno::s3::ParseXml(input);
  if (auto decoded = fdyno::http::DecodeAwsChunked(input)) Check(decoded->size() <= input.size());

  static const std::filesystem::path root = [] {
    std::filesystem::path p =
        std::filesystem::temp_directory_path() / ("fdyno-s3-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(p / "bkt");
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(
          std::filesystem::temp_directory_path() / ("fdyno-s3-fuzz-" + std::to_string(::getpid())),
          ec);
    });
    return p;
  }();
  static fdyno::s3::ObjectStore store(root);
  static fdyno::s3::Service service(store);
  if (input.empty()) return 0;
  static const char* kMethods[] = {"GET", "HEAD", "POST", "DELETE"};
  fdyno::s3::S3Request r;
  r.method = kMethods[static_cast<uint8_t>(input[0]) % 4];
  input.remove_prefix(1);
  r.bucket = "bkt";
  r.key = Next(input);
  std::string name = Next(input);
  if (name == "uploads") name = "delete";  // no upload directories pile up
  r.query = {{name, Next(input)}};
  r.headers = {{"range", Next(input)}};
  r.body = input;
  r.region = "us-east-1";
  fdyno::s3::S3Response answer = service.Handle(r);
  Check(answer.status >= 200 && answer.status < 600);
  Check(answer.status < 300 || answer.status == 304 || !answer.error_code.empty());
  return 0;
}
