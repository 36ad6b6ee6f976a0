// Point-in-time recovery: UpdateContinuousBackups, DescribeContinuousBackups and
// RestoreTableToPointInTime (store/pitr.h holds the history the writes keep, workers/pitr.h
// does the restores and the retention).
//
// UpdateContinuousBackups enables recovery (a new, empty history: the window starts then) or
// disables it (the history is dropped by the worker). RestoreTableToPointInTime creates the
// target table CREATING (unusable, as for RestoreTableFromBackup) with a job; the worker fills
// it with the source table as it was at the restore time and marks it ACTIVE.
//
// Thread-safety: the handlers are thread-safe; they share only thread-safe services.
#pragma once

#include "api/operation.h"
#include "api/services.h"

namespace fdyno::api {

// Registers the point-in-time recovery operations. What `services` points to must outlive the
// handlers.
void RegisterPitrOperations(OperationRegistry& registry, const Services& services);

}  // namespace fdyno::api
