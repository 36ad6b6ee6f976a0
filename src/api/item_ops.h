// The single-item operations: PutItem, GetItem, UpdateItem, DeleteItem, and the writer of
// PartiQL's INSERT, UPDATE and DELETE statements (MakePartiqlWriter).
//
// Each handler decodes and validates the whole request (item_request.h) and parses and
// resolves its expressions (or converts the legacy parameters). GetItem reads the item in one
// read-only kv transaction. A write runs each attempt in one kv transaction (kv::Run, or
// kv::RunAsync for the asynchronous form) through the write executor (write_executor.h): the
// catalog check and CheckAction, then RunOnce with the request's operation receipt as its
// ReplayRecord, which runs ReadAction, Evaluate and a store::Mutation (the item, store/items.h,
// with everything derived from it) and writes the receipt (store/receipts.h) beside them, so
// all commit together. After a commit_unknown_result the next attempt finds the receipt and
// replays the stored result instead of applying the effect again.
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

// Registers PutItem, GetItem, UpdateItem and DeleteItem, and the asynchronous form of the three
// writes. `services` (db, catalog, clock, receipts) must outlive the registry's handlers. The
// writes keep their receipts in services.receipts, the one receipt store of the database.
void RegisterItemOperations(OperationRegistry& registry, Services& services,
                            ItemOptions options = {});

// The writer of PartiQL's INSERT, UPDATE and DELETE (partiql_ops.h): each statement is the
// item operation it stands for (PutItem whose failed condition is DuplicateItemException,
// UpdateItem, DeleteItem), run by the same code with its own operation receipt (of that item
// operation's kind), so conditions, ReturnValuesOnConditionCheckFailure, indexes, streams and
// TTL are the item operation's. Its consumed capacity is the table's write units only (no index
// units). `services` must outlive the writer.
PartiqlWriter MakePartiqlWriter(Services& services, ItemOptions options = {});

}  // namespace fdyno::api
