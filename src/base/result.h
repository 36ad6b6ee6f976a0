// Result<T>: a value or an fdyno::Error. Errors a client or the engine can cause travel as
// values; programmer errors are assertions. A Result must be checked before its value is read.
#pragma once

#include <cassert>
#include <optional>
#include <utility>
#include <variant>

#include "base/error.h"

namespace fdyno {

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  // REQUIRES: ok().
  T& value() & { assert(ok()); return std::get<0>(v_); }
  const T& value() const& { assert(ok()); return std::get<0>(v_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  // REQUIRES: !ok().
  const Error& error() const& { assert(!ok()); return std::get<1>(v_); }
  Error&& error() && { assert(!ok()); return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, Error> v_;
};

// Result<void>: success or an Error.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)) {}  // NOLINT
  static Result Ok() { return Result(); }

  bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Error& error() const& { assert(!ok()); return *error_; }
  Error&& error() && { assert(!ok()); return std::move(*error_); }

 private:
  std::optional<Error> error_;
};

using Status = Result<void>;

}  // namespace fdyno

#define FDYNO_CONCAT_INNER(a, b) a##b
#define FDYNO_CONCAT(a, b) FDYNO_CONCAT_INNER(a, b)

// FDYNO_RETURN_IF_ERROR(expr): returns the error of a Result/Status expression.
#define FDYNO_RETURN_IF_ERROR(expr)                          \
  do {                                                       \
    auto&& fdyno_status_ = (expr);                           \
    if (!fdyno_status_.ok()) return std::move(fdyno_status_).error(); \
  } while (0)

// FDYNO_ASSIGN_OR_RETURN(lhs, expr): evaluates a Result<T>; on error returns it, else assigns.
#define FDYNO_ASSIGN_OR_RETURN(lhs, expr) \
  FDYNO_ASSIGN_OR_RETURN_IMPL(FDYNO_CONCAT(fdyno_result_, __LINE__), lhs, expr)
#define FDYNO_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                \
  if (!tmp.ok()) return std::move(tmp).error();     \
  lhs = std::move(tmp).value()
