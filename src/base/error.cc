#include "base/error.h"

namespace fdyno {

std::string_view WireType(ErrorType type) {
  switch (type) {
#define FDYNO_ERROR_WIRE(name, wire, status, retryable) \
  case ErrorType::name:                                 \
    return wire;
    FDYNO_DYNAMODB_ERRORS(FDYNO_ERROR_WIRE)
#undef FDYNO_ERROR_WIRE
    case ErrorType::kKv:
      return "InternalServerError";
  }
  return "InternalServerError";
}

int HttpStatus(ErrorType type) {
  switch (type) {
#define FDYNO_ERROR_STATUS(name, wire, status, retryable) \
  case ErrorType::name:                                   \
    return status;
    FDYNO_DYNAMODB_ERRORS(FDYNO_ERROR_STATUS)
#undef FDYNO_ERROR_STATUS
    case ErrorType::kKv:
      return 500;
  }
  return 500;
}

bool ClientRetryable(ErrorType type) {
  switch (type) {
#define FDYNO_ERROR_RETRY(name, wire, status, retryable) \
  case ErrorType::name:                                  \
    return retryable;
    FDYNO_DYNAMODB_ERRORS(FDYNO_ERROR_RETRY)
#undef FDYNO_ERROR_RETRY
    case ErrorType::kKv:
      return true;
  }
  return true;
}

Error Error::Kv(int code, std::string message) {
  Error e;
  e.type = ErrorType::kKv;
  e.kv_code = code;
  e.message = message.empty() ? "kv error " + std::to_string(code) : std::move(message);
  return e;
}

Error Error::EnvelopedValidation(std::string_view message) {
  return Error::Validation("1 validation error detected: " + std::string(message))
      .WithCause(ErrorCause::kInEnvelope);
}

Error Error::InEnvelope(Error e) {
  if (e.type != ErrorType::kValidation || e.cause == ErrorCause::kInEnvelope ||
      e.cause == ErrorCause::kNeverEnveloped) {
    return e;
  }
  return EnvelopedValidation(e.message);
}

}  // namespace fdyno
