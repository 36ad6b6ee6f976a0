// The single-item operations: PutItem, GetItem, UpdateItem, DeleteItem.
//
// Each handler decodes and validates the whole request (item_request.h), parses and resolves
// its expressions (or converts the legacy parameters), then runs one kv transaction through
// kv::Run: catalog check, the item's current image, the condition, the new image with its
// chunks (store/items.h) and the operation receipt (store/receipts.h) all commit together.
// After a commit_unknown_result the next attempt reads the receipt first and replays the
// stored result instead of applying the effect again.
//
// Thread-safety: the handlers are thread-safe; they share only thread-safe services.
#pragma once

#include <memory>

#include "api/operation.h"
#include "api/partiql_ops.h"
#include "api/services.h"
#include "base/clock.h"
#include "kv/kv.h"
#include "kv/run.h"
#include "store/catalog.h"
#include "store/receipts.h"

namespace fdyno::api {

// Options of the item operations; the defaults are the production ones.
struct ItemOptions {
  // Sleeps between kv::Run attempts; null: real sleeps. Tests pass a no-op.
  kv::SleepFunction sleep;
};

// Registers PutItem, GetItem, UpdateItem and DeleteItem. `services` (db, catalog, clock) must
// outlive the registry's handlers. The handlers share one receipt store (store/receipts.h).
void RegisterItemOperations(OperationRegistry& registry, Services& services,
                            ItemOptions options = {});

// The mutation path of PartiQL's INSERT, UPDATE and DELETE (partiql_ops.h): each statement is
// the item operation it stands for (PutItem whose failed condition is DuplicateItemException,
// UpdateItem, DeleteItem), run by the same code with its own operation receipt, so conditions,
// ReturnValuesOnConditionCheckFailure, indexes, streams, TTL and capacity are the item
// operation's. `services` must outlive the writer.
PartiqlWriter MakePartiqlWriter(Services& services, ItemOptions options = {});

}  // namespace fdyno::api
