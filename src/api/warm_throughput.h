// WarmThroughput: the read and write units per second a table or global secondary index can
// serve at once, as DynamoDB reports and validates it.
//
// DynamoDB shows it on every table and global index: an on-demand one starts at 12,000 reads and
// 4,000 writes a second, a provisioned one at its capacity units; it follows the highest
// throughput ever provisioned, reaches the on-demand initial values when the table switches to
// on-demand, and never decreases (a request may only raise it). fdyno stores the values as last
// raised (store::WarmThroughput, 0: never stored) and shows the higher of those and what the
// current billing mode and throughput give, so records written before warm throughput existed
// show what DynamoDB would. fdyno has no partitions to pre-warm: a table serves its warm
// throughput at once, so raising it takes effect at the commit (DynamoDB: minutes).
//
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string_view>

#include "api/table_request.h"
#include "base/result.h"
#include "store/catalog.h"

namespace fdyno::api::tables {

// What a new on-demand table or global index can serve at once.
inline constexpr int64_t kOnDemandInitialReadUnits = 12'000;
inline constexpr int64_t kOnDemandInitialWriteUnits = 4'000;

// The warm throughput DescribeTable shows for table `t`, and for its global index `index`.
store::WarmThroughput EffectiveWarm(const store::TableInfo& t);
store::WarmThroughput EffectiveWarm(const store::TableInfo& t, const store::SecondaryIndex& index);

// CreateTable (and UpdateTable's index creation): the warm throughput a new table or global
// index starts with: `in`'s members over what its billing mode (`on_demand`) or `throughput`
// gives, or DynamoDB's error for a member below that. `subject` names it in messages: "table"
// or "index <name>".
Result<store::WarmThroughput> InitialWarm(const std::optional<WarmIn>& in, bool on_demand,
                                          const store::Throughput& throughput,
                                          std::string_view subject);

// UpdateTable: `current` (what is shown) raised to `in`'s members, or DynamoDB's error for a
// member below the current value. Equal values are accepted.
Result<store::WarmThroughput> RaisedWarm(const WarmIn& in, const store::WarmThroughput& current,
                                         std::string_view subject);

// After `before` was changed into `after` (same table): the stored warm throughput of the table
// and of each global index becomes the higher of what it showed before and what it shows now,
// so it never decreases and keeps the highest throughput ever provisioned.
void SettleWarm(const store::TableInfo& before, store::TableInfo& after);

}  // namespace fdyno::api::tables
