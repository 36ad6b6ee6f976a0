#include "kv/engines/fdb/errors.h"

#include <string>

#include "kv/kv.h"

namespace fdyno::kv::fdb {
namespace {

constexpr fdb_error_t kOperationCancelled = 1101;

}  // namespace

int KvCode(fdb_error_t code) {
  if (code == kOperationCancelled) return kTransactionCancelled;
  return code;
}

Error FdbError(fdb_error_t code, const char* description) {
  const int kv_code = KvCode(code);
  std::string message = description != nullptr && *description != '\0'
                            ? std::string(description)
                            : std::string(ErrorName(kv_code));
  message += " (fdb error " + std::to_string(code) + ")";
  return Error::Kv(kv_code, std::move(message));
}

}  // namespace fdyno::kv::fdb
