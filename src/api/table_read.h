// One table read on its own, for the operations that only describe a table's settings.
#pragma once

#include <memory>
#include <string>

#include "api/operation.h"
#include "api/services.h"
#include "base/result.h"
#include "store/catalog.h"

namespace fdyno::api {

// The table `name` of the caller's account, read in a transaction of its own, or
// ResourceNotFoundException "Requested resource not found: Table: <name> not found".
Result<std::shared_ptr<const store::TableInfo>> ReadTable(const Services& s,
                                                          const RequestContext& ctx,
                                                          const std::string& name);

}  // namespace fdyno::api
