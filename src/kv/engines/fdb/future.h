// An fdb_c future owned by one object: destroyed (fdb_future_destroy, which also cancels an
// operation still outstanding) exactly once, when the Future is destroyed or reset. The typed
// getters block until the future is ready (never on the network thread: fdb_c refuses) and
// turn its error into the kv error (errors.h).
//
// Thread-safety: a Future is used by one thread at a time.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "kv/engines/fdb/fdb_c_api.h"
#include "kv/kv.h"

namespace fdyno::kv::fdb {

class Future {
 public:
  Future() = default;
  // Takes ownership of `future` (may be null: an empty Future).
  Future(const Api* api, FDBFuture* future) : api_(api), future_(future) {}
  Future(Future&& other) noexcept : api_(other.api_), future_(other.future_) {
    other.future_ = nullptr;
  }
  Future& operator=(Future&& other) noexcept;
  Future(const Future&) = delete;
  Future& operator=(const Future&) = delete;
  ~Future() { Reset(); }

  explicit operator bool() const { return future_ != nullptr; }
  FDBFuture* get() const { return future_; }
  void Reset();

  // REQUIRES: non-empty. Blocks until ready; its error, or ok.
  Status Wait() const;
  // REQUIRES: non-empty. Each blocks until ready, then reads the future's value.
  Result<int64_t> Int64() const;
  Result<std::optional<std::string>> Value() const;
  Result<std::string> Key() const;
  // Appends the key-values (with `strip` bytes removed from the front of each key) to *out;
  // whether the range holds more past them.
  Result<bool> KeyValues(size_t strip, std::vector<KeyValue>* out) const;

 private:
  const Api* api_ = nullptr;
  FDBFuture* future_ = nullptr;
};

}  // namespace fdyno::kv::fdb
