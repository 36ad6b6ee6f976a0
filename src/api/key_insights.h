// Contributor Insights' counting (DynamoDB's CloudWatch Contributor Insights, without CloudWatch):
// for each table and global secondary index whose insights are ENABLED (store::InsightsSettings),
// the keys most accessed and most throttled in this process's live traffic.
//
// An access is one item read or written through the resource's key: an item returned by
// GetItem, BatchGetItem, TransactGetItems, Query, Scan or a PartiQL SELECT, and an item written
// by PutItem, UpdateItem, DeleteItem, BatchWriteItem, TransactWriteItems or a PartiQL write (a
// write counts on the table only: the index entries it maintains do not count on the indexes).
// A throttle is a request refused by --enforce-capacity, counted on the key it addressed.
// Each rule DynamoDB creates (RuleNames) keeps its own counts: PKC (accesses by partition key),
// SKC (by partition and sort key), PKT and SKT (throttles); THROTTLED_KEYS mode keeps only the
// last two, as DynamoDB creates only those rules.
//
// Memory is bounded: each rule counts its keys per minute in a Space-Saving summary of
// kCountersPerRule counters (a key outside the summary takes the place of the least counted
// one, and inherits its count as a bound on its error), and keeps the minute before. Report()
// gives the most counted keys of the last one to two minutes. DynamoDB's quota of 100 rules per
// account (UpdateContributorInsights) bounds how many rules there are.
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/metrics.h"
#include "model/attribute_value.h"
#include "store/catalog.h"

namespace fdyno::api {

// The names of the CloudWatch rules DynamoDB creates for insights on `table` (or its global
// secondary index `index`), in DynamoDB's order: DynamoDBContributorInsights-<kind>-<resource>-
// <settings.rules_ms>, where resource is the table's name, or "<table>-<index>".
std::vector<std::string> RuleNames(const store::TableInfo& table, std::string_view index,
                                   const store::InsightsSettings& settings);

// How many rules insights on `key_schema` create in `mode` (DynamoDB's rule quota counts them).
int RuleCount(const store::KeySchema& key_schema, store::InsightsMode mode);

class KeyInsights {
 public:
  static constexpr size_t kCountersPerRule = 64;

  explicit KeyInsights(Clock* clock = Clock::Real());

  // Counts one access of `item_or_key` through `table` (index empty) or its global secondary
  // index `index`. Does nothing unless that resource's insights are enabled, or when the item
  // lacks the resource's key (an item outside a sparse index).
  void Accessed(const store::TableInfo& table, std::string_view index,
                const model::Item& item_or_key);
  // Counts one throttled request on `key` of `table` (or of its index `index`).
  void Throttled(const store::TableInfo& table, std::string_view index, const model::Item& key);
  // Drops what was counted for `table` (or its index `index`): its insights were disabled or
  // enabled again.
  void Forget(const store::TableInfo& table, std::string_view index);

  struct KeyCount {
    std::vector<std::string> keys;  // the partition key value, then the sort key value (SK rules)
    int64_t count = 0;
  };
  struct RuleReport {
    std::string rule;           // the rule's name (RuleNames)
    std::vector<KeyCount> top;  // most counted first
  };
  struct ResourceReport {
    std::string account;
    std::string table;
    std::string index;  // empty: the table
    std::vector<RuleReport> rules;
  };
  // The `top` most counted keys of every rule that counted anything in the last two minutes,
  // resources in (account, table, index) order.
  std::vector<ResourceReport> Report(size_t top = 10) const;
  // Report() as the JSON the admin listener serves at GET /contributor-insights:
  // {"resources":[{"account":..,"table":..,"index":..,"rules":[{"rule":..,"top":
  //   [{"keys":[..],"count":N}]}]}]}.
  std::string ReportJson(size_t top = 10) const;
  // Sets the gauge family fdyno_contributor_insights_key_events{account,table,index,rule,key}
  // to Report(top) (keys joined with '|'), replacing what it held.
  void Publish(Metrics& metrics, size_t top = 10) const;

 private:
  // Space-Saving counts of one minute.
  struct Summary {
    int64_t minute = -1;
    std::vector<KeyCount> counters;
    std::unordered_map<std::string, size_t> where;  // joined keys -> counters index
    void Add(std::vector<std::string> keys);
  };
  struct Rule {
    std::string name;
    bool sort = false;       // counts partition and sort key
    bool throttles = false;  // PKT/SKT
    Summary current, previous;
  };
  struct Resource {
    std::string account, table, index;
    std::vector<Rule> rules;
  };
  // Resources by (table uuid, index name): a table created again under its name starts afresh.
  using ResourceKey = std::pair<std::string, std::string>;

  void Count(const store::TableInfo& table, std::string_view index, const model::Item& item,
             bool throttled);
  Resource& ResourceFor(const store::TableInfo& table, std::string_view index,
                        const store::InsightsSettings& settings);

  Clock* const clock_;
  mutable std::mutex mu_;
  std::map<ResourceKey, Resource> resources_;
};

// What the operations call: nothing happens without `insights` or when neither the table nor
// any of its global secondary indexes has insights enabled (one test of the table's settings).
inline void CountAccess(KeyInsights* insights, const store::TableInfo& table,
                        std::string_view index, const model::Item& item_or_key) {
  if (insights != nullptr && table.CountsKeyAccesses())
    insights->Accessed(table, index, item_or_key);
}
inline void CountThrottle(KeyInsights* insights, const store::TableInfo& table,
                          std::string_view index, const model::Item& key) {
  if (insights != nullptr && table.CountsKeyAccesses()) insights->Throttled(table, index, key);
}
// Passes `admitted` (a capacity check's outcome) on, counting a refusal as a throttle of `key`.
inline Status CountedAdmission(Status admitted, KeyInsights* insights,
                               const store::TableInfo& table, std::string_view index,
                               const model::Item& key) {
  if (!admitted.ok()) CountThrottle(insights, table, index, key);
  return admitted;
}

}  // namespace fdyno::api
