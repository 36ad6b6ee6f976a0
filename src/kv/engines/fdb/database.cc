// The fdb engine's Database (fdb.h): fdb_database_* and opening a cluster.
#include <spdlog/spdlog.h>

#include <utility>

#include "kv/engines/fdb/client.h"
#include "kv/engines/fdb/errors.h"
#include "kv/engines/fdb/fdb.h"
#include "kv/engines/fdb/prefix.h"
#include "kv/engines/fdb/transaction.h"

namespace fdyno::kv {
namespace fdb {
namespace {

class FdbDatabase : public Database {
 public:
  FdbDatabase(const Api* api, FDBDatabase* db, std::string prefix)
      : api_(api), db_(db), prefix_(std::move(prefix)) {}
  ~FdbDatabase() override { api_->database_destroy(db_); }

  std::unique_ptr<Transaction> CreateTransaction() override {
    FDBTransaction* tr = nullptr;
    std::optional<Error> broken;
    if (fdb_error_t e = api_->database_create_transaction(db_, &tr); e != 0) {
      tr = nullptr;
      broken = FdbError(*api_, e);
    }
    return std::make_unique<FdbTransaction>(api_, tr, prefix_, std::move(broken));
  }

  bool CommitsAsynchronously() const override { return true; }

 private:
  const Api* const api_;
  FDBDatabase* const db_;
  const std::string prefix_;
};

std::string ClusterName(const FdbOptions& options) {
  return options.cluster_file.empty() ? std::string("FoundationDB's default cluster file")
                                      : "cluster file " + options.cluster_file;
}

// Asks for a read version within the connect timeout: the cluster is reachable and serving.
Status Probe(Database& db, const FdbOptions& options) {
  std::unique_ptr<Transaction> tr = db.CreateTransaction();
  tr->SetTimeout(options.connect_timeout);
  Result<int64_t> version = tr->GetReadVersion();
  if (version.ok()) return Status::Ok();
  Error error = std::move(version).error();
  const double seconds = static_cast<double>(options.connect_timeout.count()) / 1000;
  if (error.kv_code == kTransactionTimedOut) {
    error.message = "the FoundationDB cluster (" + ClusterName(options) +
                    ") did not answer within " + std::to_string(seconds) +
                    " s: check that its coordinators are running and reachable, and that the "
                    "database is configured (fdbcli: status)";
  } else {
    error.message =
        "the FoundationDB cluster (" + ClusterName(options) + ") cannot be used: " + error.message;
  }
  return error;
}

}  // namespace
}  // namespace fdb

Result<std::unique_ptr<Database>> OpenFdb(const FdbOptions& options) {
  if (options.prefix.size() > fdb::kMaxPrefixBytes ||
      (!options.prefix.empty() && static_cast<uint8_t>(options.prefix[0]) == 0xff)) {
    return Error::Validation(
        "invalid FoundationDB key prefix '" + fdb::PrintablePrefix(options.prefix) + "': at most " +
        std::to_string(fdb::kMaxPrefixBytes) + " bytes, not starting with \\xff");
  }
  FDYNO_ASSIGN_OR_RETURN(const fdb::Api* api, fdb::StartClient(options.library));
  fdb::FDBDatabase* handle = nullptr;
  const char* path = options.cluster_file.empty() ? nullptr : options.cluster_file.c_str();
  if (fdb::fdb_error_t e = api->create_database(path, &handle); e != 0) {
    Error error = fdb::FdbError(*api, e);
    error.message =
        "cannot open the FoundationDB " + fdb::ClusterName(options) + ": " + error.message;
    return error;
  }
  auto db = std::make_unique<fdb::FdbDatabase>(api, handle, options.prefix);
  FDYNO_RETURN_IF_ERROR(fdb::Probe(*db, options));
  spdlog::info("fdb: connected ({}, key prefix '{}')", fdb::ClusterName(options),
               fdb::PrintablePrefix(options.prefix));
  return std::unique_ptr<Database>(std::move(db));
}

}  // namespace fdyno::kv
