#include "workers/tables.h"

#include <optional>
#include <utility>

#include "kv/run.h"
#include "kv/tuple.h"
#include "model/item_codec.h"
#include "store/item_cursor.h"
#include "store/layout.h"

namespace fdyno::workers {

Result<std::vector<std::shared_ptr<const store::TableInfo>>> AllTables(kv::Database& db,
                                                                       store::Catalog& catalog) {
  kv::RunOptions options;
  options.read_only = true;
  using Tables = std::vector<std::shared_ptr<const store::TableInfo>>;
  return kv::Run(db, options, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<Tables> {
    Tables out;
    std::optional<store::QualifiedName> after;
    while (true) {
      FDYNO_ASSIGN_OR_RETURN(store::QualifiedNamePage page,
                             catalog.ListAll(tx, after ? &*after : nullptr, 100));
      for (const store::QualifiedName& name : page.names) {
        FDYNO_ASSIGN_OR_RETURN(auto info, catalog.Find(tx, name.scope(), name.name));
        if (info) out.push_back(std::move(info));
      }
      if (!page.more || page.names.empty()) break;
      after = page.names.back();
    }
    return out;
  });
}

Result<ItemPage> VisitItemPage(
    kv::Transaction& tx, const store::TableInfo& table, std::string begin, const PageLimits& limits,
    const std::function<Status(std::string_view item_key, const model::Item& item)>& visit) {
  auto [first, end] = store::layout::Items(table.id).Range();
  ItemPage page;
  page.begin = begin.empty() ? first : std::move(begin);
  store::ItemCursor cursor(page.begin, end);
  kv::RangeOptions ro;
  ro.limit = limits.items * 2;
  ro.snapshot = limits.snapshot;
  uint64_t bytes = 0;
  FDYNO_RETURN_IF_ERROR(
      cursor.Step([&](const std::string& b, const std::string& e) { return tx.GetRange(b, e, ro); },
                  [&](const std::string& key, std::string_view image) -> Result<bool> {
                    if (page.items >= limits.items || bytes >= limits.bytes) return false;
                    FDYNO_ASSIGN_OR_RETURN(model::Item item, model::DecodeStoredItem(image));
                    bytes += image.size();
                    FDYNO_RETURN_IF_ERROR(visit(key, item));
                    ++page.items;
                    return true;
                  }));
  page.last = cursor.done();
  if (!page.last) page.next = cursor.next();
  return page;
}

}  // namespace fdyno::workers
