// MD5 (OpenSSL's), for the checksums S3 and DynamoDB's exports use: ETags, Content-MD5, the
// manifest checksum files. Not for anything that needs a secure hash.
//
// Thread-safety: an Md5 is used by one thread; Md5Of is a pure function.
#pragma once

#include <memory>
#include <string>
#include <string_view>

struct evp_md_ctx_st;

namespace fdyno {

// MD5 fed piece by piece.
class Md5 {
 public:
  Md5();
  ~Md5();
  Md5(const Md5&) = delete;
  Md5& operator=(const Md5&) = delete;
  void Add(std::string_view data);
  // The 16-byte digest of everything added. Call once.
  std::string Raw();

 private:
  evp_md_ctx_st* ctx_;
};

// The 16-byte MD5 digest of `data`.
std::string Md5Of(std::string_view data);

}  // namespace fdyno
