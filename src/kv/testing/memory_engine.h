// An in-memory engine for tests: the kv contract (kv/kv.h) in one process, behind one mutex.
// It is a real implementation, not a mock: multi-version reads at a read version,
// read-your-writes (points, ranges, reverse, clears, Add), a resolver that fails a commit with
// 1020 when a read conflict range intersects a write committed after the read version, 1007 for
// read versions older than 5 s (by the injected clock), FoundationDB's limits and codes,
// versionstamps (8-byte commit version, 2-byte order 0), timeouts (1031) and cancellation
// (1025). It keeps every version of every key (tests are small) and nothing survives the
// process. Reading a key set with SetVersionstampedValue in the same transaction fails with 1036
// (accessed_unreadable), as in FoundationDB; keys made by SetVersionstampedKey are not visible
// to the transaction that writes them.
//
// Thread-safety: the Database is thread-safe; a Transaction is used by one thread at a time.
#pragma once

#include <memory>

#include "base/clock.h"
#include "kv/kv.h"

namespace fdyno::kv {

struct MemoryEngineOptions {
  Clock* clock = nullptr;  // null: Clock::Real(); drives the 5 s window and timeouts
  // A commit whose mutations and conflict ranges pass this many bytes fails with 2101
  // (transaction_too_large); tests lower it to reach the limit with little data.
  size_t max_transaction_bytes = kMaxTransactionBytes;
};

std::unique_ptr<Database> OpenMemoryEngine(const MemoryEngineOptions& options = {});

}  // namespace fdyno::kv
