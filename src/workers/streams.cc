#include "workers/streams.h"

#include <spdlog/spdlog.h>

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
          FDYNO_ASSIGN_OR_RETURN(auto fresh, catalog.Find(tx, t->account, t->name));
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

// The maintenance of one stream; adds to `stats`.
Status MaintainStream(kv::Database& db, const store::StreamInfo& info,
                      const StreamWorkerOptions& options, int64_t now_ms, StreamStats& stats) {
  const int64_t cutoff = now_ms - options.retention_ms;
  if (info.disabled_ms != 0 && info.disabled_ms < cutoff) {
    FDYNO_RETURN_IF_ERROR(kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
      store::DeleteStream(tx, info);
      return Status::Ok();
    }));
    ++stats.deleted;
    return Status::Ok();
  }
  for (int slot = 0; slot < info.slots; ++slot) {
    for (;;) {
      FDYNO_ASSIGN_OR_RETURN(int n, kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) {
                               return store::TrimSlot(tx, info.id, slot, cutoff,
                                                      options.trim_batch);
                             }));
      stats.trimmed += n;
      if (n < options.trim_batch) break;
    }
  }
  FDYNO_ASSIGN_OR_RETURN(int forgotten,
                         kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<int> {
                           FDYNO_ASSIGN_OR_RETURN(auto view, store::ReadStream(tx, info.id));
                           if (!view) return 0;
                           return store::ForgetEmptyGenerations(tx, *view, cutoff);
                         }));
  stats.forgotten += forgotten;
  if (info.disabled_ms == 0 && options.rotation.count() > 0) {
    FDYNO_ASSIGN_OR_RETURN(bool rotated, kv::Run(db, [&](kv::Transaction& tx, const kv::Attempt&) {
                             return store::RotateStream(tx, info.id, now_ms,
                                                        options.rotation.count());
                           }));
    stats.rotated += rotated ? 1 : 0;
  }
  return Status::Ok();
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
    Status s = MaintainStream(db, info, options, now_ms, stats);
    if (!s.ok()) spdlog::warn("streams: stream {}: {}", info.id, s.error().message);
  }
  Metrics& m = Metrics::Global();
  m.GetCounter("stream_records_trimmed").Add(stats.trimmed);
  m.GetCounter("stream_shard_rotations").Add(stats.rotated);
  m.GetCounter("streams_deleted").Add(stats.deleted);
  return stats;
}

StreamWorker::StreamWorker(kv::Database* db, store::Catalog* catalog, StreamWorkerOptions options)
    : periodic_("fdyno-streams", options.interval, [db, catalog, options] {
        Result<StreamStats> r = RunStreamPass(*db, *catalog, options);
        if (!r.ok()) spdlog::warn("streams pass: {}", r.error().message);
      }) {}

void StreamWorker::Start() { periodic_.Start(); }

void StreamWorker::Stop() { periodic_.Stop(); }

}  // namespace fdyno::workers
