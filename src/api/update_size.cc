#include "api/update_size.h"

#include <algorithm>

#include "model/item_size.h"

namespace fdyno::api {

uint64_t UpdateSizeOverhead(const expr::Update& update) {
  uint64_t cost = 3;
  for (const expr::UpdateAction& a : update.actions) {
    switch (a.kind) {
      case expr::UpdateAction::Kind::kSet: {
        bool through_index = false;
        for (const expr::PathElement& e : a.path.elements) through_index |= e.is_index();
        cost += a.set.op != expr::SetValue::Op::kValue ? 69 : through_index ? 20 : 19;
        break;
      }
      case expr::UpdateAction::Kind::kAdd:
        cost += 19;
        break;
      case expr::UpdateAction::Kind::kRemove:
      case expr::UpdateAction::Kind::kDelete:
        cost += 2;
        break;
    }
  }
  return cost;
}

Status CheckUpdateSize(const model::Item& next, const model::KeySchema& schema,
                       const expr::Update* update) {
  FDYNO_RETURN_IF_ERROR(model::CheckUpdatedItemSize(next));
  if (!update) return Status();
  uint64_t key_bytes = 0;
  for (const model::KeyAttribute& k : schema.Attributes()) {
    auto it = next.find(k.name);
    if (it != next.end()) key_bytes += model::AttributeSize(it->first, it->second);
  }
  const uint64_t size = model::ItemSize(next);
  if (size - std::min(size, key_bytes) + UpdateSizeOverhead(*update) > model::kMaxItemSizeBytes) {
    return Error::Validation("Item size to update has exceeded the maximum allowed size")
        .WithCause(ErrorCause::kItemTooLarge);
  }
  return Status();
}

}  // namespace fdyno::api
