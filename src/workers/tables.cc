#include "workers/tables.h"

#include <optional>
#include <utility>

#include "kv/run.h"
#include "kv/tuple.h"
#include "model/item_codec.h"
#include "store/items.h"
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
        FDYNO_ASSIGN_OR_RETURN(auto info, catalog.Find(tx, name.account, name.name));
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
  const kv::Subspace items = store::layout::Items(table.id);
  auto [first, end] = items.Range();
  ItemPage page;
  page.begin = begin.empty() ? first : std::move(begin);
  const size_t head_arity = table.key_schema.range ? 3 : 2;
  kv::RangeOptions ro;
  ro.limit = limits.items * 2;
  ro.snapshot = limits.snapshot;
  FDYNO_ASSIGN_OR_RETURN(kv::RangeResult rr, tx.GetRange(page.begin, end, ro));
  uint64_t bytes = 0;
  bool stopped = false;
  for (const kv::KeyValue& kv : rr.kvs) {
    FDYNO_ASSIGN_OR_RETURN(kv::Tuple t, items.Unpack(kv.key));
    if (t.size() != head_arity) continue;  // a part of a split item, read with its head
    if (page.items >= limits.items || bytes >= limits.bytes) {
      page.next = kv.key;
      stopped = true;
      break;
    }
    FDYNO_ASSIGN_OR_RETURN(std::optional<store::StoredItem> stored,
                           store::ReadItem(tx, kv.key, limits.snapshot));
    if (!stored) continue;
    FDYNO_ASSIGN_OR_RETURN(model::Item item, model::DecodeStoredItem(stored->image));
    bytes += stored->image.size();
    FDYNO_RETURN_IF_ERROR(visit(kv.key, item));
    ++page.items;
    page.next = store::ItemRangeEnd(kv.key);
  }
  page.last = !stopped && !rr.more;
  if (page.last) {
    page.next.clear();
  } else if (page.next.empty() && !rr.kvs.empty()) {
    page.next = rr.kvs.back().key + '\x00';
  }
  return page;
}

}  // namespace fdyno::workers
