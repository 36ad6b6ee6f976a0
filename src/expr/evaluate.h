// Stage 3 of the expression pipeline: pure functions of (item, resolved tree).
//
// Nothing here reads or writes anything but its arguments, so a body that runs these inside a
// retried transaction gets the same answer every time. Thread-safe.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "expr/ast.h"
#include "model/attribute_value.h"
#include "model/key_schema.h"

namespace fdyno::expr {

// The value at `path` in `item`, or null when any step is missing or of the wrong kind (a
// name step into something that is not a map, an index step into something that is not a
// list or past its end). The pointer refers into `item`.
const model::AttributeValue* Lookup(const model::Item& item, const Path& path);

// Evaluates a ConditionExpression / FilterExpression / KeyConditionExpression against an item
// (an absent item is an empty one) with DynamoDB's semantics: a comparison of values of
// different types, or involving a missing attribute, is false (and `<>` true); <, <=, >, >=
// and BETWEEN order only numbers, strings (UTF-8 bytes) and binaries (unsigned bytes);
// contains() looks into strings, binaries, sets and lists; size() is defined for strings
// (UTF-8 bytes), binaries, sets, lists and maps.
bool EvaluateCondition(const Condition& condition, const model::Item& item);

// ProjectionExpression / AttributesToGet: the item restricted to `paths`, keeping the nesting
// of map paths and, for list indexes, the selected elements in index order (a[3], a[1] yields
// a: [a[1], a[3]]). Paths that do not exist in the item are skipped.
// REQUIRES: no two paths overlap (the resolver guarantees it).
model::Item Project(const model::Item& item, const Projection& paths);

// UpdateExpression / AttributeUpdates: the new item. Every value on a right-hand side is read
// from `item` as it was before the update. Errors are DynamoDB's ValidationExceptions:
// "The provided expression refers to an attribute that does not exist in the item",
// "An operand in the update expression has an incorrect data type",
// "The document path provided in the update expression is invalid for update", number
// overflow/underflow/precision errors from + and ADD, and list_append operand type errors.
Result<model::Item> ApplyUpdate(const Update& update, const model::Item& item);

// Whether every action of `update` only removes (REMOVE, DELETE): such an update does not
// create a missing item (UpdateItem and TransactWriteItems Update alike).
bool OnlyRemoves(const Update& update);

// The distinct top-level attribute names an update writes or removes, in the order first
// written.
std::vector<std::string> UpdatedTopLevelAttributes(const Update& update);

// The key-attribute rule of every update (UpdateItem, a transaction's Update, a PartiQL UPDATE):
// ValidationException "One or more parameter values were invalid: Cannot update attribute pk.
// This attribute is part of the key" for the first key attribute of `schema` it writes or
// removes.
Status CheckKeyUntouched(const Update& update, const model::KeySchema& schema);

// The document paths an update writes or removes (for ReturnValues UPDATED_OLD/UPDATED_NEW,
// through Project()).
Projection UpdatedPaths(const Update& update);

}  // namespace fdyno::expr
