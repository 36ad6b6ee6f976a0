// The table catalog: which tables exist, their key schema, indexes, billing, streams and
// tags, stored in the catalog subspace (store/layout.h) and described in
// docs/format/catalog.md.
//
// Tables belong to an account and a region, as in DynamoDB: a table is named by (account, region,
// name), so two accounts, or one account's two regions, may each have a table of the same name
// and neither sees the other's. Open mode gives every caller the one account kSharedAccount, so
// its callers share one namespace per region (like DynamoDB Local's shared database). A catalog
// written before tables had accounts holds every table under kSharedAccount, and one written
// before regions holds every table in its legacy region, once store::MigrateFormat has run
// (store/regions_migration.h, docs/format/catalog.md).
//
// Every table gets a fresh numeric id from a counter in its create transaction; all its data
// lives under layout::Table(id), so a dropped and recreated table never sees old keys.
//
// Caching: a Catalog keeps decoded TableInfo in memory, tagged with the metadata version (a
// counter every catalog change increments in the same transaction). Find() reads the version
// key inside the caller's transaction - a normal (conflicting) read, so the caller's commit
// fails with not_committed if the catalog changes before it commits - and serves the table
// from the cache when the versions agree, else reads the record in the same transaction.
// Item operations therefore get a table's metadata for the cost of one point read, and can
// never write into a table that was dropped or changed after they read its metadata.
//
// Thread-safety: a Catalog is thread-safe. TableInfo is immutable once published (shared via
// shared_ptr<const TableInfo>). Functions taking a Transaction use it from one thread and may
// be called again when the kv retry runner re-runs the transaction body.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "kv/kv.h"
#include "kv/tuple.h"
#include "model/key_schema.h"
#include "store/leases.h"

namespace fdyno::store {

// The account of every open-mode caller (http's kOpenModeAccount), and the owner of every table,
// backup and stream written before tables belonged to accounts. Persisted: never change it.
inline constexpr std::string_view kSharedAccount = "000000000001";

// Key attribute types and key schemas are the model's (model/key_schema.h); the catalog
// record stores the type as its name ("S", "N", "B").
using ScalarType = model::ScalarType;
using AttributeDefinition = model::KeyAttribute;
using KeySchema = model::KeySchema;
using model::ParseScalarType;
using model::ScalarTypeName;

enum class ProjectionType : uint8_t { kAll, kKeysOnly, kInclude };

struct Projection {
  ProjectionType type = ProjectionType::kAll;
  std::vector<std::string> non_key_attributes;  // kInclude only, in request order
  bool operator==(const Projection&) const = default;
};

// Provisioned throughput as DescribeTable shows it. Zero units under PAY_PER_REQUEST.
struct Throughput {
  int64_t read_capacity_units = 0;
  int64_t write_capacity_units = 0;
  int64_t last_increase_ms = 0;  // 0: never
  int64_t last_decrease_ms = 0;  // 0: never
  int64_t number_of_decreases_today = 0;
  bool operator==(const Throughput&) const = default;
};

// WarmThroughput: the read and write units per second a table or global secondary index can
// serve at once, as last raised (api/warm_throughput.h computes what DescribeTable shows from
// these and the current throughput). 0: never stored.
struct WarmThroughput {
  int64_t read_units_per_second = 0;
  int64_t write_units_per_second = 0;
  bool operator==(const WarmThroughput&) const = default;
};

enum class TableStatus : uint8_t { kCreating, kUpdating, kDeleting, kActive };
enum class IndexStatus : uint8_t { kCreating, kUpdating, kDeleting, kActive };
enum class ReplicaStatus : uint8_t { kCreating, kUpdating, kDeleting, kActive };

// One replica of a global table (version 2019.11.21): a table of the same account and name in
// `region`, with its own id. Every replica's record holds the whole set (store/replication.h).
struct Replica {
  std::string region;
  int64_t table_id = 0;
  ReplicaStatus status = ReplicaStatus::kActive;
  // The region whose items filled it (the table that UpdateTable named; empty for the first
  // replica of a group), and when it was added: a region that filled a replica may not leave the
  // group for a day after (DynamoDB's rule).
  std::string filled_from;
  int64_t added_ms = 0;
  bool operator==(const Replica&) const = default;
};

// CloudWatch Contributor Insights of a table or a global secondary index, as
// UpdateContributorInsights leaves it (api/insights_ops.h). The states DynamoDB passes through
// (ENABLING, DISABLING) are only answered by the update itself: fdyno's counting starts and stops
// with the commit.
enum class InsightsStatus : uint8_t { kDisabled, kEnabled, kFailed };
enum class InsightsMode : uint8_t { kAccessedAndThrottledKeys, kThrottledKeys };

struct InsightsSettings {
  InsightsStatus status = InsightsStatus::kDisabled;
  InsightsMode mode = InsightsMode::kAccessedAndThrottledKeys;
  int64_t updated_ms = 0;  // LastUpdateDateTime; 0: never configured
  int64_t rules_ms = 0;    // the creation time in the rule names (kept across mode changes)
  bool enabled() const { return status == InsightsStatus::kEnabled; }
  bool operator==(const InsightsSettings&) const = default;
};

// A Kinesis Data Streams destination of the table's changes (EnableKinesisStreamingDestination;
// api/kinesis_destination_ops.h), with DynamoDB's DestinationStatus.
struct KinesisDestination {
  std::string stream_arn;
  std::string status;       // ENABLING, ACTIVE, UPDATING, DISABLING, DISABLED or ENABLE_FAILED
  std::string description;  // DestinationStatusDescription (ENABLE_FAILED's reason); may be empty
  std::string precision;    // ApproximateCreationDateTimePrecision; empty: not set (MILLISECOND)
  bool operator==(const KinesisDestination&) const = default;
};

// OnDemandThroughput: the most read and write request units of an on-demand table or global
// secondary index, as given (enforced under --enforce-capacity: api/capacity_governor.h).
// 0: not set.
struct OnDemandLimits {
  int64_t max_read_request_units = 0;
  int64_t max_write_request_units = 0;
  bool set() const { return max_read_request_units != 0 || max_write_request_units != 0; }
  bool operator==(const OnDemandLimits&) const = default;
};

struct SecondaryIndex {
  std::string name;
  int64_t id = 0;  // unique within the table, never reused: keys layout::Index(table, id)
  KeySchema key_schema;
  Projection projection;
  Throughput throughput;     // global indexes only
  OnDemandLimits on_demand;  // global indexes only
  WarmThroughput warm;       // global indexes only
  IndexStatus status = IndexStatus::kActive;
  bool backfilling = false;   // global indexes being built
  InsightsSettings insights;  // global indexes only
  bool operator==(const SecondaryIndex&) const = default;
};

// A vector index (SearchVectors): the items' vector attribute, searched by a distance function,
// optionally partitioned by a HASH attribute and filtered by INLINE_FILTER attributes (its
// search schema). Entries and their maintenance: store/vector_index.h.
enum class DistanceFunction : uint8_t { kCosine, kDotProduct, kEuclidean };
enum class SearchRole : uint8_t { kHash, kInlineFilter };

struct SearchSchemaElement {
  AttributeDefinition attribute;  // name and type (from the table's AttributeDefinitions)
  SearchRole role = SearchRole::kInlineFilter;
  bool operator==(const SearchSchemaElement&) const = default;
};

struct VectorIndex {
  std::string name;
  int64_t id = 0;         // shares the table's index id space (next_index_id)
  std::string attribute;  // the vector attribute
  int64_t dimensions = 0;
  DistanceFunction distance = DistanceFunction::kCosine;
  std::vector<SearchSchemaElement> search_schema;  // request order
  Projection projection;
  IndexStatus status = IndexStatus::kActive;
  bool backfilling = false;  // added by UpdateTable and being built
  // The HASH element of the search schema, or null.
  const SearchSchemaElement* Hash() const;
  bool operator==(const VectorIndex&) const = default;
};

enum class BillingMode : uint8_t { kProvisioned, kPayPerRequest };
enum class StreamViewType : uint8_t { kNewImage, kOldImage, kNewAndOldImages, kKeysOnly };
enum class TableClass : uint8_t { kStandard, kStandardInfrequentAccess };

struct StreamSettings {
  bool enabled = false;
  StreamViewType view_type = StreamViewType::kNewAndOldImages;
  // The latest stream's label (ISO 8601 creation time, as DynamoDB's LatestStreamLabel);
  // empty when the table never had a stream. Kept when the stream is disabled.
  std::string label;
  // The latest stream's id in the streams subspace (store/streams.h); 0 when the table never
  // had a stream, or its stream was enabled by a binary that did not record streams.
  int64_t stream_id = 0;
  int slots = 1;  // the latest stream's slots (StreamInfo::slots): where writers put records
  bool operator==(const StreamSettings&) const = default;
};

// DynamoDB's TimeToLiveStatus.
enum class TtlStatus : uint8_t { kDisabled, kEnabling, kEnabled, kDisabling };

struct TtlSettings {
  TtlStatus status = TtlStatus::kDisabled;
  std::string attribute;   // empty when disabled
  int64_t updated_ms = 0;  // the last accepted UpdateTimeToLive (0: never)
  bool operator==(const TtlSettings&) const = default;
};

struct SseSettings {
  bool enabled = false;  // true: KMS (SSEDescription shown); false: AWS-owned key
  std::string kms_master_key_id;
  bool operator==(const SseSettings&) const = default;
};

// Where a restored table came from: DescribeTable's RestoreSummary. The table is CREATING, and
// unusable, while it is being restored (store/backups.h).
struct RestoreSummary {
  std::string source_backup_id;   // the backup restored (store/backups.h)
  std::string source_table_name;  // the table the backup was taken of
  int64_t restore_ms = 0;         // RestoreDateTime
  bool in_progress = false;       // RestoreInProgress
  bool operator==(const RestoreSummary&) const = default;
};

// Point-in-time recovery (store/pitr.h). While enabled, every change of an item also writes an
// undo record to history `epoch` in the change's transaction. Kept, disabled, once it was ever
// enabled, so that the next enable starts a history with a new epoch.
struct PitrSettings {
  bool enabled = false;
  int64_t epoch = 0;           // the history the writes go to; 0: never enabled
  int64_t recovery_days = 35;  // RecoveryPeriodInDays, 1..35
  int64_t since_ms = 0;        // when it was enabled: the earliest restorable time
  bool operator==(const PitrSettings&) const = default;
};

struct Tag {
  std::string key;
  std::string value;
  bool operator==(const Tag&) const = default;
};

// DynamoDB allows two TableClass changes in 30 days: the record keeps the times of as many.
inline constexpr size_t kTableClassChangesKept = 2;

// Where a table lives: names are unique within one (account, region) pair.
struct TableScope {
  std::string_view account;  // the owner: 12 digits
  std::string_view region;   // e.g. "us-east-1"
  bool operator==(const TableScope&) const = default;
};

// Everything the catalog knows about one table.
struct TableInfo {
  std::string account = std::string(kSharedAccount);  // the owner: 12 digits
  std::string region;                                 // where it lives
  std::string name;                                   // unique within (account, region)
  int64_t id = 0;
  std::string uuid;  // DescribeTable's TableId
  int64_t creation_ms = 0;
  TableStatus status = TableStatus::kActive;
  std::vector<AttributeDefinition> attribute_definitions;  // request order
  KeySchema key_schema;
  BillingMode billing_mode = BillingMode::kProvisioned;
  int64_t last_update_to_pay_per_request_ms = 0;  // 0: never on-demand
  Throughput throughput;
  OnDemandLimits on_demand = {};
  WarmThroughput warm;
  std::vector<SecondaryIndex> local_indexes;
  std::vector<SecondaryIndex> global_indexes;
  std::vector<VectorIndex> vector_indexes;
  StreamSettings stream;
  TtlSettings ttl;
  SseSettings sse;
  TableClass table_class = TableClass::kStandard;
  bool table_class_set = false;  // TableClassSummary is shown once a class was given
  // The times of the latest accepted class changes, oldest first, at most
  // kTableClassChangesKept (DynamoDB's quota counts them; the last is LastUpdateDateTime).
  std::vector<int64_t> table_class_changes_ms;
  bool deletion_protection = false;
  int64_t deletion_protection_ms = 0;  // its last change (DynamoDB's cooldown); 0: none
  int64_t next_index_id = 1;
  std::optional<RestoreSummary> restore;  // set on a table created by a restore
  PitrSettings pitr;
  InsightsSettings insights;
  // Kinesis Data Streams destinations, the latest first (api/kinesis_destination_ops.h).
  std::vector<KinesisDestination> kinesis;
  // Whether a resource policy is attached to the table or to one of its streams
  // (store/policies.h): requests read the policies only then.
  bool has_policies = false;
  // The replicas of the global table this table is one of, this one among them, in region
  // order; empty: a regional table (store/replication.h).
  std::vector<Replica> replicas;

  TableScope scope() const { return {account, region}; }
  // Whether the table or one of its global secondary indexes counts its keys' accesses.
  bool CountsKeyAccesses() const;
  // The index named `name` (local or global), or null.
  const SecondaryIndex* FindIndex(std::string_view name) const;
  // The vector index named `name`, or null.
  const VectorIndex* FindVectorIndex(std::string_view name) const;
  // The replica in `region`, or null (a regional table has none).
  const Replica* FindReplica(std::string_view region) const;
  bool operator==(const TableInfo&) const = default;
};

// The stored form of a table record (docs/format/catalog.md): version byte, then JSON. A table
// with vector indexes is written as version 3, which binaries without vector indexes reject
// (fail closed) instead of writing items without maintaining the index.
// Decoding fails closed (InternalServerError) on an unknown version or malformed record.
std::string EncodeTableInfo(const TableInfo& info);
Result<TableInfo> DecodeTableInfo(std::string_view bytes);
std::string EncodeTags(const std::vector<Tag>& tags);
Result<std::vector<Tag>> DecodeTags(std::string_view bytes);

struct TableNamePage {
  std::vector<std::string> names;
  bool more = false;  // names exist after the last one returned
};

// A table's name with its account and region: what the catalog keys a table by.
struct QualifiedName {
  std::string account;
  std::string region;
  std::string name;
  TableScope scope() const { return {account, region}; }
  bool operator==(const QualifiedName&) const = default;
};

struct QualifiedNamePage {
  std::vector<QualifiedName> names;  // in (account, region, name) order
  bool more = false;
};

// A new table's uuid (DescribeTable's TableId), for a create request to choose before its
// first attempt (see Catalog::FindCreated).
std::string NewTableUuid();

struct CatalogOptions {
  // Keys cleared per transaction when a dropped table's data is removed.
  int purge_batch_keys = 256;
};

class Catalog {
 public:
  // Catalog format versions (the format key's value; persisted): 1 tables keyed by name (no
  // format key was written), 2 by (account, name), 3 by (account, region, name), this binary's.
  static constexpr int kFormatAccounts = 2;
  static constexpr int kFormatRegions = 3;
  static constexpr int kFormat = kFormatRegions;

  explicit Catalog(Clock* clock = Clock::Real(), CatalogOptions options = {});

  // The first step of store::MigrateFormat (store/regions_migration.h), which runs at start-up
  // before anything else uses the catalog: a catalog written before accounts has its tables
  // moved, record bytes unchanged, to kSharedAccount, at most `batch` per transaction
  // (resumable after a crash; idempotent), then is in format 2. Never overwrites: a legacy name
  // that kSharedAccount already has fails (InternalServerError) with both left in place, as does
  // a catalog format newer than this binary's. Returns the number of tables moved.
  static Result<int> Migrate(kv::Database& db, int batch = 100);
  // The catalog format version of `txn`'s snapshot (1 when never written); InternalServerError
  // when it is newer than this binary's.
  static Result<int> ReadFormat(kv::Transaction& txn);
  // Records that the catalog is in format `version`.
  static void WriteFormat(kv::Transaction& txn, int version);

  // The table `name` in `scope` as of `txn`'s snapshot, or null when there is none. Adds a
  // read conflict on the metadata version key (see the header comment).
  Result<std::shared_ptr<const TableInfo>> Find(kv::Transaction& txn, TableScope scope,
                                                std::string_view name);

  // Creates `info` in info.scope() (id, uuid and creation time are assigned here,
  // next_index_id and index ids too) with `tags`. `uuid`: the one the request chose with
  // NewTableUuid (empty: a new one; info.uuid is never kept, a restored plan carries its
  // source's). ResourceInUseException "Table already exists: <name>" when the scope has the
  // name. Returns what was stored.
  Result<std::shared_ptr<const TableInfo>> Create(kv::Transaction& txn, TableInfo info,
                                                  const std::vector<Tag>& tags,
                                                  std::string_view uuid = {});
  // The table `name` in `scope` when it is the one created with `uuid`, else null. A create
  // request chooses its uuid once, before its first attempt; after an ambiguous commit its retry
  // finds here the table its earlier attempt made, instead of "Table already exists".
  Result<std::shared_ptr<const TableInfo>> FindCreated(kv::Transaction& txn, TableScope scope,
                                                       std::string_view name,
                                                       std::string_view uuid);
  // Replaces the record of an existing table (same account, region, name and id).
  Status Update(kv::Transaction& txn, const TableInfo& info);
  // Removes the table from the catalog, with its tags, and records its id as pending purge;
  // its data is removed afterwards by PurgeDropped. The name is free once this commits.
  // `hold`: the purge waits until ReleaseDropped (a backup is still to read the data).
  Status Drop(kv::Transaction& txn, const TableInfo& info, bool hold = false);
  // Lets PurgeDropped remove the data of dropped table `table_id` that Drop held.
  static void ReleaseDropped(kv::Transaction& txn, int64_t table_id);

  // The table names in `scope` in order after `exclusive_start` (all when empty), at most
  // `limit`.
  Result<TableNamePage> List(kv::Transaction& txn, TableScope scope,
                             std::string_view exclusive_start, int limit);
  // Every account's tables in (account, region, name) order after `after` (from the first when
  // null), at most `limit`: for the background workers, which serve every table.
  Result<QualifiedNamePage> ListAll(kv::Transaction& txn, const QualifiedName* after, int limit);

  // Tags of table `table_id` in key order.
  Result<std::vector<Tag>> GetTags(kv::Transaction& txn, int64_t table_id);
  Status SetTags(kv::Transaction& txn, int64_t table_id, const std::vector<Tag>& tags);

  // Removes the data of every dropped table, in transactions of at most
  // options.purge_batch_keys keys each, then forgets the pending purge. Resumes after a crash.
  // Several processes: each table's purge is leased (store/leases.h, unit ("purge", table
  // id)): every transaction takes or renews the lease first, a table another owner holds is
  // left to it, and the last transaction releases the lease. Returns the number of tables
  // whose purge completed here. `stop` (may be null): once it reads true, returns after the
  // current transaction; the rest resumes at a later call (the table's lease lapses meanwhile).
  Result<int> PurgeDropped(kv::Database& db, const LeaseOptions& lease = {},
                           const std::atomic<bool>* stop = nullptr);
  // The key of the lease on the purge of dropped table `table_id`.
  static std::string PurgeLeaseKey(int64_t table_id);

  // Names (present or absent) cached at the current metadata version (exposed for tests).
  size_t CachedNames();

  // The record keys (exposed for tests and tools).
  static std::string TableKey(TableScope scope, std::string_view name);
  // Where catalog format 1 (before accounts) kept the record of table `name`, and format 2
  // (before regions) that of `account`'s; only Migrate and the tests that write such a catalog
  // use them.
  static std::string LegacyTableKey(std::string_view name);
  static std::string AccountTableKey(std::string_view account, std::string_view name);
  // The subspace of format 2's records, keyed (account, name).
  static kv::Subspace AccountTables();
  // The region that tables, backups, jobs and streams written before regions belong to.
  static std::string LegacyRegionKey();
  static std::string FormatKey();
  static std::string TagsKey(int64_t table_id);
  // The resource policy of table `table_id` (slot empty) or of its stream labelled `slot`
  // (store/policies.h). Drop removes every slot of the table.
  static std::string PolicyKey(int64_t table_id, std::string_view slot);
  static std::string PendingPurgeKey(int64_t table_id);
  // Present while the purge of dropped table `table_id` is held (Drop's `hold`).
  static std::string PurgeHoldKey(int64_t table_id);
  static std::string NextTableIdKey();

 private:
  // A snapshot of what this process knows at one metadata version.
  struct Cache {
    uint64_t version = 0;
    // By CacheKey(scope, name); null: absent.
    std::map<std::string, std::shared_ptr<const TableInfo>, std::less<>> tables;
    size_t absent = 0;  // null entries in `tables`, at most kMaxCachedAbsentNames
  };
  static constexpr size_t kMaxCachedAbsentNames = 256;

  Result<uint64_t> ReadVersion(kv::Transaction& txn);
  void BumpVersion(kv::Transaction& txn);
  // One purge transaction; nullopt when another owner holds the table's lease.
  Result<std::optional<bool>> PurgeOne(kv::Database& db, int64_t table_id,
                                       const LeaseOptions& lease);

  Clock* clock_;
  CatalogOptions options_;
  std::mutex mu_;
  std::shared_ptr<Cache> cache_;  // guarded by mu_
};

}  // namespace fdyno::store
