// For the lease tests of the workers: a Database standing for one fdyno process over a shared
// database. It counts the commits of its transactions that carried mutations (the work this
// "process" wrote), and can run a hook before a commit (the process pausing between its reads
// and its commit, e.g. past its lease's expiry), or before a range read (a long scan pausing).
//
// Thread-safety: as the wrapped Database; the hook runs on the committing thread.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "kv/kv.h"

namespace fdyno::workers::testing {

class PausingDatabase : public kv::Database {
 public:
  explicit PausingDatabase(kv::Database* inner) : inner_(inner) {}

  // Runs `hook` once, before the next commit of a transaction with mutations (the nth next).
  void PauseBeforeNextCommit(std::function<void()> hook, int nth = 1) {
    hook_ = std::move(hook);
    hook_countdown_ = nth;
  }
  // Runs `hook` once, before the nth next range read.
  void PauseBeforeRead(std::function<void()> hook, int nth) {
    read_hook_ = std::move(hook);
    read_hook_countdown_ = nth;
  }
  // Commits with mutations that succeeded.
  int commits() const { return commits_.load(); }

  std::unique_ptr<kv::Transaction> CreateTransaction() override {
    return std::make_unique<Tx>(this, inner_->CreateTransaction());
  }
  std::unique_ptr<kv::Transaction> CreateSnapshotTransaction() override {
    std::unique_ptr<kv::Transaction> inner = inner_->CreateSnapshotTransaction();
    if (!inner) return nullptr;
    return std::make_unique<Tx>(this, std::move(inner));
  }

 private:
  class Tx : public kv::Transaction {
   public:
    Tx(PausingDatabase* db, std::unique_ptr<kv::Transaction> inner)
        : db_(db), inner_(std::move(inner)) {}
    Result<int64_t> GetReadVersion() override { return inner_->GetReadVersion(); }
    void SetReadVersion(int64_t v) override { inner_->SetReadVersion(v); }
    Result<std::optional<std::string>> Get(std::string_view key, bool snapshot) override {
      return inner_->Get(key, snapshot);
    }
    Result<kv::RangeResult> GetRange(std::string_view b, std::string_view e,
                                     const kv::RangeOptions& o) override {
      if (db_->read_hook_ && --db_->read_hook_countdown_ == 0) {
        std::exchange(db_->read_hook_, nullptr)();
      }
      return inner_->GetRange(b, e, o);
    }
    void Set(std::string_view k, std::string_view v) override {
      writes_ = true;
      inner_->Set(k, v);
    }
    void Clear(std::string_view k) override {
      writes_ = true;
      inner_->Clear(k);
    }
    void ClearRange(std::string_view b, std::string_view e) override {
      writes_ = true;
      inner_->ClearRange(b, e);
    }
    void AtomicOp(kv::MutationType t, std::string_view k, std::string_view p) override {
      writes_ = true;
      inner_->AtomicOp(t, k, p);
    }
    Status AddConflictRange(std::string_view b, std::string_view e,
                            kv::ConflictRangeType t) override {
      return inner_->AddConflictRange(b, e, t);
    }
    void SetTimeout(std::chrono::milliseconds t) override { inner_->SetTimeout(t); }
    Status Commit() override {
      if (writes_ && db_->hook_ && --db_->hook_countdown_ == 0) {
        std::exchange(db_->hook_, nullptr)();
      }
      Status s = inner_->Commit();
      if (s.ok() && writes_) ++db_->commits_;
      return s;
    }
    Result<int64_t> GetCommittedVersion() override { return inner_->GetCommittedVersion(); }
    Result<std::string> GetVersionstamp() override { return inner_->GetVersionstamp(); }
    void Reset() override {
      writes_ = false;
      inner_->Reset();
    }
    void Cancel() override { inner_->Cancel(); }

   private:
    PausingDatabase* db_;
    std::unique_ptr<kv::Transaction> inner_;
    bool writes_ = false;
  };

  kv::Database* inner_;
  std::function<void()> hook_;
  int hook_countdown_ = 0;
  std::function<void()> read_hook_;
  int read_hook_countdown_ = 0;
  std::atomic<int> commits_{0};
};

}  // namespace fdyno::workers::testing
