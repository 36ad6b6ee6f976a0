// A bounded cache of prepared statements, keyed by their text.
//
// Applications send the same statements again and again with other Parameters, so
// ExecuteStatement looks the syntax tree (and, for a point read, its PointReadTemplate) up
// instead of parsing the text each time (lexing, parsing, binding and planning cost about as
// much as the point read that follows). Only statements that parse, and
// of at most kMaxCachedStatementBytes, are kept; when the cache holds max_entries statements it
// starts over empty, so its memory is bounded by max_entries small syntax trees.
//
// Thread-safe: one mutex around a hash lookup; the trees are immutable and shared.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/result.h"
#include "partiql/ast.h"
#include "partiql/point_read.h"

namespace fdyno::partiql {

inline constexpr size_t kMaxCachedStatementBytes = 1024;

struct PreparedStatement {
  ast::Statement tree;
  std::optional<PointReadTemplate> point_read;  // when the statement is a point read
};

class StatementCache {
 public:
  explicit StatementCache(size_t max_entries = 256) : max_entries_(max_entries) {}

  // `text` parsed (parser.h's Parse) and prepared, from the cache when it was before.
  Result<std::shared_ptr<const PreparedStatement>> Prepare(std::string_view text);

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };

  const size_t max_entries_;
  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const PreparedStatement>, Hash, std::equal_to<>>
      entries_;
};

}  // namespace fdyno::partiql
