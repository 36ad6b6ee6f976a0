// Global tables (version 2019.11.21): the replicas of a table are tables of the same account and
// name in other regions, and every write to one reaches the others, asynchronously, exactly
// once, and by DynamoDB's conflict rule: the last writer wins (docs/format/replication.md).
//
// * The replica set is on the record of every replica (TableInfo::replicas), changed in one
//   transaction across them (UpdateReplicaGroup).
// * Every item of a replicated table has a clock, (3, table_id, 12, key...): the stamp of its
//   last write (a time in microseconds and the region that wrote it), kept after a delete as a
//   tombstone so that an older write arriving later loses to the delete. Stamps order by time,
//   then region name; a local write's time is after its item's previous stamp (a hybrid clock),
//   so one replica's writes of one item are ordered whatever the wall clock does.
// * A local write (the replication maintainer, run by store::Mutation in the write's
//   transaction) puts the change in the table's outbox for each other replica,
//   (3, table_id, 13, region, time, key...): the new image or a delete, with its stamp.
// * The replication worker (workers/replication.h) takes outbox entries into the replica, each
//   page in one transaction that applies them (ApplyReplicated) and clears them: a change
//   reaches each replica once. A change whose stamp is not after the target item's clock is
//   dropped (the loser's change is not applied). A replicated write is an ordinary write of the
//   target table (its indexes, stream and history are maintained), which sets the item's clock
//   to the change's stamp and puts nothing in the target's outbox.
//
// Thread-safety: free functions on a caller's transaction.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "kv/kv.h"
#include "model/attribute_value.h"
#include "store/catalog.h"

namespace fdyno::store {

class Maintainer;

// When and where an item was last written. Later wins; at the same time, the greater region.
struct ReplicaStamp {
  int64_t time_us = 0;
  std::string region = {};
  auto operator<=>(const ReplicaStamp&) const = default;
};

// An item's clock: its last write's stamp, and whether that write deleted it.
struct ReplicaClock {
  ReplicaStamp stamp;
  bool deleted = false;
};

// The item key of `item_key` (store::ItemKey) without its table's prefix: what names the item
// in every replica.
std::string_view ItemKeySuffix(int64_t table_id, std::string_view item_key);

Result<std::optional<ReplicaClock>> ReadReplicaClock(kv::Transaction& tx, int64_t table_id,
                                                     std::string_view suffix);
void WriteReplicaClock(kv::Transaction& tx, int64_t table_id, std::string_view suffix,
                       const ReplicaClock& clock);

// A page of table `table_id`'s clocks from kv key `begin` (empty: the first) in key order, at
// most `limit`; `next`: where the next page begins (empty when `last`).
struct ClockPage {
  std::vector<std::pair<std::string, ReplicaClock>> clocks;  // (item key suffix, clock)
  std::string next;
  bool last = false;
};
Result<ClockPage> ReadClockPage(kv::Transaction& tx, int64_t table_id, std::string begin,
                                int limit);

// One change waiting in table `table_id`'s outbox for one replica.
struct OutboxEntry {
  std::string kv_key = {};  // where it is stored
  std::string suffix = {};  // the item (ItemKeySuffix)
  int64_t time_us = 0;      // its stamp's time (its region: the outbox's table's)
  std::optional<std::string> image = std::nullopt;  // the new image's bytes; nullopt: a delete
};

// Every key of table `table_id`'s outbox for its replica in `region`.
kv::Subspace Outbox(int64_t table_id, std::string_view region);
// Buffers a change for the replica in `region`.
void PutOutboxEntry(kv::Transaction& tx, int64_t table_id, std::string_view region,
                    const OutboxEntry& entry);
// The oldest entries of the outbox (at most `limit`), those whose time is at most `up_to_us`;
// `more`: others follow (due or not). Each entry returned is a conflicting read; entries added
// meanwhile are not. Corrupt entries are InternalServerError.
struct OutboxPage {
  std::vector<OutboxEntry> entries;
  bool more = false;
};
Result<OutboxPage> ReadOutbox(kv::Transaction& tx, int64_t table_id, std::string_view region,
                              int64_t up_to_us, int limit);

// Applies a change made by another replica to `target` in tx when its stamp is after the
// target item's clock: the new image (nullopt: a delete) through store::Mutation, the clock set
// to `stamp`. Returns whether it was applied (false: the item's last write wins, or the change
// would take an item collection past its limit). `now_ms`: the change records' time.
Result<bool> ApplyReplicated(kv::Transaction& tx, const TableInfo& target, std::string_view suffix,
                             const ReplicaStamp& stamp, const std::optional<model::Item>& image,
                             int64_t now_ms);

// Applies `change` to the record of every replica of the global table `any` is one of (the
// records as of tx; `any` itself included), then writes them. A replica whose record is gone
// is skipped.
Status UpdateReplicaGroup(kv::Transaction& tx, Catalog& catalog, const TableInfo& any,
                          const std::function<void(TableInfo&)>& change);

// Removes `table` from its global table in tx: every other replica's record loses it (a record
// left alone is a regional table's again: no replicas), and their outboxes for its region are
// cleared. The caller drops `table`.
Status LeaveReplicaGroup(kv::Transaction& tx, Catalog& catalog, const TableInfo& table);

// A table UPDATING while a replica was created or deleted is ACTIVE again once none is.
void SettleReplicaStatus(TableInfo& table);

// The maintainer of clocks and outboxes (store/maintainers.h), for tables with replicas.
const Maintainer& ReplicationMaintainer();

}  // namespace fdyno::store
