// For the tests of dropped tables' purge (workers/purge.h, Catalog::PurgeDropped): what a
// dropped table has left in the database. A failed read fails the test, and reads as "data left",
// so that it never passes for a finished purge.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "kv/kv.h"
#include "kv/run.h"
#include "store/catalog.h"
#include "store/layout.h"

namespace fdyno::workers::testing {

// Keys stored under table id `id`: items, counts, everything the purge removes.
inline size_t TableKeys(kv::Database& db, int64_t id) {
  auto r = kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<size_t> {
    auto [b, e] = store::layout::Table(id).Range();
    FDYNO_ASSIGN_OR_RETURN(kv::RangeResult rr, tx.GetRange(b, e));
    return rr.kvs.size();
  });
  if (r.ok()) return *r;
  ADD_FAILURE() << "reading table " << id << "'s keys: " << r.error().message;
  return std::numeric_limits<size_t>::max();
}

// Whether table `id`'s pending-purge marker is still there.
inline bool PurgePending(kv::Database& db, int64_t id) {
  auto r = kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) {
    return tx.Get(store::Catalog::PendingPurgeKey(id));
  });
  if (r.ok()) return r->has_value();
  ADD_FAILURE() << "reading table " << id << "'s purge marker: " << r.error().message;
  return true;
}

}  // namespace fdyno::workers::testing
