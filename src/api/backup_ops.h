// On-demand backups: CreateBackup, DescribeBackup, ListBackups, DeleteBackup and
// RestoreTableFromBackup (store/backups.h holds what they store, workers/backups.h does the
// long work).
//
// CreateBackup records the backup CREATING and returns; the backup worker copies the table at one
// consistent snapshot and marks it AVAILABLE. RestoreTableFromBackup creates the target table
// CREATING (unusable: ResourceNotFoundException for item operations, ResourceInUseException for
// DeleteTable and UpdateTable) with a restore job; the worker fills it and marks it ACTIVE.
// Backup ARNs are arn:aws:dynamodb:<region>:<account>:table/<table>/backup/<id>, rendered with
// the caller's account and region like table ARNs.
//
// Thread-safety: the handlers are thread-safe; they share only thread-safe services.
#pragma once

#include "api/operation.h"
#include "api/services.h"

namespace fdyno::api {

// Registers the backup operations. What `services` points to must outlive the handlers.
void RegisterBackupOperations(OperationRegistry& registry, const Services& services);

}  // namespace fdyno::api
