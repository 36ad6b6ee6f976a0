#include "base/md5.h"

#include <openssl/evp.h>

namespace fdyno {

Md5::Md5() : ctx_(EVP_MD_CTX_new()) { EVP_DigestInit_ex(ctx_, EVP_md5(), nullptr); }

Md5::~Md5() { EVP_MD_CTX_free(ctx_); }

void Md5::Add(std::string_view data) { EVP_DigestUpdate(ctx_, data.data(), data.size()); }

std::string Md5::Raw() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_DigestFinal_ex(ctx_, out, &n);
  return std::string(reinterpret_cast<char*>(out), n);
}

std::string Md5Of(std::string_view data) {
  Md5 md5;
  md5.Add(data);
  return md5.Raw();
}

}  // namespace fdyno
