#include "store/catalog.h"

#include <cstdio>
#include <random>
#include <utility>

#include "base/stop_flag.h"
#include "kv/run.h"
#include "store/layout.h"

namespace fdyno::store {
namespace {

// The table record and the tag set are encoded in store/table_record.cc.

// Pending-purge marker format version. Persisted.
constexpr uint8_t kPurgeMarkerVersion = 1;

// Inner layout of the catalog subspace. Persisted: never renumber or reuse.
enum class CatalogPart : int64_t {
  kTableByName = 1,     // format 1 only: (1, 1, name) -> table record; moved by Migrate
  kNextTableId = 2,     // (1, 2) -> 8-byte little-endian counter
  kTags = 3,            // (1, 3, table_id) -> tag set
  kPendingPurge = 4,    // (1, 4, table_id) -> purge marker
  kTableByAccount = 5,  // format 2 only: (1, 5, account, name) -> table record; moved
  kFormat = 6,          // (1, 6) -> catalog format version, one byte
  kPolicies = 7,        // (1, 7, table_id, slot) -> resource policy (store/policies.h)
  kPurgeHold = 8,       // (1, 8, table_id) -> empty: the dropped table's purge waits
  kTableByScope = 9,    // (1, 9, account, region, name) -> table record
  kLegacyRegion = 10,   // (1, 10) -> the region of what was written before regions
};

int64_t Part(CatalogPart p) { return static_cast<int64_t>(p); }

// A catalog counter (metadata version, next table id): absent is 0; malformed fails closed.
Result<uint64_t> CounterValue(const std::optional<std::string>& bytes, const char* what) {
  if (!bytes) return uint64_t{0};
  std::optional<int64_t> v = kv::DecodeCounter(*bytes);
  if (!v) return Error::Internal(std::string("catalog ") + what + " is malformed");
  return static_cast<uint64_t>(*v);
}

// A random version-4 UUID for DescribeTable's TableId.
std::string NewUuid() {
  thread_local std::mt19937_64 rng(std::random_device{}());
  uint64_t a = rng(), b = rng();
  a = (a & 0xFFFFFFFFFFFF0FFFull) | 0x0000000000004000ull;
  b = (b & 0x3FFFFFFFFFFFFFFFull) | 0x8000000000000000ull;
  char buf[37];
  std::snprintf(buf, sizeof(buf), "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xFFFF), static_cast<unsigned>(a & 0xFFFF),
                static_cast<unsigned>(b >> 48),
                static_cast<unsigned long long>(b & 0xFFFFFFFFFFFFull));
  return buf;
}

}  // namespace

const SearchSchemaElement* VectorIndex::Hash() const {
  for (const SearchSchemaElement& e : search_schema) {
    if (e.role == SearchRole::kHash) return &e;
  }
  return nullptr;
}

const VectorIndex* TableInfo::FindVectorIndex(std::string_view index_name) const {
  for (const VectorIndex& v : vector_indexes) {
    if (v.name == index_name) return &v;
  }
  return nullptr;
}

const Replica* TableInfo::FindReplica(std::string_view in_region) const {
  for (const Replica& r : replicas) {
    if (r.region == in_region) return &r;
  }
  return nullptr;
}

bool TableInfo::CountsKeyAccesses() const {
  if (insights.enabled()) return true;
  for (const SecondaryIndex& i : global_indexes) {
    if (i.insights.enabled()) return true;
  }
  return false;
}

const SecondaryIndex* TableInfo::FindIndex(std::string_view index_name) const {
  for (const auto& i : local_indexes) {
    if (i.name == index_name) return &i;
  }
  for (const auto& i : global_indexes) {
    if (i.name == index_name) return &i;
  }
  return nullptr;
}

std::string NewTableUuid() { return NewUuid(); }

// ---- Catalog ----

Catalog::Catalog(Clock* clock, CatalogOptions options)
    : clock_(clock), options_(options), cache_(std::make_shared<Cache>()) {}

std::string Catalog::TableKey(TableScope scope, std::string_view name) {
  return layout::Catalog().Pack(
      kv::Tuple{Part(CatalogPart::kTableByScope), scope.account, scope.region, name});
}
std::string Catalog::AccountTableKey(std::string_view account, std::string_view name) {
  return AccountTables().Pack(kv::Tuple{account, name});
}
kv::Subspace Catalog::AccountTables() {
  return layout::Catalog().Sub(kv::Tuple{Part(CatalogPart::kTableByAccount)});
}
std::string Catalog::LegacyRegionKey() {
  return layout::Catalog().Pack(kv::Tuple{Part(CatalogPart::kLegacyRegion)});
}
std::string Catalog::LegacyTableKey(std::string_view name) {
  return layout::Catalog().Pack(kv::Tuple{Part(CatalogPart::kTableByName), name});
}
std::string Catalog::FormatKey() {
  return layout::Catalog().Pack(kv::Tuple{Part(CatalogPart::kFormat)});
}
std::string Catalog::TagsKey(int64_t table_id) {
  return layout::Catalog().Pack(kv::Tuple{Part(CatalogPart::kTags), table_id});
}
std::string Catalog::PolicyKey(int64_t table_id, std::string_view slot) {
  return layout::Catalog().Pack(kv::Tuple{Part(CatalogPart::kPolicies), table_id, slot});
}
std::string Catalog::PendingPurgeKey(int64_t table_id) {
  return layout::Catalog().Pack(kv::Tuple{Part(CatalogPart::kPendingPurge), table_id});
}
std::string Catalog::PurgeHoldKey(int64_t table_id) {
  return layout::Catalog().Pack(kv::Tuple{Part(CatalogPart::kPurgeHold), table_id});
}
std::string Catalog::NextTableIdKey() {
  return layout::Catalog().Pack(kv::Tuple{Part(CatalogPart::kNextTableId)});
}

namespace {

// The cache's key of (scope, name): the account's and region's lengths first, so that no two
// triples meet.
std::string CacheKey(TableScope scope, std::string_view name) {
  std::string key = std::to_string(scope.account.size());
  key += ':';
  key += std::to_string(scope.region.size());
  key += ':';
  key += scope.account;
  key += scope.region;
  key += name;
  return key;
}

// The table names in `space` from key `begin` on, at most `limit`, each decoded from its key's
// tuple (inside `space`) by `decode`; `more` when names are left after them.
template <typename Page, typename Decode>
Result<Page> NamePage(kv::Transaction& txn, const kv::Subspace& space, const std::string& begin,
                      int limit, const Decode& decode) {
  kv::RangeOptions opts;
  opts.limit = limit + 1;
  FDYNO_ASSIGN_OR_RETURN(kv::RangeResult range, txn.GetRange(begin, space.Range().second, opts));
  Page page;
  for (const auto& kv : range.kvs) {
    if (static_cast<int>(page.names.size()) == limit) {
      page.more = true;
      break;
    }
    FDYNO_ASSIGN_OR_RETURN(kv::Tuple t, space.Unpack(kv.key));
    FDYNO_ASSIGN_OR_RETURN(auto name, decode(t));
    page.names.push_back(std::move(name));
  }
  return page;
}

// One migration step: moves up to `batch` format 1 records to the shared account; when none is
// left, records format 2 (unless the catalog is past it). Returns the number moved (0: the
// catalog is past format 1).
Result<int> MigrateBatch(kv::Transaction& txn, int batch) {
  FDYNO_ASSIGN_OR_RETURN(int format, Catalog::ReadFormat(txn));
  if (format >= Catalog::kFormatAccounts) return 0;
  const kv::Subspace legacy = layout::Catalog().Sub(kv::Tuple{Part(CatalogPart::kTableByName)});
  const auto [begin, end] = legacy.Range();
  kv::RangeOptions opts;
  opts.limit = batch;
  FDYNO_ASSIGN_OR_RETURN(kv::RangeResult range, txn.GetRange(begin, end, opts));
  for (const kv::KeyValue& kv : range.kvs) {
    FDYNO_ASSIGN_OR_RETURN(kv::Tuple t, legacy.Unpack(kv.key));
    FDYNO_ASSIGN_OR_RETURN(std::string name, t.GetString(0));
    const std::string key = Catalog::AccountTableKey(kSharedAccount, name);
    FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> taken, txn.Get(key));
    if (taken) {
      return Error::Internal("catalog migration: table " + name + " exists both before and " +
                             "after accounts; both records are left in place");
    }
    txn.Set(key, kv.value);  // unchanged: a record without "account" is the shared account's
    txn.Clear(kv.key);
  }
  if (range.kvs.empty()) Catalog::WriteFormat(txn, Catalog::kFormatAccounts);
  if (!range.kvs.empty()) {
    txn.AtomicOp(kv::MutationType::kAdd, layout::MetadataVersionKey(), kv::EncodeCounter(1));
  }
  return static_cast<int>(range.kvs.size());
}

}  // namespace

Result<int> Catalog::ReadFormat(kv::Transaction& txn) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> format, txn.Get(FormatKey()));
  if (!format) return 1;
  if (format->size() != 1) return Error::Internal("catalog format key is malformed");
  const auto version = static_cast<uint8_t>((*format)[0]);
  if (version > Catalog::kFormat) {
    return Error::Internal("catalog format " + std::to_string(version) +
                           " is newer than this binary's (" + std::to_string(Catalog::kFormat) +
                           "): use a newer fdyno");
  }
  return static_cast<int>(version);
}

void Catalog::WriteFormat(kv::Transaction& txn, int version) {
  txn.Set(FormatKey(), std::string(1, static_cast<char>(version)));
}

Result<int> Catalog::Migrate(kv::Database& db, int batch) {
  int moved = 0;
  while (true) {
    FDYNO_ASSIGN_OR_RETURN(int n, kv::Run(db, [&](kv::Transaction& txn, const kv::Attempt&) {
                             return MigrateBatch(txn, batch);
                           }));
    if (n == 0) return moved;
    moved += n;
  }
}

Result<uint64_t> Catalog::ReadVersion(kv::Transaction& txn) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> v, txn.Get(layout::MetadataVersionKey()));
  return CounterValue(v, "metadata version");
}

void Catalog::BumpVersion(kv::Transaction& txn) {
  txn.AtomicOp(kv::MutationType::kAdd, layout::MetadataVersionKey(), kv::EncodeCounter(1));
}

Result<std::shared_ptr<const TableInfo>> Catalog::Find(kv::Transaction& txn, TableScope scope,
                                                       std::string_view name) {
  FDYNO_ASSIGN_OR_RETURN(uint64_t version, ReadVersion(txn));
  const std::string cache_key = CacheKey(scope, name);
  std::shared_ptr<Cache> cache;
  {
    std::lock_guard<std::mutex> lock(mu_);
    cache = cache_;
  }
  if (cache->version == version) {
    auto it = cache->tables.find(cache_key);
    if (it != cache->tables.end()) return it->second;
  }
  // Not cached at this version: read the record in this transaction. The version read above
  // guarantees the record belongs to `version` (every record change bumps it).
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> bytes, txn.Get(TableKey(scope, name)));
  std::shared_ptr<const TableInfo> info;
  if (bytes) {
    FDYNO_ASSIGN_OR_RETURN(TableInfo decoded, DecodeTableInfo(*bytes));
    if (decoded.scope() != scope || decoded.name != name) {
      return Error::Internal("catalog record of " + std::string(name) + " names another table");
    }
    info = std::make_shared<const TableInfo>(std::move(decoded));
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (version < cache_->version) return info;
  // Absent names are remembered only up to a bound: names a caller makes up must not grow
  // the cache (or the copy below) without limit. Past it a miss is one more record read.
  const bool stale = version > cache_->version;
  if (!info && !stale && cache_->absent >= kMaxCachedAbsentNames) return info;
  // Copy-on-write: readers holding the old map keep a consistent snapshot.
  auto next = stale ? std::make_shared<Cache>() : std::make_shared<Cache>(*cache_);
  next->version = version;
  if (next->tables.emplace(cache_key, info).second && !info) ++next->absent;
  cache_ = std::move(next);
  return info;
}

size_t Catalog::CachedNames() {
  std::lock_guard<std::mutex> lock(mu_);
  return cache_->tables.size();
}

Result<std::shared_ptr<const TableInfo>> Catalog::FindCreated(kv::Transaction& txn,
                                                              TableScope scope,
                                                              std::string_view name,
                                                              std::string_view uuid) {
  FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const TableInfo> t, Find(txn, scope, name));
  if (t && !uuid.empty() && t->uuid == uuid) return t;
  return std::shared_ptr<const TableInfo>();
}

Result<std::shared_ptr<const TableInfo>> Catalog::Create(kv::Transaction& txn, TableInfo info,
                                                         const std::vector<Tag>& tags,
                                                         std::string_view uuid) {
  if (info.account.empty() || info.region.empty()) {
    return Error::Internal("a table must belong to an account and a region");
  }
  const std::string key = TableKey(info.scope(), info.name);
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> existing, txn.Get(key));
  if (existing) return Error::ResourceInUse("Table already exists: " + info.name);
  // The id counter is read (not blindly added) so that concurrent creates conflict and each
  // gets a distinct id; creates are rare.
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> counter, txn.Get(NextTableIdKey()));
  FDYNO_ASSIGN_OR_RETURN(uint64_t last_id, CounterValue(counter, "next table id"));
  const uint64_t id = last_id + 1;
  txn.Set(NextTableIdKey(), kv::EncodeCounter(static_cast<int64_t>(id)));
  info.id = static_cast<int64_t>(id);
  info.uuid = uuid.empty() ? NewUuid() : std::string(uuid);
  info.creation_ms = clock_->WallMillis();
  info.next_index_id = 1;
  for (auto* list : {&info.local_indexes, &info.global_indexes}) {
    for (auto& index : *list) index.id = info.next_index_id++;
  }
  for (VectorIndex& index : info.vector_indexes) index.id = info.next_index_id++;
  txn.Set(key, EncodeTableInfo(info));
  if (!tags.empty()) txn.Set(TagsKey(info.id), EncodeTags(tags));
  BumpVersion(txn);
  return std::make_shared<const TableInfo>(std::move(info));
}

Status Catalog::Update(kv::Transaction& txn, const TableInfo& info) {
  txn.Set(TableKey(info.scope(), info.name), EncodeTableInfo(info));
  BumpVersion(txn);
  return Status::Ok();
}

Status Catalog::Drop(kv::Transaction& txn, const TableInfo& info, bool hold) {
  txn.Clear(TableKey(info.scope(), info.name));
  txn.Clear(TagsKey(info.id));
  auto [policies_begin, policies_end] =
      layout::Catalog().Range(kv::Tuple{Part(CatalogPart::kPolicies), info.id});
  txn.ClearRange(policies_begin, policies_end);
  txn.Set(PendingPurgeKey(info.id), std::string(1, static_cast<char>(kPurgeMarkerVersion)));
  if (hold) txn.Set(PurgeHoldKey(info.id), "");
  BumpVersion(txn);
  return Status::Ok();
}

void Catalog::ReleaseDropped(kv::Transaction& txn, int64_t table_id) {
  txn.Clear(PurgeHoldKey(table_id));
}

Result<TableNamePage> Catalog::List(kv::Transaction& txn, TableScope scope,
                                    std::string_view exclusive_start, int limit) {
  const kv::Subspace by_name = layout::Catalog().Sub(
      kv::Tuple{Part(CatalogPart::kTableByScope), scope.account, scope.region});
  // After the start name: its packed key followed by 0x00 sorts after it and before every
  // other name that extends it.
  const std::string begin = exclusive_start.empty()
                                ? by_name.Range().first
                                : by_name.Pack(kv::Tuple{exclusive_start}) + '\0';
  return NamePage<TableNamePage>(txn, by_name, begin, limit,
                                 [](const kv::Tuple& t) { return t.GetString(0); });
}

Result<QualifiedNamePage> Catalog::ListAll(kv::Transaction& txn, const QualifiedName* after,
                                           int limit) {
  const kv::Subspace all = layout::Catalog().Sub(kv::Tuple{Part(CatalogPart::kTableByScope)});
  const std::string begin =
      after == nullptr ? all.Range().first
                       : all.Pack(kv::Tuple{after->account, after->region, after->name}) + '\0';
  return NamePage<QualifiedNamePage>(
      txn, all, begin, limit, [](const kv::Tuple& t) -> Result<QualifiedName> {
        FDYNO_ASSIGN_OR_RETURN(std::string account, t.GetString(0));
        FDYNO_ASSIGN_OR_RETURN(std::string region, t.GetString(1));
        FDYNO_ASSIGN_OR_RETURN(std::string name, t.GetString(2));
        return QualifiedName{std::move(account), std::move(region), std::move(name)};
      });
}

Result<std::vector<Tag>> Catalog::GetTags(kv::Transaction& txn, int64_t table_id) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> bytes, txn.Get(TagsKey(table_id)));
  if (!bytes) return std::vector<Tag>();
  return DecodeTags(*bytes);
}

Status Catalog::SetTags(kv::Transaction& txn, int64_t table_id, const std::vector<Tag>& tags) {
  if (tags.empty()) {
    txn.Clear(TagsKey(table_id));
  } else {
    txn.Set(TagsKey(table_id), EncodeTags(tags));
  }
  return Status::Ok();
}

}  // namespace fdyno::store

namespace fdyno::store {

std::string Catalog::PurgeLeaseKey(int64_t table_id) {
  return LeaseKey(kv::Tuple{"purge", table_id});
}

Result<std::optional<bool>> Catalog::PurgeOne(kv::Database& db, int64_t table_id,
                                              const LeaseOptions& lease) {
  // Not a structured binding: clang 14 cannot capture one in the lambda.
  const auto range = layout::Table(table_id).Range();
  const std::string& begin = range.first;
  const std::string& end = range.second;
  // One bounded transaction: clear up to purge_batch_keys keys of the table, or, when none
  // are left, forget the pending purge. Nothing writes under a dropped table's id (writers
  // conflict on the metadata version key), so snapshot reads suffice.
  return kv::Run(db, [&](kv::Transaction& txn, const kv::Attempt&) -> Result<std::optional<bool>> {
    // The fence: this transaction commits only while this owner holds the table's lease.
    FDYNO_ASSIGN_OR_RETURN(bool held, TakeLease(txn, PurgeLeaseKey(table_id), lease));
    if (!held) return std::optional<bool>();
    kv::RangeOptions opts;
    opts.limit = options_.purge_batch_keys;
    opts.snapshot = true;
    FDYNO_ASSIGN_OR_RETURN(kv::RangeResult page, txn.GetRange(begin, end, opts));
    if (page.kvs.empty()) {
      txn.Clear(PendingPurgeKey(table_id));
      txn.Clear(PurgeLeaseKey(table_id));
      return std::optional<bool>(true);
    }
    std::string stop = page.more ? page.kvs.back().key + std::string(1, '\0') : end;
    txn.ClearRange(begin, stop);
    return std::optional<bool>(false);
  });
}

Result<int> Catalog::PurgeDropped(kv::Database& db, const LeaseOptions& lease,
                                  const std::atomic<bool>* stop) {
  kv::Subspace pending = layout::Catalog().Sub(kv::Tuple{Part(CatalogPart::kPendingPurge)});
  const auto range = pending.Range();  // not a structured binding: captured below
  const std::string& begin = range.first;
  const std::string& end = range.second;
  FDYNO_ASSIGN_OR_RETURN(
      std::vector<int64_t> ids,
      kv::Run(db, [&](kv::Transaction& txn, const kv::Attempt&) -> Result<std::vector<int64_t>> {
        std::vector<int64_t> out;
        FDYNO_ASSIGN_OR_RETURN(kv::RangeResult r, txn.GetRange(begin, end));
        for (const auto& kv : r.kvs) {
          FDYNO_ASSIGN_OR_RETURN(kv::Tuple t, pending.Unpack(kv.key));
          FDYNO_ASSIGN_OR_RETURN(int64_t id, t.GetInt(0));
          // A held purge waits (written with the marker, so seen with it).
          FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> held, txn.Get(PurgeHoldKey(id)));
          if (!held) out.push_back(id);
        }
        return out;
      }));
  int done = 0;
  for (int64_t id : ids) {
    // Each round removes at least one key, finishes, or finds the table another owner's.
    while (!StopRequested(stop)) {
      FDYNO_ASSIGN_OR_RETURN(std::optional<bool> finished, PurgeOne(db, id, lease));
      if (!finished) break;
      if (*finished) {
        ++done;
        break;
      }
    }
  }
  return done;
}

}  // namespace fdyno::store
