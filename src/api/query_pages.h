// The page machinery of Query and Scan (query_ops.cc), shared with PartiQL's SELECT
// (partiql_ops.cc) so both read tables and indexes, bound pages and resume them the same way.
//
// A page is read inside the caller's read-only transaction: ReadRange reads [begin, end) of the
// table's or index's entries in key order (or reverse), filters and renders each item, and
// stops after `limit` items read, or once 1 MB was read (before filtering, as DynamoDB), or
// when it ran for the page time budget; it then records the key to resume after.
//
// Thread-safety: pure functions over a transaction used by one thread.
#pragma once

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "api/capacity.h"
#include "api/operation.h"
#include "api/query_ops.h"
#include "base/clock.h"
#include "base/result.h"
#include "expr/ast.h"
#include "expr/key_condition.h"
#include "kv/kv.h"
#include "kv/run.h"
#include "kv/tuple.h"
#include "model/attribute_value.h"
#include "store/catalog.h"

namespace fdyno::api {

// What a page reads: a table, or one of its indexes.
struct PageTarget {
  std::shared_ptr<const store::TableInfo> table;
  const store::SecondaryIndex* index = nullptr;  // points into *table
  bool global = false;
  kv::Subspace subspace;  // the entries read: the table's items or the index's entries
};

// The target reading `index` of `table` (null: the table itself).
PageTarget MakePageTarget(std::shared_ptr<const store::TableInfo> table,
                          const store::SecondaryIndex* index);

// How a page treats the entries it reads.
struct PageSpec {
  int64_t limit = 0;  // items read (before the filter) after which the page ends; 0: none
  bool forward = true;
  bool count_only = false;  // Select COUNT: no items rendered
  // Reading a local index whose projection lacks what the page returns: the base item of each
  // entry is read too, filtered and rendered instead of the entry.
  bool fetch_base = false;
  const expr::Condition* filter = nullptr;
  const expr::Projection* projection = nullptr;
  // When set, the item rendered for each returned item (instead of `projection`).
  std::function<model::Item(const model::Item&)> output;
  // The wall time (ms since the epoch) against which items' TTL is checked: expired items are
  // hidden when the table's TTL is enabled.
  int64_t now_ms = 0;
  // Contributor Insights: keep the key of every item read (PageOutput::read_keys).
  bool keep_read_keys = false;
};

struct PageOutput {
  // The returned items (after filter and projection; none for COUNT) as JSON objects joined
  // by commas: the elements of the response's Items array.
  rapidjson::StringBuffer items{nullptr, 16 << 10};
  int64_t count = 0;
  int64_t scanned = 0;
  uint64_t bytes = 0;       // everything read (entries and base items)
  uint64_t base_bytes = 0;  // of which base items read for fetch_base
  // The base items' read units at one unit per 4 KB, each item rounded up on its own (each is
  // a separate read of the table).
  uint64_t base_read_units = 0;
  std::optional<model::Item> last_key;  // set when the page ended before the range did
  std::string index_name;               // the index read (empty: the table)
  bool index_is_global = false;
  std::vector<model::Item> read_keys;  // PageSpec::keep_read_keys: each item's (PageKeyOf)
};

// Adds to `c` the read units of a page, by DynamoDB's documented rules: the entries read (the
// filtered-out ones too, whatever the projection or Select COUNT) are summed and rounded up to
// 4 KB, one unit at least, and charged to the index read, or to the table; the base items a
// local index read fetched are charged to the table, each rounded up to 4 KB on its own.
// Eventually consistent reads cost half.
void AddPageReadUnits(const PageOutput& page, bool consistent_read, ConsumedCapacity& c);

// The network-thread try of a page: it reads at most `bytes` there, and marks `exceeded` when
// the page needs more (the page is then read on a worker).
struct InlineBound {
  uint64_t bytes = 0;
  bool exceeded = false;
};

// The options of a page's read-only kv::Run: the request's deadline, and with `bound` (the
// network-thread try) one attempt only, as a retry's backoff must not sleep there.
kv::RunOptions PageRunOptions(const RequestContext& ctx, Clock* clock, const InlineBound* bound);

// Reads [begin, end) in spec.forward's direction into `page`. With `bound`: gives up (an error
// never sent to a client) once more than bound->bytes were read.
Status ReadRange(const QueryOptions& options, kv::Transaction& tx, const PageSpec& spec,
                 const PageTarget& t, std::string begin, std::string end, PageOutput& page,
                 InlineBound* bound);

// [begin, end) of the entries a Query's key condition selects.
Result<std::pair<std::string, std::string>> QueryRange(const PageTarget& t,
                                                       const expr::KeyCondition& kc);

// An ExclusiveStartKey: exactly the table's key attributes (and the index's) with their types.
// `is_query`: DynamoDB words a wrong number of attributes differently for Query and Scan.
Status ValidateStartKey(const store::TableInfo& table, const store::SecondaryIndex* index,
                        const model::Item& esk, bool is_query);
// A Query without a sort key condition: the start key must lie in the queried partition.
Status CheckStartKeyInPartition(const PageTarget& t, const expr::KeyCondition& kc,
                                const model::Item& esk);
// A Query with a sort key condition, whose range is [begin, end): the start key, stored at
// `start`, must lie inside it with room left in the reading direction.
// `op` is the sort key condition's: a start key on an inclusive bound is allowed.
Status CheckStartKeyInRange(const std::string& begin, const std::string& end,
                            const std::string& start, bool forward, expr::KeyRange::Op op);
// The kv key of the entry a start key names.
std::string StartKeyEntry(const PageTarget& t, const model::Item& esk);
// The key a page resumes after (LastEvaluatedKey) for an entry read.
model::Item PageKeyOf(const PageTarget& t, const model::Item& item);

}  // namespace fdyno::api
