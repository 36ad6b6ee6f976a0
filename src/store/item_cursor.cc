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

}  // namespace fdyno::store
