// DynamoDB Streams in the background (store/streams.h): 24-hour retention, shard rotation, the
// removal of streams disabled (or whose table was deleted) more than 24 hours ago, and streams
// for tables whose stream was enabled by a binary that did not record streams.
//
// Every step is its own bounded transaction: trimming removes at most `trim_batch` records of
// one slot and moves the slot's trim point past them (GetRecords before it is
// TrimmedDataAccessException); a rotation writes the next generation's boundary at its own
// versionstamp, reading the boundaries so that concurrent rotations conflict; a generation whose
// records are all trimmed is forgotten (its shards leave DescribeStream).
//
// Several processes: the maintenance of one stream is leased (store/leases.h, unit ("stream",
// stream id)): each of its transactions takes or renews the lease first and the stream is left
// to another owner that holds it; the end of the stream's maintenance releases the lease.
//
// Thread-safety: RunStreamPass may run on any thread; StreamWorker owns one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "base/clock.h"
#include "base/result.h"
#include "kv/kv.h"
#include "store/catalog.h"
#include "store/leases.h"
#include "store/streams.h"
#include "workers/periodic.h"

namespace fdyno::workers {

struct StreamWorkerOptions {
  std::chrono::milliseconds interval{10'000};
  // A new generation of shards this long after the last began (--stream-shard-rotation);
  // 0: never. DynamoDB's shards close after about four hours.
  std::chrono::milliseconds rotation{std::chrono::hours(4)};
  int64_t retention_ms = store::kStreamRetentionMs;
  int trim_batch = 1000;      // records removed per transaction
  int slots = 1;              // slots of the streams this pass creates for older tables
  Clock* clock = nullptr;     // null: Clock::Real()
  store::LeaseOptions lease;  // who works, and for how long a lease holds
};

struct StreamStats {
  int migrated = 0;   // tables that got the stream an older binary had not recorded
  int trimmed = 0;    // records removed
  int rotated = 0;    // new generations
  int forgotten = 0;  // generations forgotten
  int deleted = 0;    // streams removed
  int elsewhere = 0;  // streams left to the owner of their lease
};

Result<StreamStats> RunStreamPass(kv::Database& db, store::Catalog& catalog,
                                  const StreamWorkerOptions& options);

// The key of the lease on a stream's maintenance.
std::string StreamLeaseKey(int64_t stream_id);

class StreamWorker {
 public:
  StreamWorker(kv::Database* db, store::Catalog* catalog, StreamWorkerOptions options);
  void Start();
  void Stop();  // also on destruction

 private:
  Periodic periodic_;
};

}  // namespace fdyno::workers
