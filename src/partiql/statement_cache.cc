#include "partiql/statement_cache.h"

#include <utility>

#include "partiql/parser.h"

namespace fdyno::partiql {

Result<std::shared_ptr<const ast::Statement>> StatementCache::Parse(std::string_view text) {
  const bool cacheable = text.size() <= kMaxCachedStatementBytes;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(text);
    if (it != entries_.end()) return it->second;
  }
  FDYNO_ASSIGN_OR_RETURN(ast::Statement parsed, partiql::Parse(text));
  auto tree = std::make_shared<const ast::Statement>(std::move(parsed));
  if (cacheable) {
    std::lock_guard<std::mutex> lock(mu_);
    if (entries_.size() >= max_entries_) entries_.clear();
    entries_.emplace(std::string(text), tree);
  }
  return tree;
}

}  // namespace fdyno::partiql
