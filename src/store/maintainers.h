// The derived data of a table's items, each kind one Maintainer behind one interface, in the
// model of the FoundationDB Record Layer's index maintainers: secondary index entries with the
// item counts of the table and its indexes (store/indexes.h, store/item_counts.h), vector index
// entries (store/vector_index.h), the expiry index (store/ttl.h), stream records
// (store/streams.h), point-in-time history (store/pitr.h) and the clocks and outboxes of global
// tables (store/replication.h). store::Mutation runs every
// maintainer of a change's table in the transaction of the change; item collection sizes, which
// are checked against their limit over all the changes of a transaction together, are
// Mutation's own (store/item_collections.h).
//
// Adding a kind of derived data is adding a Maintainer to Maintainers(): the write path
// (NeedsOldImage, ValidateNewImage, Mutation) then maintains it. A kind that can be added to a
// table that already holds items (secondary and vector indexes, the expiry index of TTL) also
// names the parts being filled (Backfilling) and fills them item by item (Backfill): the one
// backfill worker (workers/backfill.h) pages through the table for every such part alike.
//
// Thread-safety: maintainers are stateless singletons.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "kv/kv.h"
#include "model/attribute_value.h"
#include "store/catalog.h"
#include "store/items.h"
#include "store/replication.h"
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
  const ReplicaStamp* replicated = nullptr;  // set: another replica's change (store/replication.h)
};

class Maintainer;

// The id of the expiry index's backfill part (index ids start at 1).
inline constexpr int64_t kExpiryIndexPart = 0;

// A part of a table's derived data that is filled from the items the table held before it (an
// index being created, the expiry index of TTL being enabled): the backfill worker pages
// through the items under the part's lease, keeps its place at the part's cursor, and
// finishes the part (FinishBackfill) in the transaction of its last page.
struct BackfillPart {
  const Maintainer* maintainer = nullptr;
  int64_t id = 0;          // the index's id, or kExpiryIndexPart
  std::string what;        // for logs: "index <name>", or "TTL"
  std::string done;        // for logs: what finishing makes it ("index ACTIVE", "TTL ENABLED")
  bool counted = false;    // the part's entries are counted (store/item_counts.h)
  std::string lease_key;   // store/leases.h
  std::string cursor_key;  // -> the kv key of the next item to fill from
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

  // The parts of this derived data of `table` waiting to be filled from its items.
  virtual std::vector<BackfillPart> Backfilling(const TableInfo&) const { return {}; }
  // backfill(item): buffers what part `id` of `table` holds for `item`, stored at `key` before
  // the part existed; returns whether the part now has an entry for it (counted parts).
  // REQUIRES: `id` names a part of Backfilling(table).
  virtual bool Backfill(kv::Transaction&, const TableInfo&, int64_t /*id*/,
                        std::string_view /*key*/, const model::Item&) const {
    return false;
  }
  // `table` as it is once part `id` is full (the index ACTIVE, TTL ENABLED).
  // REQUIRES: `id` names a part of Backfilling(table).
  virtual void FinishBackfill(TableInfo&, int64_t /*id*/) const {}
};

// Every part of `table` waiting to be filled, over all maintainers.
std::vector<BackfillPart> BackfillParts(const TableInfo& table);

// The keys of the backfill parts' leases and cursors (docs/format/leases.md): a secondary or
// vector index's, and TTL's (the sweeper of expired items shares TTL's lease).
std::string IndexLeaseKey(int64_t table_id, int64_t index_id);
std::string IndexBackfillCursorKey(int64_t table_id, int64_t index_id);
std::string TtlLeaseKey(int64_t table_id);
std::string TtlBackfillCursorKey(int64_t table_id);

// Every maintainer, in the order Mutation runs them and ValidateNewImage checks them.
const std::vector<const Maintainer*>& Maintainers();

}  // namespace fdyno::store
