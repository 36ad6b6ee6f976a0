#include "kv/engines/fdb/client.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <thread>

#include "base/thread_name.h"
#include "kv/engines/fdb/loader.h"
#include "kv/engines/fdb/prefix.h"
#include "kv/kv.h"

namespace fdyno::kv::fdb {
namespace {

std::string Describe(const Api& api, fdb_error_t code) {
  return std::string(api.get_error(code)) + " (fdb error " + std::to_string(code) + ")";
}

// The process's client. Its destructor, at exit, stops and joins the network thread, which
// FoundationDB requires before the process ends.
class Client {
 public:
  ~Client() {
    if (!network_.joinable()) return;
    if (fdb_error_t e = api_->stop_network(); e != 0) {
      spdlog::warn("fdb: stopping the network failed: {}", Describe(*api_, e));
    }
    network_.join();
  }

  Result<const Api*> Start(const std::string& library) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!failure_.message.empty()) return failure_;
    if (api_) {
      if (library == library_) return static_cast<const Api*>(api_.get());
      return Error::Internal("the FoundationDB client library is already loaded from '" + library_ +
                             "'; a process cannot load a second one ('" + library + "')");
    }
    FDYNO_ASSIGN_OR_RETURN(std::unique_ptr<Api> api, LoadLibrary(library));
    if (Status s = SelectVersion(*api); !s.ok()) return std::move(s).error();
    if (Status s = RunNetwork(*api); !s.ok()) {
      failure_ = s.error();  // the API version is selected for good: never again
      return std::move(s).error();
    }
    api_ = std::move(api);
    library_ = library;
    spdlog::info("fdb: client {} loaded from {}, API version {}", api_->get_client_version(),
                 library_, api_->api_version);
    return static_cast<const Api*>(api_.get());
  }

 private:
  Status SelectVersion(Api& api) {
    const int max_supported = api.get_max_api_version();
    const int version = ChooseApiVersion(max_supported);
    if (version == 0) {
      return Error::Internal("the FoundationDB client library speaks API versions up to " +
                             std::to_string(max_supported) + "; fdyno needs " +
                             std::to_string(kMinApiVersion) + " (FoundationDB 7.1) or later");
    }
    if (fdb_error_t e = api.select_api_version_impl(version, version); e != 0) {
      failure_ = Error::Internal("cannot select FoundationDB API version " +
                                 std::to_string(version) + ": " + Describe(api, e));
      return failure_;
    }
    api.api_version = version;
    return Status::Ok();
  }

  Status RunNetwork(const Api& api) {
    const std::string knob = "key_size_limit=" + std::to_string(kMaxKeyBytes + kMaxPrefixBytes);
    fdb_error_t e =
        api.network_set_option(kNetOptionKnob, reinterpret_cast<const uint8_t*>(knob.data()),
                               static_cast<int>(knob.size()));
    if (e == 0) e = api.setup_network();
    if (e != 0)
      return Error::Internal("cannot set up the FoundationDB network: " + Describe(api, e));
    const Api* running = &api;
    network_ = std::thread([running] {
      SetThreadName("fdb-network");
      if (fdb_error_t err = running->run_network(); err != 0) {
        spdlog::error("fdb: the network thread stopped: {}", Describe(*running, err));
      }
    });
    return Status::Ok();
  }

  std::mutex mu_;
  std::unique_ptr<Api> api_;
  std::string library_;
  Error failure_{ErrorType::kInternalServerError, ""};
  std::thread network_;
};

}  // namespace

int ChooseApiVersion(int max_supported) {
  if (max_supported < kMinApiVersion) return 0;
  return std::min(max_supported, kMaxApiVersion);
}

Result<const Api*> StartClient(const std::string& library) {
  static Client client;  // destroyed at exit, after main's databases
  return client.Start(library);
}

}  // namespace fdyno::kv::fdb
