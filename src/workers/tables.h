// What background workers share: every table of the catalog as of one snapshot, and the pages
// of a table's base items in bounded transactions.
//
// Thread-safety: functions over a Database or a Transaction used by one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "kv/kv.h"
#include "model/attribute_value.h"
#include "store/catalog.h"

namespace fdyno::workers {

// Every table in the catalog, as of one snapshot.
Result<std::vector<std::shared_ptr<const store::TableInfo>>> AllTables(kv::Database& db,
                                                                       store::Catalog& catalog);

struct PageLimits {
  int items = 200;                   // base items per page transaction
  uint64_t bytes = 2 * 1024 * 1024;  // image bytes per page (well under 10 MB)
  bool snapshot = false;             // snapshot reads: concurrent writes do not conflict
};

struct ItemPage {
  int items = 0;      // items visited
  std::string begin;  // where the page began
  std::string next;   // where the next page begins (empty when `last`)
  bool last = false;  // the page reached the end of the table's items
};

// Reads one page of the base items of `table` from item key `begin` (empty: the first) with
// conflicting reads (unless limits.snapshot), so that a concurrent write of one of them makes
// the page's transaction retry, and calls `visit` with each item's key and image.
Result<ItemPage> VisitItemPage(
    kv::Transaction& tx, const store::TableInfo& table, std::string begin, const PageLimits& limits,
    const std::function<Status(std::string_view item_key, const model::Item& item)>& visit);

}  // namespace fdyno::workers
