// --enforce-capacity: tables and indexes throttle at their capacity, as DynamoDB's do.
//
// Token buckets, refilled continuously at their rate and debited with the capacity units a
// request consumed (exactly as ConsumedCapacity reports them):
// * a provisioned table's reads and writes, and each provisioned global secondary index's, at
//   their capacity units per second, banking up to 300 seconds of unused capacity (DynamoDB's
//   burst capacity); a new bucket starts with one second's worth. Local secondary indexes draw on
//   the table's capacity;
// * an on-demand table, and each of its global secondary indexes, with OnDemandThroughput at its
//   maximum request units per second (no banking); without a maximum it never throttles on its
//   own (nor below its WarmThroughput: fdyno has no partitions to warm up);
// * each partition key value of any table at DynamoDB's per-partition limits, 3,000 read and
//   1,000 write units per second (no banking).
// A request is admitted while every bucket it draws on holds more than nothing (less what the
// same request already admitted: a batch's earlier items), and its units are debited after it
// ran, so a bucket may go below zero and then throttles until it refills. A write also needs
// write capacity in every provisioned global secondary index of its table, since the index
// entries it writes draw on them (a GSI whose writes throttle throttles its base table's
// writes). Rates are read from the table's description on every request, so UpdateTable's
// changes take effect at once.
//
// A throttled request gets ProvisionedThroughputExceededException, with DynamoDB's message
// and ThrottlingReasons ({reason, resource}), and has no effect.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "api/capacity.h"
#include "base/result.h"
#include "store/catalog.h"

namespace fdyno::api {

enum class Access { kRead, kWrite };

// What a request draws on.
struct Draw {
  Access access = Access::kRead;
  std::string_view index;      // a read through this index (empty: the table)
  std::string_view partition;  // the encoded partition key value (empty: no single one)
  double pending = 0;          // units the same request already admitted on these buckets

  static Draw Read(std::string_view partition = {}, std::string_view index = {},
                   double pending = 0) {
    return {Access::kRead, index, partition, pending};
  }
  static Draw Write(std::string_view partition = {}, double pending = 0) {
    return {Access::kWrite, {}, partition, pending};
  }
};

// The encoded partition key value of an item or key of `table` (Draw::partition). REQUIRES: it
// has the table's partition key attribute.
std::string PartitionOf(const store::TableInfo& table, const model::Item& item_or_key);

class CapacityGovernor {
 public:
  explicit CapacityGovernor(Clock* clock = Clock::Real());

  // OK when `draw` on `table` may run now; else the throttling error (its resource ARN in
  // `region`).
  Status Admit(std::string_view region, const store::TableInfo& table, const Draw& draw);
  // Debits what one request consumed on `table` (and on the partition, when it had one).
  void Charge(const store::TableInfo& table, const ConsumedCapacity& consumed,
              std::string_view partition = {});

 private:
  struct Bucket {
    double tokens = 0;
    double rate = 0;  // units per second
    double cap = 0;   // the most it banks
    std::chrono::steady_clock::time_point at;
  };
  // The bucket `key` refilled to now at `rate` units a second, banking `burst_seconds` of them.
  // REQUIRES: mu_ held, rate > 0.
  Bucket& Refilled(const std::string& key, double rate, double burst_seconds);
  // Drops partition buckets that refilled to full (idle keys), so they stay bounded.
  void SweepPartitions();

  Clock* clock_;
  std::mutex mu_;
  std::unordered_map<std::string, Bucket> buckets_;
  size_t partition_buckets_ = 0;
};

}  // namespace fdyno::api
