#include "workers/streams.h"

#include <spdlog/spdlog.h>

#include <functional>
#include <vector>

#include "base/metrics.h"
#include "kv/run.h"
#include "workers/tables.h"

namespace fdyno::workers {
namespace {

// Tables whose stream was enabled by a binary that did not record streams get one now.
Result<int> MigrateTables(kv::Database& db, store::Catalog& catalog,
                          const StreamWorkerOptions& options, int64_t now_ms) {
  FDYNO_ASSIGN_OR_RETURN(auto tables, AllTables(db, catalog));
  int migrated = 0;
  for (const auto& t : tables) {
    if (!t->stream.enabled || t->stream.stream_id != 0) continue;
    FDYNO_ASSIGN_OR_RETURN(
        bool done, kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<bool> {
          FDYNO_ASSIGN_OR_RETURN(auto fresh, catalog.Find(tx, t->scope(), t->name));
          if (!fresh || !fresh->stream.enabled || fresh->stream.stream_id != 0) return false;
          store::TableInfo before = *fresh;
          before.stream.enabled = false;
          store::TableInfo after = *fresh;
          FDYNO_RETURN_IF_ERROR(store::SyncStream(tx, &before, &after, options.slots, now_ms));
          FDYNO_RETURN_IF_ERROR(catalog.Update(tx, after));
          return true;
        }));
    if (done) {
      spdlog::info("streams: table {} has its stream recorded from now on", t->name);
      ++migrated;
    }
  }
  return migrated;
}

Result<std::vector<store::StreamInfo>> AllStreams(kv::Database& db) {
  kv::RunOptions ro;
  ro.read_only = true;
  return kv::Run(
      db, ro,
      [&](kv::Transaction& tx, const kv::Attempt&) -> Result<std::vector<store::StreamInfo>> {
        auto [begin, end] = store::StreamInfosRange();
        FDYNO_ASSIGN_OR_RETURN(kv::RangeResult r, tx.GetRange(begin, end, {.snapshot = true}));
        std::vector<store::StreamInfo> out;
        for (const kv::KeyValue& kv : r.kvs) {
          FDYNO_ASSIGN_OR_RETURN(store::StreamInfo info, store::DecodeStreamInfo(kv.value));
          out.push_back(std::move(info));
        }
        return out;
      });
}

// Runs `work` in one transaction of stream `id`'s maintenance, after taking or renewing its
// lease (the fence); false, with nothing done, when another owner holds it.
Result<bool> UnderLease(kv::Database& db, int64_t id, const StreamWorkerOptions& options,
                        const std::function<Status(kv::Transaction&)>& work) {
  return kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<bool> {
    FDYNO_ASSIGN_OR_RETURN(bool held, store::TakeLease(tx, StreamLeaseKey(id), options.lease));
    if (held) FDYNO_RETURN_IF_ERROR(work(tx));
    return held;
  });
}

// The maintenance of one stream; adds to `stats`. False when another owner holds its lease.
Result<bool> MaintainStream(kv::Database& db, const store::StreamInfo& info,
                            const StreamWorkerOptions& options, int64_t now_ms,
                            StreamStats& stats) {
  const int64_t cutoff = now_ms - options.retention_ms;
  if (info.disabled_ms != 0 && info.disabled_ms < cutoff) {
    FDYNO_ASSIGN_OR_RETURN(bool held,
                           UnderLease(db, info.id, options, [&](kv::Transaction& tx) -> Status {
                             store::DeleteStream(tx, info);
                             tx.Clear(StreamLeaseKey(info.id));
                             return Status::Ok();
                           }));
    if (held) ++stats.deleted;
    return held;
  }
  for (int slot = 0; slot < info.slots; ++slot) {
    for (;;) {
      int n = 0;
      FDYNO_ASSIGN_OR_RETURN(
          bool held, UnderLease(db, info.id, options, [&](kv::Transaction& tx) -> Status {
            FDYNO_ASSIGN_OR_RETURN(n,
                                   store::TrimSlot(tx, info.id, slot, cutoff, options.trim_batch));
            return Status::Ok();
          }));
      if (!held) return false;
      stats.trimmed += n;
      if (n < options.trim_batch) break;
    }
  }
  int forgotten = 0;
  FDYNO_ASSIGN_OR_RETURN(
      bool held, UnderLease(db, info.id, options, [&](kv::Transaction& tx) -> Status {
        FDYNO_ASSIGN_OR_RETURN(auto view, store::ReadStream(tx, info.id));
        if (!view) return Status::Ok();
        FDYNO_ASSIGN_OR_RETURN(forgotten, store::ForgetEmptyGenerations(tx, *view, cutoff));
        return Status::Ok();
      }));
  if (!held) return false;
  stats.forgotten += forgotten;
  bool rotated = false;
  FDYNO_ASSIGN_OR_RETURN(
      held, UnderLease(db, info.id, options, [&](kv::Transaction& tx) -> Status {
        if (info.disabled_ms == 0 && options.rotation.count() > 0) {
          FDYNO_ASSIGN_OR_RETURN(
              rotated, store::RotateStream(tx, info.id, now_ms, options.rotation.count()));
        }
        // The stream's maintenance is done: the next may be any owner's.
        tx.Clear(StreamLeaseKey(info.id));
        return Status::Ok();
      }));
  if (!held) return false;
  stats.rotated += rotated ? 1 : 0;
  return true;
}

}  // namespace

Result<StreamStats> RunStreamPass(kv::Database& db, store::Catalog& catalog,
                                  const StreamWorkerOptions& options) {
  Clock* clock = options.clock != nullptr ? options.clock : Clock::Real();
  const int64_t now_ms = clock->WallMillis();
  StreamStats stats;
  FDYNO_ASSIGN_OR_RETURN(stats.migrated, MigrateTables(db, catalog, options, now_ms));
  FDYNO_ASSIGN_OR_RETURN(std::vector<store::StreamInfo> streams, AllStreams(db));
  for (const store::StreamInfo& info : streams) {
    Result<bool> done = MaintainStream(db, info, options, now_ms, stats);
    if (!done.ok()) {
      spdlog::warn("streams: stream {}: {}", info.id, done.error().message);
    } else if (!*done) {
      ++stats.elsewhere;
    }
  }
  Metrics& m = Metrics::Global();
  m.GetCounter("stream_records_trimmed").Add(stats.trimmed);
  m.GetCounter("stream_shard_rotations").Add(stats.rotated);
  m.GetCounter("streams_deleted").Add(stats.deleted);
  return stats;
}

std::string StreamLeaseKey(int64_t stream_id) {
  return store::LeaseKey(kv::Tuple{"stream", stream_id});
}

StreamWorker::StreamWorker(kv::Database* db, store::Catalog* catalog, StreamWorkerOptions options)
    : periodic_("fdyno-streams", options.interval, [db, catalog, options] {
        Result<StreamStats> r = RunStreamPass(*db, *catalog, options);
        if (!r.ok()) spdlog::warn("streams pass: {}", r.error().message);
      }) {}

void StreamWorker::Start() { periodic_.Start(); }

void StreamWorker::Stop() { periodic_.Stop(); }

}  // namespace fdyno::workers
