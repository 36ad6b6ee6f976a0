#include "workers/snapshot_reader.h"

namespace fdyno::workers {
namespace {

template <typename T>
Result<T> Checked(Result<T> r) {
  if (!r.ok() && r.error().is_kv() && r.error().kv_code == kv::kTransactionTooOld) {
    return Error::Internal("the snapshot's read version aged out")
        .WithCause(ErrorCause::kSnapshotLost);
  }
  return r;
}

}  // namespace

SnapshotReader::SnapshotReader(kv::Database& db)
    : db_(db), snapshot_(db.CreateSnapshotTransaction()) {}

Result<kv::Transaction*> SnapshotReader::At() {
  if (snapshot_) return snapshot_.get();
  pinned_ = db_.CreateTransaction();
  if (version_) {
    pinned_->SetReadVersion(*version_);
  } else {
    FDYNO_ASSIGN_OR_RETURN(int64_t v, Checked(pinned_->GetReadVersion()));
    version_ = v;
  }
  return pinned_.get();
}

Result<kv::RangeResult> SnapshotReader::GetRange(std::string_view begin, std::string_view end,
                                                 int limit, bool reverse) {
  FDYNO_ASSIGN_OR_RETURN(kv::Transaction * tx, At());
  return Checked(tx->GetRange(begin, end, {.limit = limit, .reverse = reverse, .snapshot = true}));
}

Result<std::optional<std::string>> SnapshotReader::Get(std::string_view key) {
  FDYNO_ASSIGN_OR_RETURN(kv::Transaction * tx, At());
  return Checked(tx->Get(key, /*snapshot=*/true));
}

Result<std::shared_ptr<const store::TableInfo>> SnapshotReader::FindTable(store::Catalog& catalog,
                                                                          store::TableScope scope,
                                                                          const std::string& name) {
  if (snapshot_) return catalog.Find(*snapshot_, scope, name);
  version_.reset();  // the snapshot starts here
  FDYNO_ASSIGN_OR_RETURN(kv::Transaction * tx, At());
  return catalog.Find(*tx, scope, name);
}

}  // namespace fdyno::workers
