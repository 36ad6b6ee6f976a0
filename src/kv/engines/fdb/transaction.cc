#include "kv/engines/fdb/transaction.h"

#include <algorithm>
#include <climits>
#include <utility>

#include "kv/engines/fdb/errors.h"
#include "kv/engines/fdb/prefix.h"

namespace fdyno::kv::fdb {
namespace {

const uint8_t* Bytes(std::string_view s) { return reinterpret_cast<const uint8_t*>(s.data()); }
int Length(std::string_view s) { return static_cast<int>(s.size()); }

Error KvErr(int code, const std::string& detail) {
  return Error::Kv(code, std::string(ErrorName(code)) + ": " + detail);
}

// The fdb_c mutation type for the contract's (the same numbers, checked at compile time).
static_assert(static_cast<int>(MutationType::kAdd) == 2);
static_assert(static_cast<int>(MutationType::kSetVersionstampedKey) == 14);
static_assert(static_cast<int>(MutationType::kSetVersionstampedValue) == 15);

}  // namespace

FdbTransaction::FdbTransaction(const Api* api, FDBTransaction* tr, std::string_view prefix,
                               std::optional<Error> broken)
    : api_(api), tr_(tr), prefix_(prefix), broken_(std::move(broken)) {}

FdbTransaction::~FdbTransaction() {
  // Futures first: they belong to the transaction.
  versionstamp_future_.Reset();
  commit_future_.Reset();
  if (tr_ != nullptr) api_->transaction_destroy(tr_);
}

std::string FdbTransaction::Key(std::string_view key) const { return WithPrefix(prefix_, key); }

void FdbTransaction::Defer(Error error) {
  if (!deferred_) deferred_ = std::move(error);
}

bool FdbTransaction::KeyFits(size_t size) {
  if (size <= kMaxKeyBytes) return true;
  Defer(KvErr(kKeyTooLarge, std::to_string(size) + " bytes"));
  return false;
}

Result<int64_t> FdbTransaction::GetReadVersion() {
  if (broken_) return *broken_;
  return Wrap(api_->transaction_get_read_version(tr_)).Int64();
}

void FdbTransaction::SetReadVersion(int64_t version) {
  if (tr_ != nullptr) api_->transaction_set_read_version(tr_, version);
}

Result<std::optional<std::string>> FdbTransaction::Get(std::string_view key, bool snapshot) {
  if (broken_) return *broken_;
  const std::string k = Key(key);
  return Wrap(api_->transaction_get(tr_, Bytes(k), Length(k), snapshot ? 1 : 0)).Value();
}

Status FdbTransaction::ReadRange(std::string begin, std::string end, size_t want, bool reverse,
                                 RangeResult* out) {
  // Snapshot reads: the caller adds the read conflict range the contract asks for.
  for (int iteration = 1;; ++iteration) {
    const size_t had = out->kvs.size();
    const int limit = want == 0 ? 0 : static_cast<int>(std::min<size_t>(want - had, INT_MAX));
    const int mode = want == 0 ? kStreamingWantAll : kStreamingExact;
    // Key selectors firstGreaterOrEqual(begin) and firstGreaterOrEqual(end).
    Future rows = Wrap(api_->transaction_get_range(tr_, Bytes(begin), Length(begin), 0, 1,
                                                   Bytes(end), Length(end), 0, 1, limit, 0, mode,
                                                   iteration, 1, reverse ? 1 : 0));
    FDYNO_ASSIGN_OR_RETURN(bool more, rows.KeyValues(prefix_.size(), &out->kvs));
    if (!more || (want != 0 && out->kvs.size() >= want)) return Status::Ok();
    if (out->kvs.size() == had) {  // no row to go on after: fail rather than return too few
      return KvErr(kInternalError, "FoundationDB reported more rows in a range but sent none");
    }
    // Go on after the last row: below it when reverse, past it otherwise.
    const std::string last = Key(out->kvs.back().key);
    if (reverse) {
      end = last;
    } else {
      begin = last + '\0';
    }
  }
}

Status FdbTransaction::AddReadConflict(std::string_view begin, std::string_view end,
                                       const RangeOptions& options, const RangeResult& result) {
  std::string lo = Key(begin), hi = Key(end);
  if (result.more && options.reverse) lo = Key(result.kvs.back().key);
  if (result.more && !options.reverse) hi = Key(result.kvs.back().key) + '\0';
  return AddConflictRangePrefixed(lo, hi, kConflictRead);
}

Result<RangeResult> FdbTransaction::GetRange(std::string_view begin, std::string_view end,
                                             const RangeOptions& options) {
  if (broken_) return *broken_;
  RangeResult out;
  if (!(begin < end)) return out;
  const size_t limit = options.limit > 0 ? static_cast<size_t>(options.limit) : 0;  // 0: all
  // One row past the limit tells whether the range holds more.
  FDYNO_RETURN_IF_ERROR(
      ReadRange(Key(begin), Key(end), limit == 0 ? 0 : limit + 1, options.reverse, &out));
  if (limit != 0 && out.kvs.size() > limit) {
    out.kvs.resize(limit);
    out.more = true;
  }
  if (!options.snapshot) FDYNO_RETURN_IF_ERROR(AddReadConflict(begin, end, options, out));
  return out;
}

void FdbTransaction::Set(std::string_view key, std::string_view value) {
  if (tr_ == nullptr || !KeyFits(key.size())) return;
  writes_ = true;
  const std::string k = Key(key);
  api_->transaction_set(tr_, Bytes(k), Length(k), Bytes(value), Length(value));
}

void FdbTransaction::Clear(std::string_view key) {
  if (tr_ == nullptr || !KeyFits(key.size())) return;
  writes_ = true;
  const std::string k = Key(key);
  api_->transaction_clear(tr_, Bytes(k), Length(k));
}

void FdbTransaction::ClearRange(std::string_view begin, std::string_view end) {
  // An end key may be one byte longer than the longest key (a key's successor).
  if (tr_ == nullptr || !KeyFits(begin.size()) || !KeyFits(end.size() > 0 ? end.size() - 1 : 0)) {
    return;
  }
  if (begin == end) return;
  writes_ = true;
  const std::string b = Key(begin), e = Key(end);  // fdb_c defers inverted_range itself
  api_->transaction_clear_range(tr_, Bytes(b), Length(b), Bytes(e), Length(e));
}

void FdbTransaction::AtomicOp(MutationType type, std::string_view key, std::string_view param) {
  if (tr_ == nullptr) return;
  std::string k;
  switch (type) {
    case MutationType::kAdd:
    case MutationType::kSetVersionstampedValue:
      if (!KeyFits(key.size())) return;
      k = Key(key);
      break;
    case MutationType::kSetVersionstampedKey: {
      std::optional<std::string> moved = WithPrefixVersionstamped(prefix_, key);
      if (!moved)
        return Defer(KvErr(kClientInvalidOperation, "invalid versionstamp offset in key"));
      if (!KeyFits(key.size() - 4)) return;
      k = std::move(*moved);
      break;
    }
    default:
      return Defer(KvErr(kInvalidMutationType, std::to_string(static_cast<int>(type))));
  }
  writes_ = true;
  api_->transaction_atomic_op(tr_, Bytes(k), Length(k), Bytes(param), Length(param),
                              static_cast<int>(type));
}

Status FdbTransaction::AddConflictRangePrefixed(std::string_view begin, std::string_view end,
                                                int type) {
  fdb_error_t e = api_->transaction_add_conflict_range(tr_, Bytes(begin), Length(begin), Bytes(end),
                                                       Length(end), type);
  if (e != 0) return FdbError(*api_, e);
  return Status::Ok();
}

Status FdbTransaction::AddConflictRange(std::string_view begin, std::string_view end,
                                        ConflictRangeType type) {
  if (broken_) return *broken_;
  const bool write = type == ConflictRangeType::kWrite;
  FDYNO_RETURN_IF_ERROR(
      AddConflictRangePrefixed(Key(begin), Key(end), write ? kConflictWrite : kConflictRead));
  if (write && begin < end) writes_ = true;
  return Status::Ok();
}

void FdbTransaction::ApplyTimeout() {
  if (tr_ == nullptr) return;
  // fdb_c takes milliseconds in [0, INT_MAX] as an 8-byte little-endian integer.
  const int64_t ms = std::clamp<int64_t>(timeout_.count(), 0, INT_MAX);
  uint8_t value[8];
  for (int i = 0; i < 8; ++i)
    value[i] = static_cast<uint8_t>((static_cast<uint64_t>(ms) >> (8 * i)) & 0xff);
  // Cannot fail for a value in range.
  (void)api_->transaction_set_option(tr_, kTrOptionTimeout, value, sizeof(value));
}

void FdbTransaction::SetTimeout(std::chrono::milliseconds timeout) {
  timeout_ = timeout;
  ApplyTimeout();
}

std::optional<Status> FdbTransaction::BeforeCommit() {
  if (broken_) return Status(*broken_);
  if (cancelled_) return Status(KvErr(kTransactionCancelled, "the transaction was cancelled"));
  if (committed_ || committing_) {
    return Status(KvErr(kUsedDuringCommit, "transaction already committed"));
  }
  if (deferred_) return Status(*deferred_);
  // fdb_c answers the versionstamp only to a future taken before the commit.
  if (writes_) versionstamp_future_ = Wrap(api_->transaction_get_versionstamp(tr_));
  return std::nullopt;
}

Status FdbTransaction::AfterCommit(Status commit) {
  if (!commit.ok()) return commit;
  committed_ = true;
  if (fdb_error_t e = api_->transaction_get_committed_version(tr_, &committed_version_); e != 0) {
    committed_version_ = -1;
  }
  return Status::Ok();
}

Status FdbTransaction::Commit() {
  if (std::optional<Status> early = BeforeCommit()) return std::move(*early);
  committing_ = true;
  Status commit = Wrap(api_->transaction_commit(tr_)).Wait();
  committing_ = false;
  return AfterCommit(std::move(commit));
}

void FdbTransaction::OnCommitReady(FDBFuture* future, void* param) {
  auto* self = static_cast<FdbTransaction*>(param);
  const fdb_error_t e = self->api_->future_get_error(future);
  Status status = self->AfterCommit(e == 0 ? Status::Ok() : Status(FdbError(*self->api_, e)));
  self->committing_ = false;
  std::function<void(Status)> done = std::move(self->done_);
  done(std::move(status));  // last: done may destroy the transaction
}

void FdbTransaction::CommitAsync(std::function<void(Status)> done) {
  if (std::optional<Status> early = BeforeCommit()) return done(std::move(*early));
  committing_ = true;
  done_ = std::move(done);
  commit_future_ = Wrap(api_->transaction_commit(tr_));
  // fdb_c runs the callback on its network thread, or here if the commit is already decided.
  if (fdb_error_t e = api_->future_set_callback(commit_future_.get(), &OnCommitReady, this);
      e != 0) {
    committing_ = false;
    std::function<void(Status)> failed = std::move(done_);
    failed(FdbError(*api_, e));
  }
}

Result<int64_t> FdbTransaction::GetCommittedVersion() {
  if (!committed_) return KvErr(kNoCommitVersion, "transaction has not committed");
  return committed_version_;
}

Result<std::string> FdbTransaction::GetVersionstamp() {
  if (!committed_ || committed_version_ < 0 || !versionstamp_future_) {
    return KvErr(kNoCommitVersion, "no versionstamp: the transaction committed no mutation");
  }
  if (!versionstamp_) {
    FDYNO_ASSIGN_OR_RETURN(std::string stamp, versionstamp_future_.Key());
    versionstamp_ = std::move(stamp);
  }
  return *versionstamp_;
}

void FdbTransaction::Reset() {
  versionstamp_future_.Reset();
  commit_future_.Reset();
  if (tr_ != nullptr) api_->transaction_reset(tr_);
  if (timeout_.count() != 0) ApplyTimeout();  // fdb_c's reset clears options
  deferred_.reset();
  writes_ = false;
  cancelled_ = false;
  committing_ = false;
  committed_ = false;
  committed_version_ = -1;
  versionstamp_.reset();
  done_ = nullptr;
}

void FdbTransaction::Cancel() {
  cancelled_ = true;
  if (tr_ != nullptr) api_->transaction_cancel(tr_);
}

}  // namespace fdyno::kv::fdb
