#include "api/api.h"

#include "api/autoscaling_ops.h"
#include "api/backup_ops.h"
#include "api/batch_ops.h"
#include "api/export_ops.h"
#include "api/global_table_ops.h"
#include "api/insights_ops.h"
#include "api/item_ops.h"
#include "api/kinesis_destination_ops.h"
#include "api/partiql_ops.h"
#include "api/pitr_ops.h"
#include "api/policy_guard.h"
#include "api/policy_ops.h"
#include "api/query_ops.h"
#include "api/stream_ops.h"
#include "api/table_ops.h"
#include "api/transact_ops.h"
#include "api/ttl_ops.h"
#include "api/vector_ops.h"

namespace fdyno::api {

OperationRegistry BuildOperationRegistry(const ApiDeps& deps) {
  OperationRegistry registry;
  RegisterMetaOperations(registry, deps);
  if (deps.db != nullptr && deps.catalog != nullptr) {
    Services services;
    services.db = deps.db;
    services.catalog = deps.catalog;
    services.clock = deps.clock != nullptr ? deps.clock : Clock::Real();
    if (deps.item_collection_size_limit_bytes != 0) {
      services.item_collection_size_limit_bytes = deps.item_collection_size_limit_bytes;
    }
    if (deps.stream_slots > 0) services.stream_slots = deps.stream_slots;
    if (deps.ttl_update_interval_ms >= 0) {
      services.ttl_update_interval_ms = deps.ttl_update_interval_ms;
    }
    if (deps.policy_update_interval_ms >= 0) {
      services.policy_update_interval_ms = deps.policy_update_interval_ms;
    }
    if (deps.deletion_protection_interval_ms >= 0) {
      services.deletion_protection_interval_ms = deps.deletion_protection_interval_ms;
    }
    services.wake_backups = deps.wake_backups;
    services.wake_purge = deps.wake_purge;
    services.vector_graphs = deps.vector_graphs;
    services.export_root = deps.export_root;
    services.capacity = deps.capacity;
    services.insights = deps.insights;
    RegisterTableOperations(registry, services);
    RegisterTtlOperations(registry, services);
    RegisterInsightsOperations(registry, services);
    RegisterStreamOperations(registry, services);
    RegisterTransactOperations(registry, services);
    RegisterItemOperations(registry, services);
    RegisterQueryOperations(registry, services);
    RegisterVectorOperations(registry, services);
    PartiqlOptions partiql;
    partiql.write = MakePartiqlWriter(services);
    RegisterPartiqlOperations(registry, services, std::move(partiql));
    RegisterBatchOperations(registry, services);
    RegisterBackupOperations(registry, services);
    RegisterPitrOperations(registry, services);
    RegisterExportOperations(registry, services);
    RegisterImportOperations(registry, services);
    RegisterPolicyOperations(registry, services);
    RegisterAutoScalingOperations(registry, services);
    RegisterGlobalTableOperations(registry, services);
    RegisterKinesisDestinationOperations(registry, services);
    if (deps.enforce_policies) {
      registry.WrapAll(
          [&services](const std::string& name, Handler inner) {
            return GuardHandler(services, name, std::move(inner));
          },
          [&services](const std::string& name, AsyncHandler inner) {
            return GuardAsyncHandler(services, name, std::move(inner));
          });
    } else {
      registry.WrapAll(
          [](const std::string&, Handler inner) { return OwnTableArnsHandler(std::move(inner)); },
          [](const std::string&, AsyncHandler inner) {
            return OwnTableArnsAsyncHandler(std::move(inner));
          });
    }
  }
  return registry;
}

}  // namespace fdyno::api
