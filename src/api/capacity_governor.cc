#include "api/capacity_governor.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>

#include "api/table_arn.h"
#include "base/metrics.h"
#include "store/item_collections.h"

namespace fdyno::api {
namespace {

constexpr double kProvisionedBurstSeconds = 300;  // DynamoDB banks up to 5 minutes
constexpr double kPartitionReadUnits = 3000;
constexpr double kPartitionWriteUnits = 1000;
// Partition buckets created between two sweeps of the idle ones.
constexpr size_t kPartitionSweepEvery = 4096;

constexpr std::string_view kTableMessage =
    "The level of configured provisioned throughput for the table was exceeded. Consider "
    "increasing your provisioning level with the UpdateTable API.";
constexpr std::string_view kIndexMessage =
    "The level of configured provisioned throughput for one or more global secondary indexes of "
    "the table was exceeded. Consider increasing your provisioning level for the "
    "under-provisioned global secondary indexes with the UpdateTable API";
constexpr std::string_view kOnDemandMessage =
    "Throughput exceeds the maximum OnDemandThroughput configured on table or index";
constexpr std::string_view kPartitionMessage =
    "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically "
    "scaling your table or index so please try again shortly. If exceptions persist, check if "
    "you have a hot key: "
    "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html";

char Letter(Access access) { return access == Access::kRead ? 'r' : 'w'; }

std::string TableKey(const store::TableInfo& t, Access access) {
  return "t" + std::to_string(t.id) + Letter(access);
}
std::string IndexKey(const store::TableInfo& t, const store::SecondaryIndex& index, Access access) {
  return "i" + std::to_string(t.id) + "." + std::to_string(index.id) + Letter(access);
}
std::string PartitionKey(const store::TableInfo& t, Access access, std::string_view partition) {
  return "p" + std::to_string(t.id) + Letter(access) + std::string(partition);
}

bool Provisioned(const store::TableInfo& t) {
  return t.billing_mode == store::BillingMode::kProvisioned;
}

// Why a bucket throttles: the ThrottlingReason's limit type and DynamoDB's message.
struct Cause {
  std::string_view limit_type;
  std::string_view message;
};

Cause TableCause(const store::TableInfo& t) {
  return Provisioned(t) ? Cause{"ProvisionedThroughputExceeded", kTableMessage}
                        : Cause{"MaxOnDemandThroughputExceeded", kOnDemandMessage};
}
Cause IndexCause(const store::TableInfo& t) {
  return Provisioned(t) ? Cause{"ProvisionedThroughputExceeded", kIndexMessage}
                        : Cause{"MaxOnDemandThroughputExceeded", kOnDemandMessage};
}

Error Throttled(std::string_view region, const store::TableInfo& table,
                const store::SecondaryIndex* index, Access access, const Cause& cause) {
  static Metrics& metrics = Metrics::Global();
  std::string reason = std::string(index ? "Index" : "Table") +
                       (access == Access::kRead ? "Read" : "Write") + std::string(cause.limit_type);
  metrics.GetCounter("capacity_throttles", {{"reason", reason}}).Add();
  std::string resource = TableArn(region, table.account, table.name);
  if (index) resource += "/index/" + index->name;
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartArray();
  w.StartObject();
  w.Key("reason");
  w.String(reason.data(), static_cast<rapidjson::SizeType>(reason.size()));
  w.Key("resource");
  w.String(resource.data(), static_cast<rapidjson::SizeType>(resource.size()));
  w.EndObject();
  w.EndArray();
  Error e = Error::Make(ErrorType::kProvisionedThroughputExceeded, std::string(cause.message));
  e.throttling_reasons_json = std::string(buffer.GetString(), buffer.GetSize());
  return e;
}

}  // namespace

CapacityGovernor::CapacityGovernor(Clock* clock) : clock_(clock) {
  Metrics::Global().Describe(
      "capacity_throttles",
      "Requests throttled by --enforce-capacity, by ThrottlingReason (Table or Index, Read or "
      "Write, and the limit: ProvisionedThroughputExceeded, MaxOnDemandThroughputExceeded or "
      "KeyRangeThroughputExceeded).");
}

namespace {

// How fast a bucket refills, and how much of it is banked; rate 0: unlimited.
struct Rate {
  double units = 0;
  double burst_seconds = 1;
};

Rate TableRate(const store::TableInfo& t, Access access) {
  if (Provisioned(t)) {
    return {static_cast<double>(access == Access::kRead ? t.throughput.read_capacity_units
                                                        : t.throughput.write_capacity_units),
            kProvisionedBurstSeconds};
  }
  return {static_cast<double>(access == Access::kRead ? t.on_demand.max_read_request_units
                                                      : t.on_demand.max_write_request_units),
          1};
}

Rate IndexRate(const store::TableInfo& t, const store::SecondaryIndex& index, Access access) {
  if (!Provisioned(t)) {
    return {static_cast<double>(access == Access::kRead ? index.on_demand.max_read_request_units
                                                        : index.on_demand.max_write_request_units),
            1};
  }
  return {static_cast<double>(access == Access::kRead ? index.throughput.read_capacity_units
                                                      : index.throughput.write_capacity_units),
          kProvisionedBurstSeconds};
}

Rate PartitionRate(Access access) {
  return {access == Access::kRead ? kPartitionReadUnits : kPartitionWriteUnits, 1};
}

const store::SecondaryIndex* FindGlobal(const store::TableInfo& t, std::string_view name) {
  for (const store::SecondaryIndex& index : t.global_indexes) {
    if (index.name == name) return &index;
  }
  return nullptr;
}

}  // namespace

CapacityGovernor::Bucket& CapacityGovernor::Refilled(const std::string& key, double rate,
                                                     double burst_seconds) {
  const auto now = clock_->Now();
  auto [it, created] = buckets_.try_emplace(key);
  Bucket& b = it->second;
  if (created) {
    b.tokens = rate;  // one second's worth: nothing unused was banked yet
    if (key.front() == 'p' && ++partition_buckets_ % kPartitionSweepEvery == 0) {
      SweepPartitions();
    }
  } else {
    const double seconds = std::chrono::duration<double>(now - b.at).count();
    b.tokens = std::min(rate * burst_seconds, b.tokens + rate * std::max(0.0, seconds));
  }
  b.rate = rate;
  b.cap = rate * burst_seconds;
  b.at = now;
  return b;
}

void CapacityGovernor::SweepPartitions() {
  const auto now = clock_->Now();
  for (auto it = buckets_.begin(); it != buckets_.end();) {
    const Bucket& b = it->second;
    const double seconds = std::chrono::duration<double>(now - b.at).count();
    const bool idle = it->first.front() == 'p' && b.tokens + b.rate * seconds >= b.cap;
    it = idle ? buckets_.erase(it) : std::next(it);
  }
}

std::string PartitionOf(const store::TableInfo& table, const model::Item& item_or_key) {
  return store::CollectionOf(table, item_or_key).encoded_hash;
}

Status CapacityGovernor::Admit(std::string_view region, const store::TableInfo& table,
                               const Draw& draw) {
  std::lock_guard lock(mu_);
  auto spent = [&](const std::string& key, const Rate& rate) {
    return rate.units > 0 &&
           Refilled(key, rate.units, rate.burst_seconds).tokens - draw.pending <= 0;
  };
  const Access access = draw.access;
  const store::SecondaryIndex* read_index =
      access == Access::kRead && !draw.index.empty() ? FindGlobal(table, draw.index) : nullptr;
  if (read_index != nullptr) {
    if (spent(IndexKey(table, *read_index, access), IndexRate(table, *read_index, access))) {
      return Throttled(region, table, read_index, access, IndexCause(table));
    }
    return Status::Ok();
  }
  if (spent(TableKey(table, access), TableRate(table, access))) {
    return Throttled(region, table, nullptr, access, TableCause(table));
  }
  if (!draw.partition.empty() &&
      spent(PartitionKey(table, access, draw.partition), PartitionRate(access))) {
    return Throttled(region, table, nullptr, access,
                     {"KeyRangeThroughputExceeded", kPartitionMessage});
  }
  if (access == Access::kWrite) {
    for (const store::SecondaryIndex& index : table.global_indexes) {
      if (spent(IndexKey(table, index, access), IndexRate(table, index, access))) {
        return Throttled(region, table, &index, access, IndexCause(table));
      }
    }
  }
  return Status::Ok();
}

void CapacityGovernor::Charge(const store::TableInfo& table, const ConsumedCapacity& consumed,
                              std::string_view partition) {
  std::lock_guard lock(mu_);
  const Access access = consumed.is_write ? Access::kWrite : Access::kRead;
  auto debit = [&](const std::string& key, const Rate& rate, double units) {
    if (rate.units > 0 && units > 0) Refilled(key, rate.units, rate.burst_seconds).tokens -= units;
  };
  double table_units = consumed.table_units;
  for (const auto& [name, units] : consumed.local_indexes) table_units += units;
  debit(TableKey(table, access), TableRate(table, access), table_units);
  for (const auto& [name, units] : consumed.global_indexes) {
    if (const store::SecondaryIndex* index = FindGlobal(table, name)) {
      debit(IndexKey(table, *index, access), IndexRate(table, *index, access), units);
    }
  }
  if (!partition.empty()) {
    debit(PartitionKey(table, access, partition), PartitionRate(access), consumed.table_units);
  }
}

}  // namespace fdyno::api
