#include "api/operation.h"

#include <cassert>

namespace fdyno::api {

void OperationRegistry::Register(std::string name, Handler handler) {
  Register(Service::kDynamoDB, std::move(name), std::move(handler));
}

void OperationRegistry::Register(Service service, std::string name, Handler handler) {
  auto& handlers = service == Service::kStreams ? streams_handlers_ : handlers_;
  [[maybe_unused]] bool inserted = handlers.emplace(std::move(name), std::move(handler)).second;
  assert(inserted);
}

const Handler* OperationRegistry::Find(std::string_view name) const {
  return Find(Service::kDynamoDB, name);
}

const Handler* OperationRegistry::Find(Service service, std::string_view name) const {
  const auto& handlers = service == Service::kStreams ? streams_handlers_ : handlers_;
  auto it = handlers.find(name);
  return it == handlers.end() ? nullptr : &it->second;
}

std::vector<std::string> OperationRegistry::Names(Service service) const {
  const auto& handlers = service == Service::kStreams ? streams_handlers_ : handlers_;
  std::vector<std::string> out;
  out.reserve(handlers.size());
  for (const auto& [name, handler] : handlers) out.push_back(name);
  return out;
}

}  // namespace fdyno::api
