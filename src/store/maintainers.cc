#include "store/maintainers.h"

#include <algorithm>

#include "kv/tuple.h"
#include "store/indexes.h"
#include "store/item_counts.h"
#include "store/layout.h"
#include "store/leases.h"
#include "store/pitr.h"
#include "store/replication.h"
#include "store/ttl.h"
#include "store/vector_index.h"

namespace fdyno::store {
namespace {

template <typename Index>
bool NeedsBackfill(const Index& index) {
  return index.status == IndexStatus::kCreating && index.backfilling;
}

// The backfill parts of the indexes of `list` (of `table`) being created.
template <typename List>
std::vector<BackfillPart> IndexParts(const Maintainer* m, const TableInfo& table,
                                     const List& list) {
  std::vector<BackfillPart> parts;
  for (const auto& index : list) {
    if (!NeedsBackfill(index)) continue;
    parts.push_back({m, index.id, "index " + index.name, "index ACTIVE", true,
                     IndexLeaseKey(table.id, index.id),
                     IndexBackfillCursorKey(table.id, index.id)});
  }
  return parts;
}

// The index of `list` with id `id`. REQUIRES: one has it.
template <typename List>
auto& WithId(List& list, int64_t id) {
  return *std::find_if(list.begin(), list.end(), [id](const auto& i) { return i.id == id; });
}

template <typename Index>
void Activate(Index& index) {
  index.status = IndexStatus::kActive;
  index.backfilling = false;
}

// Secondary index entries, and the item counts of the table and its indexes: every table has
// an item count, so every table is maintained. Without indexes, the count needs only whether
// the item existed.
class SecondaryIndexes final : public Maintainer {
 public:
  bool Maintains(const TableInfo&) const override { return true; }
  bool NeedsOldImage(const TableInfo& table) const override {
    return !table.local_indexes.empty() || !table.global_indexes.empty();
  }
  Status Validate(const TableInfo& table, const model::Item& next,
                  const model::Item* before) const override {
    return ValidateIndexKeys(table, next, before);
  }
  Status Update(kv::Transaction& tx, const ItemChange& c) const override {
    if (c.old && c.old_item == nullptr) {
      AddItemCount(tx, c.table.id, kTableCountId, c.new_item != nullptr ? 0 : -1);
    } else {
      UpdateIndexes(tx, c.table, c.old_item, c.new_item);
    }
    return Status::Ok();
  }
  // Only global indexes are added to a table that holds items.
  std::vector<BackfillPart> Backfilling(const TableInfo& table) const override {
    return IndexParts(this, table, table.global_indexes);
  }
  bool Backfill(kv::Transaction& tx, const TableInfo& table, int64_t id, std::string_view,
                const model::Item& item) const override {
    const SecondaryIndex& index = WithId(table.global_indexes, id);
    UpdateIndex(tx, table, index, nullptr, &item);
    return HasIndexEntry(index, item);
  }
  void FinishBackfill(TableInfo& table, int64_t id) const override {
    Activate(WithId(table.global_indexes, id));
  }
};

class VectorIndexes final : public Maintainer {
 public:
  bool Maintains(const TableInfo& table) const override { return !table.vector_indexes.empty(); }
  Status Validate(const TableInfo& table, const model::Item& next,
                  const model::Item* before) const override {
    return ValidateVectorAttributes(table, next, before);
  }
  Status Update(kv::Transaction& tx, const ItemChange& c) const override {
    UpdateVectorIndexes(tx, c.table, c.key, c.old_item, c.new_item);
    return Status::Ok();
  }
  std::vector<BackfillPart> Backfilling(const TableInfo& table) const override {
    return IndexParts(this, table, table.vector_indexes);
  }
  bool Backfill(kv::Transaction& tx, const TableInfo& table, int64_t id, std::string_view key,
                const model::Item& item) const override {
    const VectorIndex& index = WithId(table.vector_indexes, id);
    UpdateVectorIndex(tx, table, index, key, nullptr, &item);
    return HasVectorEntry(index, item);
  }
  void FinishBackfill(TableInfo& table, int64_t id) const override {
    Activate(WithId(table.vector_indexes, id));
  }
};

class ExpiryIndex final : public Maintainer {
 public:
  bool Maintains(const TableInfo& table) const override { return TtlIsMaintained(table); }
  Status Update(kv::Transaction& tx, const ItemChange& c) const override {
    UpdateExpiryIndex(tx, c.table, c.key, c.old_item, c.new_item);
    return Status::Ok();
  }
  // ENABLING: item writes maintain the index from the enabling commit on; the items that
  // existed are filled in before TTL is ENABLED (and expired items hidden and swept).
  std::vector<BackfillPart> Backfilling(const TableInfo& table) const override {
    if (table.ttl.status != TtlStatus::kEnabling) return {};
    return {{this, kExpiryIndexPart, "TTL", "TTL ENABLED", false, TtlLeaseKey(table.id),
             TtlBackfillCursorKey(table.id)}};
  }
  bool Backfill(kv::Transaction& tx, const TableInfo& table, int64_t, std::string_view key,
                const model::Item& item) const override {
    if (std::optional<int64_t> expiry = ExpirySeconds(table.ttl, item)) {
      tx.Set(ExpiryKey(table.id, *expiry, key), "");
    }
    return false;
  }
  void FinishBackfill(TableInfo& table, int64_t) const override {
    table.ttl.status = TtlStatus::kEnabled;
  }
};

// A change record when the item's state changed, in the commit's versionstamp order.
class StreamRecords final : public Maintainer {
 public:
  bool Maintains(const TableInfo& table) const override {
    return table.stream.enabled && table.stream.stream_id != 0;
  }
  Status Update(kv::Transaction& tx, const ItemChange& c) const override {
    if (!StateChanged(c.old_item, c.new_item)) return Status::Ok();
    ChangeRecord record = MakeChangeRecord(c.table.stream.view_type, c.table.key_schema, c.old_item,
                                           c.new_item, c.source, c.now_ms);
    return WriteChangeRecord(tx, c.table, record, c.order);
  }
};

// What undoes the change, for a restore to a time before it: the stored bytes serve.
class PointInTimeHistory final : public Maintainer {
 public:
  bool Maintains(const TableInfo& table) const override { return table.pitr.enabled; }
  bool NeedsOldImage(const TableInfo&) const override { return false; }
  Status Update(kv::Transaction& tx, const ItemChange& c) const override {
    return WriteUndoRecord(tx, c.table, c.key, c.old, c.now_ms, c.order);
  }
};

}  // namespace

const std::vector<const Maintainer*>& Maintainers() {
  static const SecondaryIndexes secondary;
  static const VectorIndexes vectors;
  static const ExpiryIndex expiry;
  static const StreamRecords streams;
  static const PointInTimeHistory history;
  static const std::vector<const Maintainer*> all = {
      &secondary, &vectors, &expiry, &streams, &history, &ReplicationMaintainer()};
  return all;
}

std::vector<BackfillPart> BackfillParts(const TableInfo& table) {
  std::vector<BackfillPart> parts;
  for (const Maintainer* m : Maintainers()) {
    for (BackfillPart& part : m->Backfilling(table)) parts.push_back(std::move(part));
  }
  return parts;
}

std::string IndexLeaseKey(int64_t table_id, int64_t index_id) {
  return LeaseKey(kv::Tuple{"index", table_id, index_id});
}

std::string IndexBackfillCursorKey(int64_t table_id, int64_t index_id) {
  return layout::Leases().Pack(
      kv::Tuple().AddString("index_backfill").AddInt(table_id).AddInt(index_id));
}

std::string TtlLeaseKey(int64_t table_id) { return LeaseKey(kv::Tuple{"ttl", table_id}); }

std::string TtlBackfillCursorKey(int64_t table_id) {
  return layout::Leases().Pack(kv::Tuple().AddString("ttl_backfill").AddInt(table_id));
}

}  // namespace fdyno::store
