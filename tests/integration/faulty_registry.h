// The operation handlers over the fault-injecting engine around an embedded engine of their own,
// called the way the router calls them: the harness of the exactly-once integration tests.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "api/api.h"
#include "api/testing/call.h"
#include "kv/engines/embedded/embedded.h"
#include "kv/engines/faulty/faulty.h"
#include "store/catalog.h"

namespace fdyno::integration {

class FaultyRegistry {
 public:
  // `name` and `seed` name the engine's directory; `seed` also seeds the faults (all off until
  // faulty().SetOptions). async: writes go through the asynchronous handlers and the embedded
  // engine's real CommitAsync, as `fdyno serve` runs them, with their retries on threads of
  // their own.
  FaultyRegistry(const std::string& name, uint64_t seed, bool async)
      : async_(async),
        dir_((std::filesystem::temp_directory_path() /
              (name + "_" + std::to_string(seed) + (async ? "a_" : "s_") +
               std::to_string(::getpid())))
                 .string()) {
    std::filesystem::remove_all(dir_);
    auto inner = kv::OpenEmbedded({.path = dir_, .durability = kv::Durability::kNone});
    EXPECT_TRUE(inner.ok());
    inner_ = std::shared_ptr<kv::Database>(std::move(inner).value());
    kv::FaultOptions none;
    none.seed = seed;
    faulty_ = kv::WrapFaulty(inner_, none);
    api::ApiDeps deps;
    deps.db = faulty_.get();
    deps.catalog = &catalog_;
    registry_ = api::BuildOperationRegistry(deps);
  }
  ~FaultyRegistry() {
    retries_.JoinAll();  // a retry still releasing its transaction, before the engine closes
    registry_ = api::OperationRegistry();
    faulty_.reset();
    inner_.reset();
    std::filesystem::remove_all(dir_);
  }

  Result<std::string> Call(const std::string& op, const std::string& json) {
    if (async_ && registry_.FindAsync(op) != nullptr) {
      api::RequestContext ctx;
      ctx.blocking = retries_.Blocking();
      return api::testing::CallOperationAsync(registry_, op, json, std::move(ctx));
    }
    return api::testing::CallOperation(registry_, op, json);
  }

  bool async() const { return async_; }
  kv::FaultyDatabase& faulty() { return *faulty_; }
  const api::OperationRegistry& registry() const { return registry_; }
  api::testing::BlockingThreads& retries() { return retries_; }

 private:
  bool async_;
  std::string dir_;
  std::shared_ptr<kv::Database> inner_;
  std::unique_ptr<kv::FaultyDatabase> faulty_;
  store::Catalog catalog_;
  api::OperationRegistry registry_;
  api::testing::BlockingThreads retries_;
};

}  // namespace fdyno::integration
