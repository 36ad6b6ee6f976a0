// Query and Scan: reading pages of a table or of a secondary index.
//
// A page is one read-only transaction (one snapshot). It ends, with a LastEvaluatedKey, when
// Limit items were evaluated, when the evaluated items reach 1 MB (before filtering, as
// DynamoDB), or when the page has run for `page_time_budget` (below the engine's 5 s
// transaction window, so a long page ends early instead of failing with transaction_too_old).
// Scan segments are ranges of the 32-bit partition-key hash that leads every item key
// (store/items.h) and index entry key (store/indexes.h).
//
// Thread-safety: handlers are thread-safe (state is per request).
#pragma once

#include <chrono>
#include <cstdint>

#include "api/operation.h"
#include "api/services.h"

namespace fdyno::api {

struct QueryOptions {
  std::chrono::milliseconds page_time_budget{3000};
  uint64_t page_bytes = 1024 * 1024;  // DynamoDB's 1 MB
  int read_batch = 256;               // key-values per engine range read
  // The asynchronous form (run on a network thread) reads at most this much of a page there;
  // a page that needs more is read again, whole, on a worker.
  uint64_t inline_page_bytes = 64 * 1024;
};

// Registers Query and Scan.
void RegisterQueryOperations(OperationRegistry& registry, const Services& services,
                             QueryOptions options = {});

}  // namespace fdyno::api
