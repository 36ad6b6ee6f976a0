#include "store/vector_graphs.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>

#include "kv/run.h"
#include "store/item_counts.h"
#include "store/vector_index.h"
#include "store/vector_journal.h"

namespace fdyno::store {
namespace {

const VectorIndex* FindIndex(const TableInfo& table, int64_t index_id) {
  for (const VectorIndex& v : table.vector_indexes) {
    if (v.id == index_id) return &v;
  }
  return nullptr;
}

// Whether searches may use a graph of `index` (what SearchVectors accepts).
bool Searchable(const VectorIndex* index) {
  return index != nullptr && index->status == IndexStatus::kActive && !index->backfilling;
}

// The change of the entry `key` whose stored value is `value` (nullopt: absent).
Result<VectorGraph::Change> ChangeOf(const std::string& key,
                                     const std::optional<std::string>& value, size_t dims) {
  VectorGraph::Change c{key, std::nullopt};
  if (!value) return c;
  FDYNO_ASSIGN_OR_RETURN(VectorEntryView entry, ParseVectorEntry(*value));
  if (entry.dimensions != dims) return Error::Internal("vector index entry of another size");
  c.vector.emplace(dims);
  std::memcpy(c.vector->data(), entry.floats, dims * sizeof(float));
  return c;
}

}  // namespace

Result<EntryChanges> ReadChangesSince(kv::Transaction& tx, const TableInfo& table,
                                      const VectorIndex& index, int64_t after, int limit) {
  EntryChanges out;
  FDYNO_ASSIGN_OR_RETURN(out.read_version, tx.GetReadVersion());
  FDYNO_ASSIGN_OR_RETURN(int64_t marker, ReadVectorJournalTrimMarker(tx, table.id, index.id));
  if (marker > after) {
    out.trimmed = true;
    return out;
  }
  FDYNO_ASSIGN_OR_RETURN(VectorJournalPage page,
                         ReadVectorJournal(tx, table.id, index.id, after, limit));
  out.through = page.through;
  out.complete = page.complete;
  out.entries.reserve(page.entry_keys.size());
  for (std::string& key : page.entry_keys) {
    FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> value, tx.Get(key, /*snapshot=*/true));
    out.entries.push_back({std::move(key), std::move(value)});
  }
  return out;
}

Result<bool> ApplyChanges(VectorGraph& graph, const EntryChanges& changes) {
  std::vector<VectorGraph::Change> parsed;
  parsed.reserve(changes.entries.size());
  for (const EntryChanges::Entry& e : changes.entries) {
    FDYNO_ASSIGN_OR_RETURN(VectorGraph::Change c, ChangeOf(e.key, e.value, graph.dimensions()));
    parsed.push_back(std::move(c));
  }
  return graph.Apply(parsed, changes.through, changes.read_version);
}

VectorGraphs::VectorGraphs(kv::Database* db, Catalog* catalog, VectorGraphsOptions options)
    : db_(db),
      catalog_(catalog),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : Clock::Real()) {}

VectorGraphs::~VectorGraphs() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::shared_ptr<VectorGraph> VectorGraphs::Find(int64_t table_id, int64_t index_id) const {
  std::lock_guard lock(mu_);
  auto it = slots_.find({table_id, index_id});
  return it == slots_.end() ? nullptr : it->second.graph;
}

void VectorGraphs::Request(const TableInfo& table, const VectorIndex& index) {
  {
    std::lock_guard lock(mu_);
    Slot& slot = slots_[{table.id, index.id}];
    if (slot.requested) return;
    slot.requested = true;
    slot.account = table.account;
    slot.table_name = table.name;
    requests_[{table.id, index.id}] = {std::make_shared<const TableInfo>(table), index.id};
  }
  wake_.notify_all();
}

void VectorGraphs::Rebuild(const TableInfo& table, const VectorIndex& index,
                           const VectorGraph* graph) {
  {
    std::lock_guard lock(mu_);
    auto it = slots_.find({table.id, index.id});
    if (it != slots_.end() && it->second.graph.get() == graph) it->second.graph = nullptr;
  }
  Request(table, index);
}

Result<bool> VectorGraphs::BringForward(const TableInfo& table, const VectorIndex& index,
                                        VectorGraph& graph) {
  int limit = options_.build_batch;
  while (true) {
    const int64_t after = graph.position();
    FDYNO_ASSIGN_OR_RETURN(EntryChanges changes,
                           kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) {
                             return ReadChangesSince(tx, table, index, after, limit);
                           }));
    if (changes.trimmed) return false;
    FDYNO_ASSIGN_OR_RETURN(bool applied, ApplyChanges(graph, changes));
    if (changes.complete) return true;
    if (Stopping()) return Error::Internal("stopped");
    // One commit version holds more records than a page: read it whole next time.
    if (applied && changes.through == after) limit *= 2;
  }
}

Status VectorGraphs::Build(const TableInfo& table, const VectorIndex& index) {
  const size_t dims = static_cast<size_t>(index.dimensions);
  // Named, not bound: clang 14 cannot capture structured bindings in the lambda below.
  const auto range = VectorIndexRange(table, index, nullptr);
  std::string from = range.first;
  const std::string& end = range.second;
  std::shared_ptr<VectorGraph> graph;
  while (true) {
    struct Chunk {
      std::vector<VectorGraph::Change> changes;
      int64_t version = 0;
      int64_t count = 0;
      bool more = false;
    };
    FDYNO_ASSIGN_OR_RETURN(
        Chunk chunk, kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Result<Chunk> {
          Chunk c;
          FDYNO_ASSIGN_OR_RETURN(c.version, tx.GetReadVersion());
          if (graph == nullptr) {
            FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> n,
                                   tx.Get(ItemCountKey(table.id, index.id), /*snapshot=*/true));
            c.count = n ? kv::DecodeCounter(*n).value_or(0) : 0;
          }
          kv::RangeOptions ro;
          ro.limit = options_.build_batch;
          ro.snapshot = true;
          FDYNO_ASSIGN_OR_RETURN(kv::RangeResult page, tx.GetRange(from, end, ro));
          for (const kv::KeyValue& kv : page.kvs) {
            FDYNO_ASSIGN_OR_RETURN(VectorGraph::Change change, ChangeOf(kv.key, kv.value, dims));
            c.changes.push_back(std::move(change));
          }
          c.more = page.more && !page.kvs.empty();
          if (c.more) from = page.kvs.back().key + '\x00';
          return c;
        }));
    if (graph == nullptr) {
      // The first chunk's version is the graph's position: later chunks are read at later
      // versions, and every entry changed since the first is replayed from the journal.
      const size_t capacity = static_cast<size_t>(std::max<int64_t>(chunk.count, 0)) * 5 / 4;
      graph = std::make_shared<VectorGraph>(index.distance, dims, chunk.version, capacity,
                                            options_.graph);
    }
    FDYNO_RETURN_IF_ERROR(graph->Apply(chunk.changes, graph->position(), chunk.version));
    if (!chunk.more) break;
    if (Stopping()) return Error::Internal("stopped");
  }
  FDYNO_ASSIGN_OR_RETURN(bool current, BringForward(table, index, *graph));
  if (!current) return Error::Internal("vector journal trimmed while its graph was built");
  spdlog::info("vector graph of table {} index {}: built, {} entries", table.name, index.name,
               graph->size());
  std::lock_guard lock(mu_);
  Slot& slot = slots_[{table.id, index.id}];
  slot.graph = std::move(graph);
  slot.account = table.account;
  slot.table_name = table.name;
  return Status::Ok();
}

Status VectorGraphs::RunRequests() {
  Status first = Status::Ok();
  while (true) {
    Request_ r;
    std::shared_ptr<VectorGraph> graph;
    {
      std::lock_guard lock(mu_);
      if (requests_.empty() || stop_) break;
      auto it = requests_.begin();
      r = std::move(it->second);
      graph = slots_[it->first].graph;
      requests_.erase(it);
    }
    const VectorIndex* index = FindIndex(*r.table, r.index_id);
    Status s = Status::Ok();
    if (index == nullptr) {
      // Cannot happen: requests name an index of the table they carry.
    } else if (graph != nullptr && !graph->NeedsRebuild()) {
      Result<bool> current = BringForward(*r.table, *index, *graph);
      // Trimmed past it, or mostly deleted nodes once current: built anew (it serves meanwhile).
      if (current.ok() && (!*current || graph->NeedsRebuild())) s = Build(*r.table, *index);
      if (!current.ok()) s = std::move(current).error();
    } else {
      s = Build(*r.table, *index);
    }
    {
      std::lock_guard lock(mu_);
      slots_[{r.table->id, r.index_id}].requested = false;
    }
    if (!s.ok()) {
      spdlog::warn("vector graph of table {} index {}: {}", r.table->name, r.index_id,
                   s.error().message);
      if (first.ok()) first = s;
    }
  }
  return first;
}

int64_t VectorGraphs::Cutoff(int64_t now_ms) const {
  int64_t cutoff = 0;
  for (const auto& [time_ms, version] : samples_) {
    if (time_ms > now_ms - options_.journal_retention_ms) break;
    cutoff = version;
  }
  return cutoff;
}

Status VectorGraphs::TrimTable(const TableInfo& table, int64_t cutoff) {
  return kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
    FDYNO_ASSIGN_OR_RETURN(std::vector<int64_t> ids, VectorJournalIndexIds(tx, table.id));
    for (int64_t id : ids) {
      const VectorIndex* index = FindIndex(table, id);
      if (index == nullptr || !VectorIndexIsMaintained(*index)) {
        ClearVectorJournal(tx, table.id, id);
      } else if (cutoff > 0) {
        FDYNO_RETURN_IF_ERROR(TrimVectorJournal(tx, table.id, id, cutoff));
      }
    }
    return Status::Ok();
  });
}

Status VectorGraphs::Maintain() {
  const int64_t now_ms = clock_->WallMillis();
  FDYNO_ASSIGN_OR_RETURN(
      int64_t version,
      kv::Run(*db_, [](kv::Transaction& tx, const kv::Attempt&) { return tx.GetReadVersion(); }));
  int64_t cutoff;
  {
    std::lock_guard lock(mu_);
    samples_.emplace_back(now_ms, version);
    cutoff = Cutoff(now_ms);
    // Keep the newest sample old enough, and every younger one.
    while (samples_.size() > 1 && samples_[1].first <= now_ms - options_.journal_retention_ms) {
      samples_.pop_front();
    }
  }
  std::optional<QualifiedName> after;
  std::map<Key, bool> alive;  // the slots whose table and index are still searchable
  while (true) {
    std::vector<std::shared_ptr<const TableInfo>> tables;
    bool more = false;
    FDYNO_RETURN_IF_ERROR(kv::Run(*db_, [&](kv::Transaction& tx, const kv::Attempt&) -> Status {
      tables.clear();
      FDYNO_ASSIGN_OR_RETURN(QualifiedNamePage page,
                             catalog_->ListAll(tx, after ? &*after : nullptr, 100));
      for (const QualifiedName& n : page.names) {
        FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const TableInfo> t,
                               catalog_->Find(tx, n.scope(), n.name));
        if (t != nullptr) tables.push_back(std::move(t));
      }
      more = page.more && !page.names.empty();
      if (more) after = page.names.back();
      return Status::Ok();
    }));
    for (const auto& t : tables) {
      for (const VectorIndex& v : t->vector_indexes) alive[{t->id, v.id}] = Searchable(&v);
      FDYNO_RETURN_IF_ERROR(TrimTable(*t, cutoff));
    }
    if (!more) break;
  }
  std::lock_guard lock(mu_);
  std::erase_if(slots_, [&](const auto& slot) {
    auto it = alive.find(slot.first);
    return !slot.second.requested && (it == alive.end() || !it->second);
  });
  return Status::Ok();
}

bool VectorGraphs::Stopping() const {
  std::lock_guard lock(mu_);
  return stop_;
}

void VectorGraphs::Start() {
  thread_ = std::thread([this] {
    auto next = clock_->Now();
    std::unique_lock lock(mu_);
    while (!stop_) {
      if (requests_.empty()) {
        wake_.wait_for(lock, options_.maintenance_period,
                       [this] { return stop_ || !requests_.empty(); });
      }
      if (stop_) break;
      lock.unlock();
      (void)RunRequests();  // logged
      if (clock_->Now() >= next) {
        if (Status s = Maintain(); !s.ok()) {
          spdlog::warn("vector graph maintenance: {}", s.error().message);
        }
        next = clock_->Now() + options_.maintenance_period;
      }
      lock.lock();
    }
  });
}

}  // namespace fdyno::store
