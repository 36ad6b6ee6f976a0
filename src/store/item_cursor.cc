#include "store/item_cursor.h"

#include <optional>
#include <utility>

#include "store/items.h"

namespace fdyno::store {

Status ItemCursor::Step(const Read& read, const Visit& visit) {
  ItemAssembler assembler;
  std::string from = next_;
  bool visited = false;
  while (!done_) {
    FDYNO_ASSIGN_OR_RETURN(kv::RangeResult rr, read(from, end_));
    for (const kv::KeyValue& kv : rr.kvs) {
      FDYNO_ASSIGN_OR_RETURN(std::optional<ItemAssembler::Assembled> item, assembler.Add(kv));
      if (!item) continue;
      FDYNO_ASSIGN_OR_RETURN(bool taken, visit(item->key, item->image));
      if (!taken) {
        next_ = std::move(item->key);
        return Status::Ok();
      }
      next_ = ItemRangeEnd(item->key);
      visited = true;
    }
    if (!rr.more) {
      if (assembler.pending()) {
        return Error::Internal("a split item lacks parts").WithCause(ErrorCause::kUnrecoverable);
      }
      done_ = true;
      next_ = end_;
    } else if (rr.kvs.empty()) {
      return Error::Internal("a range read stopped early without reading anything");
    } else if (visited && !assembler.pending()) {
      return Status::Ok();
    } else {
      from = rr.kvs.back().key + std::string(1, '\0');  // the parts of the split item read on
    }
  }
  return Status::Ok();
}

namespace {

// Feeds a part to `assembler`; the assembled item once it completes.
Status Feed(ItemAssembler& assembler, const kv::KeyValue& part,
            std::optional<ItemAssembler::Assembled>& out) {
  FDYNO_ASSIGN_OR_RETURN(out, assembler.Add(part));
  return Status::Ok();
}

}  // namespace

Result<std::string> SplitItems::Assemble(const std::vector<kv::KeyValue>& batch, size_t head,
                                         const Read& read) {
  ItemAssembler assembler;
  std::optional<ItemAssembler::Assembled> item;
  FDYNO_RETURN_IF_ERROR(Feed(assembler, batch[head], item));
  // The parts this batch (and, in reverse, the one before) returned, in key order.
  if (forward_) {
    for (size_t i = head + 1; i < batch.size() && assembler.pending(); ++i) {
      FDYNO_RETURN_IF_ERROR(Feed(assembler, batch[i], item));
    }
  } else {
    size_t i = head;
    while (i > 0 && IsItemPart(batch[i - 1].value) && assembler.pending()) {
      FDYNO_RETURN_IF_ERROR(Feed(assembler, batch[--i], item));
    }
    if (i == 0) {
      for (auto it = carried_.rbegin(); it != carried_.rend() && assembler.pending(); ++it) {
        FDYNO_RETURN_IF_ERROR(Feed(assembler, *it, item));
      }
    }
    carried_.clear();
  }
  if (assembler.pending()) {
    const std::string begin = assembler.next_part_key();
    FDYNO_ASSIGN_OR_RETURN(kv::RangeResult rest, read(begin, ItemRangeEnd(batch[head].key)));
    for (const kv::KeyValue& part : rest.kvs) {
      if (!assembler.pending()) break;
      FDYNO_RETURN_IF_ERROR(Feed(assembler, part, item));
    }
  }
  if (!item) {
    return Error::Internal("a split item lacks parts").WithCause(ErrorCause::kUnrecoverable);
  }
  return std::move(item->image);
}

void SplitItems::EndBatch(const std::vector<kv::KeyValue>& batch) {
  if (forward_) return;
  size_t i = batch.size();
  while (i > 0 && IsItemPart(batch[i - 1].value)) --i;
  // A batch of parts only continues the parts carried from the batch before it.
  if (i > 0) carried_.clear();
  carried_.insert(carried_.end(), batch.begin() + static_cast<std::ptrdiff_t>(i), batch.end());
}

}  // namespace fdyno::store
