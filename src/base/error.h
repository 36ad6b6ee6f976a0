// The one error type of fdyno. Every DynamoDB error is defined once, in the table below (wire
// type, HTTP status, retryable-by-client), and built by name with its message. Engine (kv)
// errors carry FoundationDB's numeric code; only the kv retry runner interprets them, and the
// API layer maps any that escape to a DynamoDB error.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace fdyno {

// X(Enum, "WireType", http_status, retryable)
#define FDYNO_DYNAMODB_ERRORS(X)                                                              \
  X(kAccessDenied, "AccessDeniedException", 400, false)                                       \
  X(kConditionalCheckFailed, "ConditionalCheckFailedException", 400, false)                   \
  X(kIncompleteSignature, "IncompleteSignatureException", 400, false)                         \
  X(kInvalidSignature, "InvalidSignatureException", 400, false)                               \
  X(kMissingAuthenticationToken, "MissingAuthenticationTokenException", 400, false)           \
  X(kUnrecognizedClient, "UnrecognizedClientException", 400, false)                           \
  X(kItemCollectionSizeLimitExceeded, "ItemCollectionSizeLimitExceededException", 400, false) \
  X(kLimitExceeded, "LimitExceededException", 400, true)                                      \
  X(kProvisionedThroughputExceeded, "ProvisionedThroughputExceededException", 400, true)      \
  X(kRequestLimitExceeded, "RequestLimitExceeded", 400, true)                                 \
  X(kThrottling, "ThrottlingException", 400, true)                                            \
  X(kResourceInUse, "ResourceInUseException", 400, false)                                     \
  X(kResourceNotFound, "ResourceNotFoundException", 400, false)                               \
  X(kTableNotFound, "TableNotFoundException", 400, false)                                     \
  X(kTableAlreadyExists, "TableAlreadyExistsException", 400, false)                           \
  X(kTableInUse, "TableInUseException", 400, false)                                           \
  X(kIndexNotFound, "IndexNotFoundException", 400, false)                                     \
  X(kBackupNotFound, "BackupNotFoundException", 400, false)                                   \
  X(kBackupInUse, "BackupInUseException", 400, false)                                         \
  X(kContinuousBackupsUnavailable, "ContinuousBackupsUnavailableException", 400, false)       \
  X(kPointInTimeRecoveryUnavailable, "PointInTimeRecoveryUnavailableException", 400, false)   \
  X(kInvalidRestoreTime, "InvalidRestoreTimeException", 400, false)                           \
  X(kInvalidExportTime, "InvalidExportTimeException", 400, false)                             \
  X(kExportNotFound, "ExportNotFoundException", 400, false)                                   \
  X(kExportConflict, "ExportConflictException", 400, false)                                   \
  X(kImportNotFound, "ImportNotFoundException", 400, false)                                   \
  X(kImportConflict, "ImportConflictException", 400, false)                                   \
  X(kPolicyNotFound, "PolicyNotFoundException", 400, false)                                   \
  X(kGlobalTableNotFound, "GlobalTableNotFoundException", 400, false)                         \
  X(kTransactionCanceled, "TransactionCanceledException", 400, false)                         \
  X(kTransactionConflict, "TransactionConflictException", 400, false)                         \
  X(kTransactionInProgress, "TransactionInProgressException", 400, false)                     \
  X(kIdempotentParameterMismatch, "IdempotentParameterMismatchException", 400, false)         \
  X(kDuplicateItem, "DuplicateItemException", 400, false)                                     \
  X(kExpiredIterator, "ExpiredIteratorException", 400, false)                                 \
  X(kTrimmedDataAccess, "TrimmedDataAccessException", 400, false)                             \
  X(kSerialization, "SerializationException", 400, false)                                     \
  X(kValidation, "ValidationException", 400, false)                                           \
  X(kUnknownOperation, "UnknownOperationException", 400, false)                               \
  X(kRequestEntityTooLarge, "RequestEntityTooLarge", 413, false)                              \
  X(kInternalServerError, "InternalServerError", 500, true)                                   \
  X(kServiceUnavailable, "ServiceUnavailable", 503, true)

enum class ErrorType {
#define FDYNO_ERROR_ENUM(name, wire, status, retryable) name,
  FDYNO_DYNAMODB_ERRORS(FDYNO_ERROR_ENUM)
#undef FDYNO_ERROR_ENUM
      kKv,  // an engine error; Error::kv_code holds FoundationDB's code
};

// Wire name ("ValidationException"), HTTP status and whether clients retry it.
std::string_view WireType(ErrorType type);
int HttpStatus(ErrorType type);
bool ClientRetryable(ErrorType type);

// Why an error happened, where callers must tell causes of one wire type apart (a transaction
// reports some per action as a cancellation reason): never recognised by message text.
enum class ErrorCause : uint8_t {
  kUnspecified = 0,
  kKeySchemaMismatch,    // a key lacks the schema's attributes or has another type
  kIndexKeyMismatch,     // an index key attribute of the item has the wrong type
  kIndexKeyEmpty,        // an index key attribute of the item is an empty string or binary
  kIndexKeyTooLong,      // an index key attribute of the item exceeds its size limit
  kItemTooLarge,         // the item (after an update) exceeds 400 KB
  kTokenRecordUnusable,  // a ClientRequestToken record fails closed (store/tokens.h)
  kSnapshotLost,         // a read version shared by many transactions aged out (workers/backups.h)
  kUnrecoverable,        // long work whose input is corrupt or gone: it can never finish
  kTakenOver,            // long work another process took over (a pause past its takeover time)
  // Why an export or an import can never finish, one cause per FailureCode its job records
  // (workers/exports.h; kUnrecoverable records UnknownError).
  kExportTimeTrimmed,         // InvalidExportTime: the history was trimmed past the export time
  kJobTableNotFound,          // TableNotFound: the job's table was deleted
  kJobPitrUnavailable,        // PointInTimeRecoveryUnavailable: recovery was disabled
  kS3InvalidPath,             // S3InvalidPath: the bucket or key would leave the export root
  kS3AccessDenied,            // S3AccessDenied: a directory cannot be created, or a link leaves
  kS3NoSuchKey,               // S3NoSuchKey: no file under the prefix, or a file cannot be opened
  kInvalidCompression,        // InvalidCompression: a file does not read as its compression says
  kImportCollectionTooLarge,  // ItemCollectionSizeLimitExceeded: an import overfills one
  // ValidationExceptions and DynamoDB's envelope "N validation error(s) detected: ..."
  // (Error::InEnvelope).
  kInEnvelope,      // the message already is in the envelope
  kNeverEnveloped,  // DynamoDB answers it bare even where it envelopes its phase's errors
};

struct Error {
  ErrorType type = ErrorType::kInternalServerError;
  std::string message;
  int kv_code = 0;  // FoundationDB error code when type == kKv, else 0
  // ConditionalCheckFailedException with ReturnValuesOnConditionCheckFailure ALL_OLD: the
  // existing item as DynamoDB JSON ({"a":{"S":"x"}}), rendered as the body's "Item" member.
  // Empty otherwise.
  std::string item_json = {};
  // TransactionCanceledException: the CancellationReasons array as JSON text
  // ([{"Code":"None"},{"Code":"ConditionalCheckFailed","Message":"..."}]), rendered as the
  // body's "CancellationReasons" member. Empty otherwise.
  std::string cancellation_reasons_json = {};
  // A throttling error of --enforce-capacity: the ThrottlingReasons array as JSON text
  // ([{"reason":"TableWriteProvisionedThroughputExceeded","resource":"arn:..."}]), rendered as
  // the body's "ThrottlingReasons" member. Empty otherwise.
  std::string throttling_reasons_json = {};
  ErrorCause cause = ErrorCause::kUnspecified;

  bool is_kv() const { return type == ErrorType::kKv; }
  // This error with `c` as its cause.
  Error&& WithCause(ErrorCause c) && {
    cause = c;
    return std::move(*this);
  }

  static Error Kv(int code, std::string message = {});
  static Error Validation(std::string message) {
    return {ErrorType::kValidation, std::move(message)};
  }
  // A ValidationException in DynamoDB's envelope: "1 validation error detected: <message>".
  static Error EnvelopedValidation(std::string_view message);
  // `e` in the envelope when it is a ValidationException that is not in it yet and is not
  // kNeverEnveloped; otherwise `e` unchanged. PutItem, UpdateItem and DeleteItem answer every
  // error of their request's own validation (after the JSON shapes, before the table) so.
  static Error InEnvelope(Error e);
  static Error ResourceNotFound(std::string message) {
    return {ErrorType::kResourceNotFound, std::move(message)};
  }
  static Error ResourceInUse(std::string message) {
    return {ErrorType::kResourceInUse, std::move(message)};
  }
  static Error ConditionalCheckFailed(std::string message = "The conditional request failed") {
    return {ErrorType::kConditionalCheckFailed, std::move(message)};
  }
  static Error Serialization(std::string message) {
    return {ErrorType::kSerialization, std::move(message)};
  }
  static Error Internal(std::string message) {
    return {ErrorType::kInternalServerError, std::move(message)};
  }
  static Error Make(ErrorType type, std::string message) { return {type, std::move(message)}; }
};

}  // namespace fdyno
