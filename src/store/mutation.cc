#include "store/mutation.h"

#include <algorithm>
#include <utility>

#include "model/item_codec.h"
#include "model/item_size.h"
#include "model/key_codec.h"
#include "model/stored_json.h"
#include "store/maintainers.h"

namespace fdyno::store {

bool NeedsOldImage(const TableInfo& table) {
  for (const Maintainer* m : Maintainers()) {
    if (m->Maintains(table) && m->NeedsOldImage(table)) return true;
  }
  return false;
}

std::string ItemStorageKey(const TableInfo& table, const model::Item& key) {
  const KeySchema& schema = table.key_schema;
  std::string hash = model::EncodeKeyValue(key.at(schema.hash.name));
  std::optional<std::string> range;
  if (schema.range) range = model::EncodeKeyValue(key.at(schema.range->name));
  return ItemKey(table.id, hash, range ? &*range : nullptr);
}

Result<CurrentItem> ReadCurrent(kv::Transaction& tx, const TableInfo& table, std::string key,
                                bool decode) {
  CurrentItem c;
  c.key = std::move(key);
  FDYNO_ASSIGN_OR_RETURN(c.stored, ReadItem(tx, c.key));
  if (!c.stored) return c;
  if (decode || NeedsOldImage(table)) {
    FDYNO_ASSIGN_OR_RETURN(model::Item image, model::DecodeStoredItem(c.stored->image));
    c.size = model::ItemSize(image);
    c.image = std::move(image);
  } else {
    // Measured from the stored bytes: an unconditional write that returns nothing of the old
    // item, to a table with nothing derived from it, never decodes it.
    FDYNO_ASSIGN_OR_RETURN(c.size, model::StoredItemSize(c.stored->image));
  }
  return c;
}

Status ValidateNewImage(const TableInfo& table, const model::Item& next,
                        const model::Item* before) {
  for (const Maintainer* m : Maintainers()) {
    if (m->Maintains(table)) FDYNO_RETURN_IF_ERROR(m->Validate(table, next, before));
  }
  return Status::Ok();
}

size_t Mutation::Stage(const TableInfo& table, CurrentItem current,
                       std::optional<model::Item> next) {
  changes_.push_back(Change{&table, std::move(current), std::move(next)});
  return changes_.size() - 1;
}

Result<Written> Mutation::Write(kv::Transaction& tx) {
  for (const Change& c : changes_) {
    if (!HasItemCollections(*c.table) || (!c.current.exists() && !c.next)) continue;
    collections_.Record(*c.table, c.current.item(), c.next ? &*c.next : nullptr);
  }
  FDYNO_ASSIGN_OR_RETURN(std::vector<ItemCollectionRef> exceeded,
                         collections_.Apply(tx, options_.item_collection_limit_bytes));
  Written out;
  if (!exceeded.empty()) {
    // The changes that grow one of the collections past the limit.
    for (size_t i = 0; i < changes_.size(); ++i) {
      const Change& c = changes_[i];
      if (!HasItemCollections(*c.table) || !c.next) continue;
      const uint64_t before = c.current.image ? ItemCollectionBytes(*c.table, *c.current.image) : 0;
      const uint64_t after = ItemCollectionBytes(*c.table, *c.next);
      const ItemCollectionRef ref = CollectionOf(*c.table, *c.next);
      if (after > before && std::binary_search(exceeded.begin(), exceeded.end(), ref)) {
        out.collection_limit_exceeded.push_back(i);
      }
    }
    if (out.collection_limit_exceeded.empty()) out.collection_limit_exceeded.push_back(0);
    return out;
  }
  for (size_t i = 0; i < changes_.size(); ++i) {
    FDYNO_RETURN_IF_ERROR(WriteOne(tx, changes_[i], static_cast<uint16_t>(i)));
  }
  return out;
}

Status Mutation::WriteOne(kv::Transaction& tx, const Change& c, uint16_t order) {
  const model::Item* new_item = c.next ? &*c.next : nullptr;
  if (!c.current.exists() && new_item == nullptr) return Status::Ok();  // absent stays absent
  if (new_item != nullptr) {
    WriteItem(tx, c.current.key, model::EncodeStoredItem(*new_item), OldItem::Of(c.current.stored));
  } else {
    DeleteItem(tx, c.current.key, OldItem::Of(c.current.stored));
  }
  // Everything derived from the item changes in the same transaction.
  const ItemChange change{.table = *c.table,
                          .key = c.current.key,
                          .old = c.current.stored,
                          .old_item = c.current.item(),
                          .new_item = new_item,
                          .order = order,
                          .now_ms = options_.now_ms,
                          .source = options_.source,
                          .replicated = options_.replicated ? &*options_.replicated : nullptr};
  for (const Maintainer* m : Maintainers()) {
    if (m->Maintains(*c.table)) FDYNO_RETURN_IF_ERROR(m->Update(tx, change));
  }
  return Status::Ok();
}

Result<uint64_t> Mutation::CollectionSizeAfter(kv::Transaction& tx,
                                               const ItemCollectionRef& ref) const {
  return collections_.SizeAfter(tx, ref);
}

}  // namespace fdyno::store
