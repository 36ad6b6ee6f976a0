// The kv contract's Transaction on one fdb_c transaction (see fdb.h for the engine).
//
// Mapping, call for call: reads and mutations go to fdb_transaction_* with every key moved
// under the database's prefix (prefix.h); read-your-writes, snapshot isolation, conflict
// detection, timeouts (the TIMEOUT option, re-applied after Reset, which in fdb_c clears
// options), cancellation and FoundationDB's limits on values and transaction size are
// FoundationDB's own. What this adds:
// * keys over the contract's 10,000 bytes are refused here (2102 at Commit), because the client
//   allows kMaxPrefixBytes more for the prefix;
// * a range read asks for one row past its limit, with a snapshot read, to tell exactly whether
//   the range holds more (fdb_c's `more` may be true when the limit is met exactly), then adds
//   the read conflict range the contract states: the whole range, or up to and including the
//   last row returned when limited;
// * the versionstamp future is taken before the commit (fdb_c only offers it then), so that
//   GetVersionstamp can answer after it;
// * a malformed versionstamp offset in a key is refused (2000 at Commit) before the offset is
//   moved by the prefix's length.
// CommitAsync runs `done` on fdb_c's network thread (or inline when the commit is known at
// once).
//
// Thread-safety: one thread at a time, as the contract says.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "kv/engines/fdb/fdb_c_api.h"
#include "kv/engines/fdb/future.h"
#include "kv/kv.h"

namespace fdyno::kv::fdb {

class FdbTransaction : public Transaction {
 public:
  // `prefix` must outlive the transaction (it is the Database's). When `tr` is null (fdb_c
  // could not create one), every operation fails with `broken`.
  FdbTransaction(const Api* api, FDBTransaction* tr, std::string_view prefix,
                 std::optional<Error> broken);
  ~FdbTransaction() override;

  Result<int64_t> GetReadVersion() override;
  void SetReadVersion(int64_t version) override;
  Result<std::optional<std::string>> Get(std::string_view key, bool snapshot) override;
  Result<RangeResult> GetRange(std::string_view begin, std::string_view end,
                               const RangeOptions& options) override;
  void Set(std::string_view key, std::string_view value) override;
  void Clear(std::string_view key) override;
  void ClearRange(std::string_view begin, std::string_view end) override;
  void AtomicOp(MutationType type, std::string_view key, std::string_view param) override;
  Status AddConflictRange(std::string_view begin, std::string_view end,
                          ConflictRangeType type) override;
  void SetTimeout(std::chrono::milliseconds timeout) override;
  Status Commit() override;
  void CommitAsync(std::function<void(Status)> done) override;
  Result<int64_t> GetCommittedVersion() override;
  Result<std::string> GetVersionstamp() override;
  void Reset() override;
  void Cancel() override;

 private:
  static void OnCommitReady(FDBFuture* future, void* self);

  std::string Key(std::string_view key) const;
  Future Wrap(FDBFuture* future) const { return Future(api_, future); }
  // Records the first error a mutation causes, reported by Commit.
  void Defer(Error error);
  // Whether a key of `size` bytes is within the contract's limit (else deferred 2102).
  bool KeyFits(size_t size);
  void ApplyTimeout();
  // Reads rows of the prefixed range [begin, end) into *out until `want` (0: all) are read.
  Status ReadRange(std::string begin, std::string end, size_t want, bool reverse, RangeResult* out);
  Status AddConflictRangePrefixed(std::string_view begin, std::string_view end, int type);
  Status AddReadConflict(std::string_view begin, std::string_view end, const RangeOptions& options,
                         const RangeResult& result);
  // Before a commit: the answer when it cannot go to FoundationDB; takes the versionstamp.
  std::optional<Status> BeforeCommit();
  Status AfterCommit(Status commit);

  const Api* const api_;
  FDBTransaction* const tr_;
  const std::string_view prefix_;
  const std::optional<Error> broken_;
  std::chrono::milliseconds timeout_{0};
  std::optional<Error> deferred_;
  bool writes_ = false;  // a mutation or a write conflict range: the commit gets a version
  bool cancelled_ = false;
  bool committing_ = false;
  bool committed_ = false;
  int64_t committed_version_ = -1;
  Future versionstamp_future_;
  std::optional<std::string> versionstamp_;
  Future commit_future_;
  std::function<void(Status)> done_;
};

}  // namespace fdyno::kv::fdb
