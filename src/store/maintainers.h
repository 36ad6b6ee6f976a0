// The derived data of a table's items, each kind one Maintainer behind one interface, in the
// model of the FoundationDB Record Layer's index maintainers: secondary index entries with the
// item counts of the table and its indexes (store/indexes.h, store/item_counts.h), vector index
// entries (store/vector_index.h), the expiry index (store/ttl.h), stream records
// (store/streams.h) and point-in-time history (store/pitr.h). store::Mutation runs every
// maintainer of a change's table in the transaction of the change; item collection sizes, which
// are checked against their limit over all the changes of a transaction together, are
// Mutation's own (store/item_collections.h).
//
// Adding a kind of derived data is adding a Maintainer to Maintainers(): the write path
// (NeedsOldImage, ValidateNewImage, Mutation) then maintains it.
//
// Thread-safety: maintainers are stateless singletons.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "kv/kv.h"
#include "model/attribute_value.h"
#include "store/catalog.h"
#include "store/items.h"
#include "store/streams.h"

namespace fdyno::store {

// One change of one item, as a maintainer sees it.
struct ItemChange {
  const TableInfo& table;
  std::string_view key;                  // the item's storage key
  const std::optional<StoredItem>& old;  // the stored item before the change (nullopt: absent)
  const model::Item* old_item;           // decoded (null: absent)
  const model::Item* new_item;           // null: deleted or absent
  uint16_t order;                        // the change's order in its transaction
  int64_t now_ms;                        // the change's wall time
  ChangeSource source;
};

class Maintainer {
 public:
  virtual ~Maintainer() = default;
  // Whether `table` has this derived data.
  virtual bool Maintains(const TableInfo& table) const = 0;
  // Whether Update needs the old image of an item of `table` decoded (otherwise the stored bytes
  // serve). REQUIRES: Maintains(table).
  virtual bool NeedsOldImage(const TableInfo&) const { return true; }
  // Checks that `next` may be an item of `table` (with `before`, an update's starting item: only
  // what changed). The errors carry their ErrorCause.
  virtual Status Validate(const TableInfo&, const model::Item& /*next*/,
                          const model::Item* /*before*/) const {
    return Status::Ok();
  }
  // Buffers what `change` does to this derived data. REQUIRES: Maintains(change.table), and the
  // old image decoded when NeedsOldImage(change.table) and the item existed.
  virtual Status Update(kv::Transaction& tx, const ItemChange& change) const = 0;
};

// Every maintainer, in the order Mutation runs them and ValidateNewImage checks them.
const std::vector<const Maintainer*>& Maintainers();

}  // namespace fdyno::store
