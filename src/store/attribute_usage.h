// Which attribute definitions a table still uses.
#pragma once

#include "store/catalog.h"

namespace fdyno::store {

// Removes the attribute definitions that no key schema (the table's, an index's) and no vector
// index's search schema uses, keeping the others' order: DynamoDB drops the attributes only a
// deleted index used, and a restore keeps those its indexes use.
void DropUnusedAttributeDefinitions(TableInfo& t);

}  // namespace fdyno::store
