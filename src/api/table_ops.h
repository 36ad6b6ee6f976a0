// The table operations: CreateTable, DescribeTable, ListTables, DeleteTable, UpdateTable,
// TagResource, UntagResource and ListTagsOfResource (api/pitr_ops.h has DescribeContinuousBackups).
// Enabling, disabling or dropping a table's stream creates or closes its stream (store/streams.h)
// in the same transaction.
//
// Each handler checks the request in DynamoDB's order (deserialization, then the table name,
// then the API model's constraints collected together, then semantic rules one at a time;
// api/json_util.h), then runs one kv transaction through kv::Run against the catalog
// (store/catalog.h), then renders DynamoDB's response. DeleteTable only drops the table in the
// catalog (its name is free and its data unreachable from that commit on) and answers
// DELETING; the purge worker (workers/purge.h, woken through Services::wake_purge) removes the
// data afterwards, so a large table never holds a request.
//
// RegisterTableOperations registers all eight. table_ops.cc has DescribeTable, DeleteTable and
// ListTables; create_table.cc, update_table.cc and tag_ops.cc the others (api/table_handlers.h).
// The request members CreateTable and UpdateTable share are api/table_request.h's, the semantic
// rules api/table_rules.h's.
//
// Tables are global to the server; ARNs carry the caller's account and region
// (docs/compatibility.md). Tables are ACTIVE as soon as CreateTable commits; CreateTable's own
// response says CREATING, as DynamoDB's does.
//
// Thread-safety: the handlers are thread-safe; they share only thread-safe services.
#pragma once

#include <rapidjson/document.h>

#include "api/operation.h"
#include "api/services.h"
#include "store/catalog.h"

namespace fdyno::api {

// Registers the table operations. What `services` points to must outlive the handlers.
void RegisterTableOperations(OperationRegistry& registry, const Services& services);

// The table ImportTable's TableCreationParameters describe, checked as CreateTable checks its
// request (its errors), with status CREATING.
Result<store::TableInfo> PlanImportedTable(const rapidjson::Value& params, int64_t now_ms);

}  // namespace fdyno::api
