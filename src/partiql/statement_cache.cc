#include "partiql/statement_cache.h"

#include <utility>

#include "partiql/parser.h"

namespace fdyno::partiql {

Result<std::shared_ptr<const PreparedStatement>> StatementCache::Prepare(std::string_view text) {
  const bool cacheable = text.size() <= kMaxCachedStatementBytes;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(text);
    if (it != entries_.end()) return it->second;
  }
  FDYNO_ASSIGN_OR_RETURN(ast::Statement parsed, partiql::Parse(text));
  auto prepared = std::make_shared<PreparedStatement>();
  prepared->point_read = PointReadTemplateOf(parsed);
  prepared->tree = std::move(parsed);
  std::shared_ptr<const PreparedStatement> tree = std::move(prepared);
  if (cacheable) {
    std::lock_guard<std::mutex> lock(mu_);
    if (entries_.size() >= max_entries_) entries_.clear();
    entries_.emplace(std::string(text), tree);
  }
  return tree;
}

}  // namespace fdyno::partiql
