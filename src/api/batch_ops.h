// BatchGetItem and BatchWriteItem.
//
// BatchGetItem reads every requested key (at most 100) in one read-only transaction (one
// snapshot); when the response would pass `get_response_bytes` (16 MB) the remaining keys are
// returned as UnprocessedKeys.
//
// BatchWriteItem (at most 25 puts and deletes, no two on the same item) is validated whole
// first, then committed in one transaction with item, index entries and a receipt. When the
// engine reports transaction_too_large it is committed in groups of about
// `write_group_bytes` (4 MiB, estimated with index entries), each its own receipt-protected
// transaction; groups that fail come back as UnprocessedItems (the batch API is non-atomic:
// docs/architecture.md, "Work in several transactions").
//
// Thread-safety: handlers are thread-safe.
#pragma once

#include <cstdint>

#include "api/operation.h"
#include "api/services.h"
#include "kv/run.h"
#include "store/receipts.h"

namespace fdyno::api {

struct BatchOptions {
  uint64_t get_response_bytes = 16 * 1024 * 1024;
  uint64_t write_group_bytes = 4 * 1024 * 1024;
  kv::SleepFunction sleep;
};

// Registers BatchGetItem and BatchWriteItem.
void RegisterBatchOperations(OperationRegistry& registry, const Services& services,
                             BatchOptions options = {});

}  // namespace fdyno::api
