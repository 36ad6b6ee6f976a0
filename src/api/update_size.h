// The 400 KB item size rule of an update (UpdateItem, a TransactWriteItems Update, a PartiQL
// UPDATE), as DynamoDB is observed to apply it: the item after the update must fit, and so must
// that item without its key attributes plus a cost for each action of the update. So an update
// can be refused where a PutItem of the same finished item is accepted.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>

#include "base/result.h"
#include "expr/ast.h"
#include "model/attribute_value.h"
#include "model/key_schema.h"

namespace fdyno::api {

// What DynamoDB adds to the updated item's size without its key attributes: 3 bytes for the
// update, 19 for each action that writes a value (20 when its path goes through a list index,
// 69 for arithmetic), 2 for each that removes one (REMOVE, DELETE).
uint64_t UpdateSizeOverhead(const expr::Update& update);

// ValidationException "Item size to update has exceeded the maximum allowed size" when `next`
// (the item after `update`, on a table with key schema `schema`) breaks the rule above. With no
// update (an UpdateItem without actions), only the finished item's size counts.
Status CheckUpdateSize(const model::Item& next, const model::KeySchema& schema,
                       const expr::Update* update);

}  // namespace fdyno::api
