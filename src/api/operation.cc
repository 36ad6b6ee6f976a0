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

void OperationRegistry::RegisterAsync(std::string_view name, AsyncHandler handler) {
  assert(Find(name) != nullptr);
  [[maybe_unused]] bool inserted =
      async_handlers_.emplace(std::string(name), std::move(handler)).second;
  assert(inserted);
}

const AsyncHandler* OperationRegistry::FindAsync(std::string_view name) const {
  auto it = async_handlers_.find(name);
  return it == async_handlers_.end() ? nullptr : &it->second;
}

const Handler* OperationRegistry::Find(std::string_view name) const {
  return Find(Service::kDynamoDB, name);
}

const Handler* OperationRegistry::Find(Service service, std::string_view name) const {
  const auto& handlers = service == Service::kStreams ? streams_handlers_ : handlers_;
  auto it = handlers.find(name);
  return it == handlers.end() ? nullptr : &it->second;
}

void OperationRegistry::WrapAll(
    const std::function<Handler(const std::string& name, Handler)>& wrap,
    const std::function<AsyncHandler(const std::string& name, AsyncHandler)>& wrap_async) {
  for (auto& [name, handler] : handlers_) handler = wrap(name, std::move(handler));
  for (auto& [name, handler] : async_handlers_) handler = wrap_async(name, std::move(handler));
}

std::vector<std::string> OperationRegistry::Names(Service service) const {
  const auto& handlers = service == Service::kStreams ? streams_handlers_ : handlers_;
  std::vector<std::string> out;
  out.reserve(handlers.size());
  for (const auto& [name, handler] : handlers) out.push_back(name);
  return out;
}

}  // namespace fdyno::api
