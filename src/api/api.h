// Wiring of the API layer: what every operation family needs, and the one place that
// registers every family into the OperationRegistry the HTTP layer dispatches to.
//
// Adding a family: declare `void Register<Family>Operations(OperationRegistry&, const
// ApiDeps&)` in its header and call it from BuildOperationRegistry (api.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "api/operation.h"
#include "base/clock.h"
#include "kv/kv.h"

namespace fdyno::store {
class Catalog;
class VectorGraphs;
}  // namespace fdyno::store

namespace fdyno::api {

class CapacityGovernor;
class KeyInsights;

// Shared services of the operation handlers. Pointers are not owned and outlive the registry.
struct ApiDeps {
  kv::Database* db = nullptr;  // null only in tests that register no data operations
  Clock* clock = nullptr;      // null: Clock::Real()
  // The table catalog (store/catalog.h); the table operations are registered when set.
  store::Catalog* catalog = nullptr;
  // Services::item_collection_size_limit_bytes (0: DynamoDB's 10 GB).
  uint64_t item_collection_size_limit_bytes = 0;
  // Services::ttl_update_interval_ms (negative: the default).
  int64_t ttl_update_interval_ms = -1;
  // Services::policy_update_interval_ms (negative: the default).
  int64_t policy_update_interval_ms = -1;
  // Services::deletion_protection_interval_ms (negative: the default).
  int64_t deletion_protection_interval_ms = -1;
  // Services::stream_slots (0: 1).
  int stream_slots = 0;
  // Services::wake_backups.
  std::function<void()> wake_backups = {};
  // Services::wake_purge.
  std::function<void()> wake_purge = {};
  // Services::vector_graphs.
  store::VectorGraphs* vector_graphs = nullptr;
  // Services::export_root.
  std::string export_root = {};
  // Services::capacity.
  CapacityGovernor* capacity = nullptr;
  // Services::insights.
  KeyInsights* insights = nullptr;
  // Resource-based policies decide who may run each operation (api/policy_guard.h): with
  // --credentials. Without, they are stored and validated only.
  bool enforce_policies = false;
};

// Service-level operations that need no table: DescribeEndpoints, DescribeLimits.
void RegisterMetaOperations(OperationRegistry& registry, const ApiDeps& deps);

// Every implemented operation of every family.
OperationRegistry BuildOperationRegistry(const ApiDeps& deps);

}  // namespace fdyno::api
