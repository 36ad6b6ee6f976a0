// Leases: how fdyno processes over one database share background work (index backfills, table
// purges, TTL, stream maintenance, token GC) so that no unit of work is done by two processes at
// once and the work of a process that died is taken over within a bounded time.
//
// A lease is one key per unit of work under layout::Leases() -> (owner, expiry in wall
// milliseconds of the taker's clock); docs/format/leases.md has the format. A worker calls
// TakeLease at the start of every transaction that does leased work: it reads the lease (a
// conflicting read) and, when the lease is free, expired or already the owner's, writes the
// owner with a new expiry (a take or a renewal) and the transaction goes on; otherwise the
// worker leaves the unit to its holder. That read is the fence: a process that paused past its
// expiry, while another took the lease, either reads the new owner and stops, or had read the
// old value and conflicts with the take's write, retries and reads the new owner. So a
// transaction of leased work commits only while its owner holds the lease.
//
// Takeover: a lease is renewed by each step of its work; when its holder stops, another owner
// takes it once `duration` has passed by the taker's clock (plus the skew between the two
// clocks). A sole process (the embedded engine: no other process can open the database) takes
// every lease at once, since one it does not hold was left by an earlier run.
//
// Thread-safety: functions over a Transaction used by one thread; LeaseOptions is a value.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/result.h"
#include "kv/kv.h"
#include "kv/tuple.h"

namespace fdyno::store {

struct LeaseOptions {
  std::string owner;       // who takes; empty: ProcessLeaseOwner()
  Clock* clock = nullptr;  // null: Clock::Real(); expiry is in its wall milliseconds
  // How long a lease lasts after its last renewal: the bound on taking over a dead owner's work.
  std::chrono::milliseconds duration{10'000};
  // A held lease is written again (renewed) when this long has passed since it was last
  // written; 0: at every step. Below `duration`, or the lease lapses between steps.
  std::chrono::milliseconds renew{0};
  bool sole = false;  // the only process over the database: every lease is free to take
};

// The lease record (docs/format/leases.md).
struct Lease {
  std::string owner;
  int64_t expiry_ms = 0;  // wall milliseconds, by the clock of the owner's last write
};

// A random owner id for this process, the same for its whole life ("<hostname>-<pid>-<random>").
const std::string& ProcessLeaseOwner();

// The key of the lease on one unit of work, e.g. {"index", table_id, index_id}.
std::string LeaseKey(const kv::Tuple& unit);

// The lease at `key`, read with a conflicting read (nullopt: free). A record this binary cannot
// read is an error (fail closed: nobody takes it).
Result<std::optional<Lease>> ReadLease(kv::Transaction& tx, std::string_view key);

// Takes or renews the lease at `key` for options.owner in `tx` when it is free, expired or
// already the owner's, and returns true; returns false (writing nothing) when another owner
// holds it. Call it in every transaction of leased work, before the work: see the header.
Result<bool> TakeLease(kv::Transaction& tx, std::string_view key, const LeaseOptions& options);

// Frees the lease at `key` in `tx` when options.owner holds it (the work is done, or handed
// back); another owner's lease is left alone.
Status ReleaseLease(kv::Transaction& tx, std::string_view key, const LeaseOptions& options);

}  // namespace fdyno::store
