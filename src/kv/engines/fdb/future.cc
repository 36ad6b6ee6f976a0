#include "kv/engines/fdb/future.h"

#include "kv/engines/fdb/errors.h"

namespace fdyno::kv::fdb {

Future& Future::operator=(Future&& other) noexcept {
  if (this != &other) {
    Reset();
    api_ = other.api_;
    future_ = other.future_;
    other.future_ = nullptr;
  }
  return *this;
}

void Future::Reset() {
  if (future_ != nullptr) api_->future_destroy(future_);
  future_ = nullptr;
}

Status Future::Wait() const {
  fdb_error_t e = api_->future_block_until_ready(future_);
  if (e == 0) e = api_->future_get_error(future_);
  if (e != 0) return FdbError(*api_, e);
  return Status::Ok();
}

Result<int64_t> Future::Int64() const {
  FDYNO_RETURN_IF_ERROR(Wait());
  int64_t out = 0;
  if (fdb_error_t e = api_->future_get_int64(future_, &out); e != 0) return FdbError(*api_, e);
  return out;
}

Result<std::optional<std::string>> Future::Value() const {
  FDYNO_RETURN_IF_ERROR(Wait());
  fdb_bool_t present = 0;
  const uint8_t* value = nullptr;
  int length = 0;
  if (fdb_error_t e = api_->future_get_value(future_, &present, &value, &length); e != 0) {
    return FdbError(*api_, e);
  }
  if (!present) return std::optional<std::string>();
  return std::optional<std::string>(std::string(reinterpret_cast<const char*>(value), length));
}

Result<std::string> Future::Key() const {
  FDYNO_RETURN_IF_ERROR(Wait());
  const uint8_t* key = nullptr;
  int length = 0;
  if (fdb_error_t e = api_->future_get_key(future_, &key, &length); e != 0) {
    return FdbError(*api_, e);
  }
  return std::string(reinterpret_cast<const char*>(key), length);
}

Result<bool> Future::KeyValues(size_t strip, std::vector<KeyValue>* out) const {
  FDYNO_RETURN_IF_ERROR(Wait());
  const FDBKeyValue* kvs = nullptr;
  int count = 0;
  fdb_bool_t more = 0;
  if (fdb_error_t e = api_->future_get_keyvalue_array(future_, &kvs, &count, &more); e != 0) {
    return FdbError(*api_, e);
  }
  for (int i = 0; i < count; ++i) {
    const auto* key = reinterpret_cast<const char*>(kvs[i].key);
    const size_t key_length = static_cast<size_t>(kvs[i].key_length);
    // Every key read lies in a range under the prefix, so it starts with the prefix.
    out->push_back({std::string(key + strip, key_length - strip),
                    std::string(reinterpret_cast<const char*>(kvs[i].value),
                                static_cast<size_t>(kvs[i].value_length))});
  }
  return more != 0;
}

}  // namespace fdyno::kv::fdb
