#include "api/operation.h"

#include <cassert>

namespace fdyno::api {

void OperationRegistry::Register(std::string name, Handler handler) {
  [[maybe_unused]] bool inserted = handlers_.emplace(std::move(name), std::move(handler)).second;
  assert(inserted);
}

const Handler* OperationRegistry::Find(std::string_view name) const {
  auto it = handlers_.find(name);
  return it == handlers_.end() ? nullptr : &it->second;
}

}  // namespace fdyno::api
