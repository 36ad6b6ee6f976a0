#include "store/replication.h"

#include <algorithm>
#include <utility>

#include "kv/tuple.h"
#include "model/item_codec.h"
#include "store/layout.h"
#include "store/maintainers.h"
#include "store/mutation.h"
#include "store/record_codec.h"

namespace fdyno::store {
namespace {

// Stored forms (docs/format/replication.md). Persisted: never renumber.
constexpr uint8_t kClockVersion = 1;
constexpr uint8_t kOutboxVersion = 1;
constexpr uint8_t kPut = 1;
constexpr uint8_t kDelete = 0;

void AppendInt64(std::string& out, int64_t v) {
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff));
}

// Reads 8 little-endian bytes at `at`, advancing it. REQUIRES: they are there.
int64_t ReadInt64(std::string_view bytes, size_t& at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i)
    v |= static_cast<uint64_t>(static_cast<uint8_t>(bytes[at + i])) << (8 * i);
  at += 8;
  return static_cast<int64_t>(v);
}

std::string ClockKey(int64_t table_id, std::string_view suffix) {
  std::string key = layout::TablePartPrefix(table_id, layout::TablePart::kReplicaClock);
  key.append(suffix);
  return key;
}

// [version][deleted][time_us: 8 LE][region]
std::string EncodeClock(const ReplicaClock& c) {
  std::string out(1, static_cast<char>(kClockVersion));
  out.push_back(c.deleted ? 1 : 0);
  AppendInt64(out, c.stamp.time_us);
  out.append(c.stamp.region);
  return out;
}

Result<ReplicaClock> DecodeClock(std::string_view bytes) {
  if (bytes.size() < 10 || static_cast<uint8_t>(bytes[0]) != kClockVersion ||
      static_cast<uint8_t>(bytes[1]) > 1) {
    return CorruptRecord("replica clock");
  }
  ReplicaClock c;
  c.deleted = bytes[1] == 1;
  size_t at = 2;
  c.stamp.time_us = ReadInt64(bytes, at);
  c.stamp.region = std::string(bytes.substr(at));
  return c;
}

// [version][kind][time_us: 8 LE][suffix length: 8 LE][suffix][image when kPut]
std::string EncodeOutboxValue(const OutboxEntry& e) {
  std::string out(1, static_cast<char>(kOutboxVersion));
  out.push_back(static_cast<char>(e.image ? kPut : kDelete));
  AppendInt64(out, e.time_us);
  AppendInt64(out, static_cast<int64_t>(e.suffix.size()));
  out.append(e.suffix);
  if (e.image) out.append(*e.image);
  return out;
}

Result<OutboxEntry> DecodeOutboxEntry(std::string key, std::string_view bytes) {
  const auto corrupt = [] { return CorruptRecord("replication outbox entry"); };
  if (bytes.size() < 18 || static_cast<uint8_t>(bytes[0]) != kOutboxVersion) return corrupt();
  const uint8_t kind = static_cast<uint8_t>(bytes[1]);
  if (kind != kPut && kind != kDelete) return corrupt();
  OutboxEntry e;
  e.kv_key = std::move(key);
  size_t at = 2;
  e.time_us = ReadInt64(bytes, at);
  const int64_t length = ReadInt64(bytes, at);
  if (length < 0 || static_cast<uint64_t>(length) > bytes.size() - at) return corrupt();
  e.suffix = std::string(bytes.substr(at, static_cast<size_t>(length)));
  at += static_cast<size_t>(length);
  if (kind == kPut) {
    e.image = std::string(bytes.substr(at));
  } else if (at != bytes.size()) {
    return corrupt();
  }
  return e;
}

std::string OutboxKey(int64_t table_id, std::string_view region, int64_t time_us,
                      std::string_view suffix) {
  std::string key = Outbox(table_id, region).key();
  kv::AppendPackedInt(&key, time_us);
  key.append(suffix);
  return key;
}

// Clocks and outboxes: a local write stamps its item after the item's previous stamp and puts
// the change in the outbox of every other replica still in the group; a replicated write takes
// the change's stamp and goes nowhere.
class ReplicationMaintainerImpl final : public Maintainer {
 public:
  bool Maintains(const TableInfo& table) const override { return !table.replicas.empty(); }
  bool NeedsOldImage(const TableInfo&) const override { return false; }
  Status Update(kv::Transaction& tx, const ItemChange& c) const override {
    const std::string_view suffix = ItemKeySuffix(c.table.id, c.key);
    ReplicaClock clock;
    clock.deleted = c.new_item == nullptr;
    if (c.replicated != nullptr) {
      clock.stamp = *c.replicated;
      WriteReplicaClock(tx, c.table.id, suffix, clock);
      return Status::Ok();
    }
    FDYNO_ASSIGN_OR_RETURN(std::optional<ReplicaClock> before,
                           ReadReplicaClock(tx, c.table.id, suffix));
    clock.stamp = {std::max(c.now_ms * 1000, before ? before->stamp.time_us + 1 : 0),
                   c.table.region};
    WriteReplicaClock(tx, c.table.id, suffix, clock);
    OutboxEntry entry{.kv_key = {},
                      .suffix = std::string(suffix),
                      .time_us = clock.stamp.time_us,
                      .image = std::nullopt};
    if (c.new_item != nullptr) entry.image = model::EncodeStoredItem(*c.new_item);
    for (const Replica& r : c.table.replicas) {
      if (r.region == c.table.region || r.status == ReplicaStatus::kDeleting) continue;
      PutOutboxEntry(tx, c.table.id, r.region, entry);
    }
    return Status::Ok();
  }
};

}  // namespace

std::string_view ItemKeySuffix(int64_t table_id, std::string_view item_key) {
  const std::string prefix = layout::TablePartPrefix(table_id, layout::TablePart::kItems);
  return item_key.substr(std::min(prefix.size(), item_key.size()));
}

Result<std::optional<ReplicaClock>> ReadReplicaClock(kv::Transaction& tx, int64_t table_id,
                                                     std::string_view suffix) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> bytes, tx.Get(ClockKey(table_id, suffix)));
  if (!bytes) return std::optional<ReplicaClock>();
  FDYNO_ASSIGN_OR_RETURN(ReplicaClock clock, DecodeClock(*bytes));
  return std::optional<ReplicaClock>(std::move(clock));
}

void WriteReplicaClock(kv::Transaction& tx, int64_t table_id, std::string_view suffix,
                       const ReplicaClock& clock) {
  tx.Set(ClockKey(table_id, suffix), EncodeClock(clock));
}

Result<ClockPage> ReadClockPage(kv::Transaction& tx, int64_t table_id, std::string begin,
                                int limit) {
  const std::string prefix = ClockKey(table_id, "");
  if (begin.empty()) begin = prefix;
  kv::RangeOptions ro;
  ro.limit = limit;
  FDYNO_ASSIGN_OR_RETURN(kv::RangeResult rr, tx.GetRange(begin, kv::PrefixEnd(prefix), ro));
  ClockPage page;
  for (const kv::KeyValue& kv : rr.kvs) {
    FDYNO_ASSIGN_OR_RETURN(ReplicaClock clock, DecodeClock(kv.value));
    page.clocks.emplace_back(kv.key.substr(prefix.size()), std::move(clock));
  }
  page.last = !rr.more;
  if (rr.more) page.next = rr.kvs.back().key + '\x00';
  return page;
}

kv::Subspace Outbox(int64_t table_id, std::string_view region) {
  return kv::Subspace(kv::Tuple{static_cast<int64_t>(layout::Root::kTables), table_id,
                                static_cast<int64_t>(layout::TablePart::kReplicationOutbox),
                                std::string(region)});
}

void PutOutboxEntry(kv::Transaction& tx, int64_t table_id, std::string_view region,
                    const OutboxEntry& entry) {
  tx.Set(OutboxKey(table_id, region, entry.time_us, entry.suffix), EncodeOutboxValue(entry));
}

Result<OutboxPage> ReadOutbox(kv::Transaction& tx, int64_t table_id, std::string_view region,
                              int64_t up_to_us, int limit) {
  const auto [begin, end] = Outbox(table_id, region).Range();
  // A snapshot read, with a read conflict on each entry taken: writers adding entries meanwhile
  // do not make the page retry, a deliverer clearing the same entries does.
  kv::RangeOptions ro;
  ro.limit = limit;
  ro.snapshot = true;
  FDYNO_ASSIGN_OR_RETURN(kv::RangeResult rr, tx.GetRange(begin, end, ro));
  OutboxPage page;
  page.more = rr.more;
  for (kv::KeyValue& kv : rr.kvs) {
    FDYNO_ASSIGN_OR_RETURN(OutboxEntry e, DecodeOutboxEntry(std::move(kv.key), kv.value));
    if (e.time_us > up_to_us) {
      page.more = true;
      break;
    }
    FDYNO_RETURN_IF_ERROR(
        tx.AddConflictRange(e.kv_key, e.kv_key + '\x00', kv::ConflictRangeType::kRead));
    page.entries.push_back(std::move(e));
  }
  return page;
}

Result<bool> ApplyReplicated(kv::Transaction& tx, const TableInfo& target, std::string_view suffix,
                             const ReplicaStamp& stamp, const std::optional<model::Item>& image,
                             int64_t now_ms) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<ReplicaClock> clock,
                         ReadReplicaClock(tx, target.id, suffix));
  if (clock && !(clock->stamp < stamp)) return false;  // the item's last write wins
  std::string key = layout::TablePartPrefix(target.id, layout::TablePart::kItems);
  key.append(suffix);
  FDYNO_ASSIGN_OR_RETURN(CurrentItem current, ReadCurrent(tx, target, std::move(key), false));
  if (!current.exists() && !image) {
    // Nothing to delete; the tombstone still makes older writes of the item lose.
    WriteReplicaClock(tx, target.id, suffix, {stamp, true});
    return true;
  }
  Mutation mutation({.now_ms = now_ms, .replicated = stamp});
  mutation.Stage(target, std::move(current), image);
  FDYNO_ASSIGN_OR_RETURN(Written written, mutation.Write(tx));
  return written.ok();
}

Status UpdateReplicaGroup(kv::Transaction& tx, Catalog& catalog, const TableInfo& any,
                          const std::function<void(TableInfo&)>& change) {
  for (const Replica& r : any.replicas) {
    FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const TableInfo> found,
                           catalog.Find(tx, {any.account, r.region}, any.name));
    if (!found || found->id != r.table_id) continue;
    TableInfo updated = *found;
    change(updated);
    FDYNO_RETURN_IF_ERROR(catalog.Update(tx, updated));
  }
  return Status::Ok();
}

Status LeaveReplicaGroup(kv::Transaction& tx, Catalog& catalog, const TableInfo& table) {
  for (const Replica& r : table.replicas) {
    if (r.region == table.region) continue;
    const auto [begin, end] = Outbox(r.table_id, table.region).Range();
    tx.ClearRange(begin, end);
  }
  return UpdateReplicaGroup(tx, catalog, table, [&table](TableInfo& t) {
    if (t.id == table.id) return;
    std::erase_if(t.replicas, [&table](const Replica& r) { return r.region == table.region; });
    if (t.replicas.size() == 1) t.replicas.clear();
    SettleReplicaStatus(t);
  });
}

void SettleReplicaStatus(TableInfo& table) {
  const bool in_flux =
      std::any_of(table.replicas.begin(), table.replicas.end(), [](const Replica& r) {
        return r.status == ReplicaStatus::kCreating || r.status == ReplicaStatus::kDeleting;
      });
  if (table.status == TableStatus::kUpdating && !in_flux) table.status = TableStatus::kActive;
}

const Maintainer& ReplicationMaintainer() {
  static const ReplicationMaintainerImpl maintainer;
  return maintainer;
}

}  // namespace fdyno::store
