#include "api/api.h"

namespace fdyno::api {

OperationRegistry BuildOperationRegistry(const ApiDeps& deps) {
  OperationRegistry registry;
  RegisterMetaOperations(registry, deps);
  return registry;
}

}  // namespace fdyno::api
