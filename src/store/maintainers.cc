#include "store/maintainers.h"

#include "store/indexes.h"
#include "store/item_counts.h"
#include "store/pitr.h"
#include "store/ttl.h"
#include "store/vector_index.h"

namespace fdyno::store {
namespace {

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
};

class ExpiryIndex final : public Maintainer {
 public:
  bool Maintains(const TableInfo& table) const override { return TtlIsMaintained(table); }
  Status Update(kv::Transaction& tx, const ItemChange& c) const override {
    UpdateExpiryIndex(tx, c.table, c.key, c.old_item, c.new_item);
    return Status::Ok();
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
  static const std::vector<const Maintainer*> all = {&secondary, &vectors, &expiry, &streams,
                                                     &history};
  return all;
}

}  // namespace fdyno::store
