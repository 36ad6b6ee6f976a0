// One forward pass over the whole items of a range of item keys, in bounded range reads: an item
// stored whole is taken from the read that found it, a split item is reassembled once from its
// parts (ItemAssembler, store/items.h), and no item is read twice. The reads are the caller's (a
// transaction's reads, conflicting or snapshot, or a snapshot view), so one cursor serves every
// reader of base items in key order: the table workers' pages (index and TTL backfills, restores
// to a point in time), backups and exports.
//
// Query and Scan read item keys in both directions and stream each page straight into the
// response, item by item from their own range reads; SplitItems (below) assembles the split
// items those reads meet, also without reading any part twice.
//
// Thread-safety: a value used by one thread.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "kv/kv.h"

namespace fdyno::store {

class ItemCursor {
 public:
  // One bounded read of [begin, end) in key order (kv::RangeResult::more: it stopped early).
  using Read =
      std::function<Result<kv::RangeResult>(const std::string& begin, const std::string& end)>;
  // One whole item: its item key and image (valid during the call). False: stop before this
  // item; the cursor resumes at it.
  using Visit = std::function<Result<bool>(const std::string& key, std::string_view image)>;

  // A cursor at `begin` (an item key, or the end of one item's range) over [begin, end).
  ItemCursor(std::string begin, std::string end) : next_(std::move(begin)), end_(std::move(end)) {}

  // Reads on through `read` until a read completes at least one item and ends outside a split
  // item, or the range ends, visiting each item completed. A split item whose parts run past the
  // end of the range is InternalServerError with cause kUnrecoverable.
  Status Step(const Read& read, const Visit& visit);

  // Whether the range is exhausted.
  bool done() const { return done_; }
  // Where the next Step begins.
  const std::string& next() const { return next_; }

 private:
  std::string next_;
  std::string end_;
  bool done_ = false;
};

// The split items that a caller's own range reads over item keys (or index entry keys) meet,
// forward or in reverse, each assembled once from the key-values the reads returned: a forward
// read finds an item's parts after its head, a reverse read before it (possibly in the
// previous batch, whose trailing parts EndBatch keeps). Only parts that no batch returned (the
// read stopped inside the item) are read, by one range read of the item's remaining parts.
class SplitItems {
 public:
  explicit SplitItems(bool forward) : forward_(forward) {}

  // The image of the split item whose head is batch[head] (a head WholeImage found split).
  // `read` reads the rest of its parts, [begin, end) in key order.
  using Read =
      std::function<Result<kv::RangeResult>(const std::string& begin, const std::string& end)>;
  Result<std::string> Assemble(const std::vector<kv::KeyValue>& batch, size_t head,
                               const Read& read);
  // After each batch: a reverse batch that ends inside an item keeps its parts for the head
  // the next batch meets.
  void EndBatch(const std::vector<kv::KeyValue>& batch);

 private:
  bool forward_;
  std::vector<kv::KeyValue> carried_;  // reverse: parts read before their head, descending
};

}  // namespace fdyno::store
