#include "api/warm_throughput.h"

#include <algorithm>
#include <string>

#include "api/table_rules.h"

namespace fdyno::api::tables {
namespace {

// The members of a warm throughput, as messages name them, with the capacity unit each is
// compared with on a provisioned table.
struct Member {
  const char* name;
  const char* capacity;
  std::optional<int64_t> WarmIn::*given;
  int64_t store::WarmThroughput::*units;
};
constexpr Member kMembers[] = {
    {"ReadUnitsPerSecond", "ReadCapacityUnits", &WarmIn::read,
     &store::WarmThroughput::read_units_per_second},
    {"WriteUnitsPerSecond", "WriteCapacityUnits", &WarmIn::write,
     &store::WarmThroughput::write_units_per_second},
};

// What the billing mode and throughput alone give.
store::WarmThroughput Base(bool on_demand, const store::Throughput& throughput) {
  if (on_demand) return {kOnDemandInitialReadUnits, kOnDemandInitialWriteUnits};
  return {throughput.read_capacity_units, throughput.write_capacity_units};
}

store::WarmThroughput Higher(const store::WarmThroughput& a, const store::WarmThroughput& b) {
  return {std::max(a.read_units_per_second, b.read_units_per_second),
          std::max(a.write_units_per_second, b.write_units_per_second)};
}

bool OnDemand(const store::TableInfo& t) {
  return t.billing_mode == store::BillingMode::kPayPerRequest;
}

std::string Requested(const Member& m, std::string_view subject) {
  return "Requested " + std::string(m.name) + " for WarmThroughput for " + std::string(subject) +
         " is lower than ";
}

}  // namespace

store::WarmThroughput EffectiveWarm(const store::TableInfo& t) {
  return Higher(t.warm, Base(OnDemand(t), t.throughput));
}

store::WarmThroughput EffectiveWarm(const store::TableInfo& t, const store::SecondaryIndex& index) {
  return Higher(index.warm, Base(OnDemand(t), index.throughput));
}

Result<store::WarmThroughput> InitialWarm(const std::optional<WarmIn>& in, bool on_demand,
                                          const store::Throughput& throughput,
                                          std::string_view subject) {
  store::WarmThroughput warm = Base(on_demand, throughput);
  if (!in) return warm;
  for (const Member& m : kMembers) {
    const std::optional<int64_t>& given = (*in).*m.given;
    if (!given) continue;
    if (*given < warm.*m.units) {
      return Invalid(Requested(m, subject) +
                     (on_demand ? "initial throughput for OnDemand. See: "
                                  "https://docs.aws.amazon.com/amazondynamodb/latest/"
                                  "developerguide/on-demand-capacity-mode.html"
                                  "#on-demand-capacity-mode-initial"
                                : std::string(m.capacity) + " of ProvisionedThroughput"));
    }
  }
  for (const Member& m : kMembers) {
    if ((*in).*m.given) warm.*m.units = *((*in).*m.given);
  }
  return warm;
}

Result<store::WarmThroughput> RaisedWarm(const WarmIn& in, const store::WarmThroughput& current,
                                         std::string_view subject) {
  store::WarmThroughput warm = current;
  for (const Member& m : kMembers) {
    const std::optional<int64_t>& given = in.*m.given;
    if (!given) continue;
    if (*given < current.*m.units) {
      return Invalid(Requested(m, subject) +
                     "current WarmThroughput, decreasing WarmThroughput is not supported");
    }
    warm.*m.units = *given;
  }
  return warm;
}

void SettleWarm(const store::TableInfo& before, store::TableInfo& after) {
  after.warm = Higher(Higher(after.warm, EffectiveWarm(before)), EffectiveWarm(after));
  for (store::SecondaryIndex& index : after.global_indexes) {
    store::WarmThroughput shown = EffectiveWarm(after, index);
    for (const store::SecondaryIndex& old : before.global_indexes) {
      if (old.id == index.id) shown = Higher(shown, EffectiveWarm(before, old));
    }
    index.warm = Higher(index.warm, shown);
  }
}

}  // namespace fdyno::api::tables
