// The embedded engine's transactions: buffered writes (point entries, cleared ranges and the
// ordered mutation log the commit replays) merged with RocksDB reads at the transaction's
// snapshot; reads take no engine lock (embedded.cc describes the whole engine).
#include <rocksdb/db.h>

#include "kv/engines/embedded/engine.h"

namespace fdyno::kv::embedded {

// ---------------------------------------------------------------------------------------
// EmbeddedTransaction

EmbeddedTransaction::EmbeddedTransaction(EmbeddedDatabase* db) : db_(db) { start_ns_ = NowNs(); }

EmbeddedTransaction::EmbeddedTransaction(EmbeddedDatabase* db, std::shared_ptr<ReadView> pinned)
    : db_(db), pinned_view_(std::move(pinned)) {
  start_ns_ = NowNs();
}

int64_t EmbeddedTransaction::NowNs() const { return db_->NowNs(); }

Status EmbeddedTransaction::CheckUsable(int64_t now_ns) const {
  if (cancelled_.load(std::memory_order_relaxed)) return KvErr(kTransactionCancelled);
  if (timeout_.count() > 0 &&
      now_ns - start_ns_ >=
          std::chrono::duration_cast<std::chrono::nanoseconds>(timeout_).count()) {
    return KvErr(kTransactionTimedOut);
  }
  return Status::Ok();
}

Status EmbeddedTransaction::EnsureView(int64_t now_ns) {
  if (!view_) {
    if (pinned_view_) {
      view_ = pinned_view_;
      read_time_ns_ = -1;  // never too old
    } else if (pinned_version_) {
      FDYNO_ASSIGN_OR_RETURN(view_, db_->ViewAt(*pinned_version_, now_ns, &read_time_ns_));
    } else {
      view_ = db_->CurrentView();
      read_time_ns_ = now_ns;
    }
  }
  // RocksDB is being reopened (EmbeddedDatabase::ReopenAfterFailedWrite): the view is gone or
  // of the retired RocksDB, which must be let go; a retry reads the reopened one.
  if (!view_ || view_->rocks->retired.load(std::memory_order_relaxed)) {
    return KvErr(kTransactionTooOld, "RocksDB is being reopened after a failed write");
  }
  if (read_time_ns_ >= 0 && now_ns - read_time_ns_ > kMaxAgeNs) {
    return KvErr(kTransactionTooOld);
  }
  return Status::Ok();
}

const std::pair<const std::string, std::string>* EmbeddedTransaction::ClearedContaining(
    std::string_view key) const {
  auto it = cleared_.upper_bound(key);
  if (it == cleared_.begin()) return nullptr;
  --it;
  return key < std::string_view(it->second) ? &*it : nullptr;
}

bool EmbeddedTransaction::InCleared(std::string_view key) const {
  return ClearedContaining(key) != nullptr;
}

void EmbeddedTransaction::AddCleared(std::string_view begin, std::string_view end) {
  std::string b(begin), e(end);
  auto it = cleared_.upper_bound(begin);
  if (it != cleared_.begin()) {
    auto prev = std::prev(it);
    if (std::string_view(prev->second) >= begin) {  // overlaps or touches: merge
      b = prev->first;
      if (prev->second > e) e = prev->second;
      it = cleared_.erase(prev);
    }
  }
  while (it != cleared_.end() && std::string_view(it->first) <= std::string_view(e)) {
    if (it->second > e) e = it->second;
    it = cleared_.erase(it);
  }
  cleared_.emplace(std::move(b), std::move(e));
}

EmbeddedTransaction::Entry& EmbeddedTransaction::EntryFor(std::string_view key) {
  auto it = writes_.find(key);
  if (it != writes_.end()) return it->second;
  return writes_.emplace(std::string(key), Entry{}).first->second;
}

Result<int64_t> EmbeddedTransaction::GetReadVersion() {
  int64_t now = NowNs();
  FDYNO_RETURN_IF_ERROR(CheckUsable(now));
  FDYNO_RETURN_IF_ERROR(EnsureView(now));
  return view_->version;
}

Result<std::optional<std::string>> EmbeddedTransaction::Get(std::string_view key, bool snapshot) {
  int64_t now = NowNs();
  FDYNO_RETURN_IF_ERROR(CheckUsable(now));
  const Entry* entry = nullptr;
  auto it = writes_.find(key);
  if (it != writes_.end()) {
    entry = &it->second;
    if (entry->unreadable) return KvErr(kAccessedUnreadable);
    if (entry->known) return entry->value;  // fully determined by our own writes
  } else if (InCleared(key)) {
    return std::optional<std::string>();
  }
  FDYNO_RETURN_IF_ERROR(EnsureView(now));
  std::optional<std::string> base;
  if (std::optional<std::optional<std::string>> memory = db_->MemoryRead(key, view_->version)) {
    base = std::move(*memory);
  } else {
    rocksdb::ReadOptions ro;
    ro.snapshot = view_->snapshot;
    rocksdb::PinnableSlice slice;
    rocksdb::Status s = view_->rocks->db->Get(ro, view_->rocks->data(),
                                              rocksdb::Slice(key.data(), key.size()), &slice);
    if (s.ok()) {
      base.emplace(slice.data(), slice.size());
    } else if (!s.IsNotFound()) {
      return IoErr("read failed", s);
    }
  }
  if (!snapshot) {
    read_points_.emplace_back(key);
    bytes_ += 2 * key.size() + 1;
  }
  if (entry != nullptr) return Resolve(*entry, base);
  return base;
}

Result<RangeResult> EmbeddedTransaction::GetRange(std::string_view begin, std::string_view end,
                                                  const RangeOptions& options) {
  int64_t now = NowNs();
  FDYNO_RETURN_IF_ERROR(CheckUsable(now));
  RangeResult out;
  if (!(begin < end)) return out;
  FDYNO_RETURN_IF_ERROR(EnsureView(now));

  rocksdb::ReadOptions ro;
  ro.snapshot = view_->snapshot;
  rocksdb::Slice lower(begin.data(), begin.size());
  rocksdb::Slice upper(end.data(), end.size());
  ro.iterate_lower_bound = &lower;
  ro.iterate_upper_bound = &upper;
  std::unique_ptr<rocksdb::Iterator> iter(view_->rocks->db->NewIterator(ro, view_->rocks->data()));
  const bool reverse = options.reverse;

  // Forward: writes_ from lower_bound(begin); reverse: from the last entry below end.
  auto fwd = writes_.lower_bound(begin);
  auto rev = std::make_reverse_iterator(writes_.lower_bound(end));
  if (reverse) {
    iter->SeekToLast();
  } else {
    iter->Seek(lower);
  }

  auto skip_cleared = [&] {
    while (iter->Valid()) {
      rocksdb::Slice k = iter->key();
      const auto* c = ClearedContaining(std::string_view(k.data(), k.size()));
      if (c == nullptr) return;
      if (reverse) {
        iter->SeekForPrev(c->first);
        if (iter->Valid() && iter->key().compare(c->first) >= 0) iter->Prev();
      } else {
        iter->Seek(c->second);
      }
    }
  };
  auto write_valid = [&] {
    return reverse ? (rev != writes_.rend() && std::string_view(rev->first) >= begin)
                   : (fwd != writes_.end() && std::string_view(fwd->first) < end);
  };
  Status error = Status::Ok();
  // The next key-value of the merged view in iteration order, or nullopt at the end.
  auto next = [&]() -> std::optional<KeyValue> {
    for (;;) {
      skip_cleared();
      bool db_ok = iter->Valid();
      bool w_ok = write_valid();
      if (!db_ok && !w_ok) return std::nullopt;
      int cmp = 0;  // < 0: the RocksDB key comes first in iteration order
      if (db_ok && w_ok) {
        const std::string& wkey = reverse ? rev->first : fwd->first;
        cmp = iter->key().compare(rocksdb::Slice(wkey));
        if (reverse) cmp = -cmp;
      } else {
        cmp = db_ok ? -1 : 1;
      }
      if (cmp < 0) {
        KeyValue kv{iter->key().ToString(), iter->value().ToString()};
        if (reverse)
          iter->Prev();
        else
          iter->Next();
        return kv;
      }
      const std::pair<const std::string, Entry>& w = reverse ? *rev : *fwd;
      std::optional<std::string> base;
      if (cmp == 0) {
        base = iter->value().ToString();
        if (reverse)
          iter->Prev();
        else
          iter->Next();
      }
      if (reverse)
        ++rev;
      else
        ++fwd;
      if (w.second.unreadable) {
        error = KvErr(kAccessedUnreadable);
        return std::nullopt;
      }
      std::optional<std::string> v = Resolve(w.second, base);
      if (v) return KeyValue{w.first, std::move(*v)};
    }
  };

  const size_t limit = options.limit > 0 ? static_cast<size_t>(options.limit) : 0;
  while (limit == 0 || out.kvs.size() < limit) {
    std::optional<KeyValue> kv = next();
    if (!kv) break;
    out.kvs.push_back(std::move(*kv));
  }
  if (!error.ok()) return std::move(error).error();
  if (limit != 0 && out.kvs.size() == limit) {
    // Peek one step further for `more`; an unreadable key there still counts as more.
    out.more = next().has_value() || !error.ok();
  }
  if (!iter->status().ok()) return IoErr("range read failed", iter->status());

  if (!options.snapshot) {
    KeyRange r;
    if (out.more && reverse) {
      r = {out.kvs.back().key, std::string(end)};
    } else if (out.more) {
      r = {std::string(begin), KeyAfter(out.kvs.back().key)};
    } else {
      r = {std::string(begin), std::string(end)};
    }
    bytes_ += r.begin.size() + r.end.size();
    read_ranges_.push_back(std::move(r));
  }
  return out;
}

void EmbeddedTransaction::Set(std::string_view key, std::string_view value) {
  if (RefuseWrite()) return;
  CheckKey(key.size());
  CheckValue(value.size());
  Entry& e = EntryFor(key);
  e = Entry{true, false, std::string(value), {}};
  mutations_.push_back({Op::kSet, std::string(key), std::string(value)});
  write_points_.emplace_back(key);
  bytes_ += 3 * key.size() + 1 + value.size();
}

void EmbeddedTransaction::Clear(std::string_view key) {
  if (RefuseWrite()) return;
  CheckKey(key.size());
  Entry& e = EntryFor(key);
  e = Entry{true, false, std::nullopt, {}};
  mutations_.push_back({Op::kClear, std::string(key), {}});
  write_points_.emplace_back(key);
  bytes_ += 3 * key.size() + 1;
}

void EmbeddedTransaction::ClearRange(std::string_view begin, std::string_view end) {
  if (RefuseWrite()) return;
  if (begin > end) {
    Defer(KvErr(kInvertedRange));
    return;
  }
  // An end key may be one byte longer than the longest key (a key's successor).
  CheckKey(begin.size());
  if (end.size() > kMaxKeyBytes + 1) Defer(KvErr(kKeyTooLarge));
  if (begin == end) return;
  writes_.erase(writes_.lower_bound(begin), writes_.lower_bound(end));
  AddCleared(begin, end);
  mutations_.push_back({Op::kClearRange, std::string(begin), std::string(end)});
  write_ranges_.push_back({std::string(begin), std::string(end)});
  bytes_ += 2 * (begin.size() + end.size());
}

void EmbeddedTransaction::AtomicOp(MutationType type, std::string_view key,
                                   std::string_view param) {
  if (RefuseWrite()) return;
  switch (type) {
    case MutationType::kAdd: {
      CheckKey(key.size());
      CheckValue(param.size());
      bool fresh = writes_.find(key) == writes_.end();
      bool cleared = fresh && InCleared(key);
      Entry& e = EntryFor(key);
      // A key we never wrote adds to the snapshot value, unless our own clear hides it.
      if (fresh) e.known = cleared;
      if (e.known) {
        e.value = ApplyAdd(e.value, param);
      } else {
        e.adds.emplace_back(param);
      }
      mutations_.push_back({Op::kAdd, std::string(key), std::string(param)});
      write_points_.emplace_back(key);
      bytes_ += 3 * key.size() + 1 + param.size();
      return;
    }
    case MutationType::kSetVersionstampedKey: {
      if (!VersionstampOffset(key)) {
        Defer(KvErr(kClientInvalidOperation, "invalid versionstamp offset in key"));
        return;
      }
      CheckKey(key.size() - 4);
      CheckValue(param.size());
      mutations_.push_back({Op::kVersionstampedKey, std::string(key), std::string(param)});
      bytes_ += 3 * key.size() + 1 + param.size();
      return;
    }
    case MutationType::kSetVersionstampedValue: {
      if (!VersionstampOffset(param)) {
        Defer(KvErr(kClientInvalidOperation, "invalid versionstamp offset in value"));
        return;
      }
      CheckKey(key.size());
      CheckValue(param.size() - 4);
      Entry& e = EntryFor(key);
      e = Entry{true, true, std::nullopt, {}};
      mutations_.push_back({Op::kVersionstampedValue, std::string(key), std::string(param)});
      write_points_.emplace_back(key);
      bytes_ += 3 * key.size() + 1 + param.size();
      return;
    }
  }
  Defer(KvErr(kInvalidMutationType));
}

Status EmbeddedTransaction::AddConflictRange(std::string_view begin, std::string_view end,
                                             ConflictRangeType type) {
  FDYNO_RETURN_IF_ERROR(CheckUsable(NowNs()));
  if (type == ConflictRangeType::kWrite && RefuseWrite()) return Status::Ok();
  if (begin > end) return KvErr(kInvertedRange);
  if (begin == end) return Status::Ok();
  KeyRange r{std::string(begin), std::string(end)};
  bytes_ += begin.size() + end.size();
  if (type == ConflictRangeType::kRead) {
    read_ranges_.push_back(std::move(r));
  } else {
    write_ranges_.push_back(std::move(r));
  }
  return Status::Ok();
}

std::optional<Status> EmbeddedTransaction::PrepareCommit(CommitRequest* r) {
  int64_t now = NowNs();
  if (Status usable = CheckUsable(now); !usable.ok()) return usable;
  if (committed_ || async_request_) {
    return KvErr(kUsedDuringCommit, "transaction already committed");
  }
  if (deferred_error_) return Status(*deferred_error_);
  if (bytes_ > kMaxTransactionBytes) return KvErr(kTransactionTooLarge);
  if (mutations_.empty() && write_points_.empty() && write_ranges_.empty()) {
    committed_ = true;
    committed_version_ = -1;
    return Status::Ok();
  }
  bool has_reads = !read_points_.empty() || !read_ranges_.empty();
  if (has_reads && !view_) {
    if (Status view = EnsureView(now); !view.ok()) return view;
  }
  r->mutations = &mutations_;
  r->read_points = &read_points_;
  r->read_ranges = &read_ranges_;
  r->write_points = &write_points_;
  r->write_ranges = &write_ranges_;
  r->read_version = view_ ? view_->version : -1;
  r->read_time_ns = read_time_ns_;
  r->bytes = bytes_;
  r->cancelled = &cancelled_;
  if (db_->memory_limited()) {
    for (const Mutation& m : mutations_) {
      if (m.op == Op::kClear || m.op == Op::kClearRange) {
        r->frees = true;
      } else {
        r->growth_bytes += m.a.size() + m.b.size() + kEntryOverheadBytes;
      }
    }
  }
  return std::nullopt;
}

Status EmbeddedTransaction::FinishCommit(CommitRequest* r) {
  if (!r->status.ok()) return std::move(r->status).error();
  committed_ = true;
  committed_version_ = r->version;
  versionstamp_ = MakeVersionstamp(r->version, r->batch_order);
  return Status::Ok();
}

Status EmbeddedTransaction::Commit() {
  CommitRequest r;
  if (std::optional<Status> early = PrepareCommit(&r)) return std::move(*early);
  db_->Commit(&r);
  return FinishCommit(&r);
}

void EmbeddedTransaction::CommitAsync(std::function<void(Status)> done) {
  auto r = std::make_unique<CommitRequest>();
  if (std::optional<Status> early = PrepareCommit(r.get())) return done(std::move(*early));
  r->complete = [this, done = std::move(done)] {
    std::unique_ptr<CommitRequest> finished = std::move(async_request_);
    Status status = FinishCommit(finished.get());
    finished.reset();
    done(std::move(status));  // last: done may destroy this transaction
  };
  async_request_ = std::move(r);
  db_->Commit(async_request_.get());
}

Result<int64_t> EmbeddedTransaction::GetCommittedVersion() {
  if (!committed_) return KvErr(kNoCommitVersion, "transaction has not committed");
  return committed_version_;
}

Result<std::string> EmbeddedTransaction::GetVersionstamp() {
  if (!committed_ || committed_version_ < 0) {
    return KvErr(kNoCommitVersion, "no versionstamp: the transaction committed no mutation");
  }
  return versionstamp_;
}

void EmbeddedTransaction::Reset() {
  cancelled_.store(false, std::memory_order_relaxed);
  start_ns_ = NowNs();
  view_.reset();
  read_time_ns_ = 0;
  pinned_version_.reset();
  writes_.clear();
  cleared_.clear();
  mutations_.clear();
  read_points_.clear();
  read_ranges_.clear();
  write_points_.clear();
  write_ranges_.clear();
  bytes_ = 0;
  deferred_error_.reset();
  committed_ = false;
  committed_version_ = -1;
  versionstamp_.clear();
}

}  // namespace fdyno::kv::embedded
