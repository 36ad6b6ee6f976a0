#include "store/vector_journal.h"

#include <unordered_set>

#include "kv/tuple.h"
#include "store/layout.h"

namespace fdyno::store {
namespace {

// Second element under the journal's subspace. Persisted: never renumber.
constexpr int64_t kMarker = 0;
constexpr int64_t kRecords = 1;

kv::Versionstamp StampOfVersion(int64_t version) {
  std::string commit(10, '\0');
  for (int i = 0; i < 8; ++i) {
    commit[i] = static_cast<char>((static_cast<uint64_t>(version) >> (56 - 8 * i)) & 0xFF);
  }
  return kv::Versionstamp::Complete(commit);
}

// The first key a record of commit version > `version` can have.
std::string RecordsAfter(int64_t table_id, int64_t index_id, int64_t version) {
  return layout::VectorJournal(table_id, index_id)
      .Pack(kv::Tuple().AddInt(kRecords).AddVersionstamp(StampOfVersion(version + 1)));
}

std::string RecordsEnd(int64_t table_id, int64_t index_id) {
  return layout::VectorJournal(table_id, index_id).Range(kv::Tuple{kRecords}).second;
}

std::string MarkerKey(int64_t table_id, int64_t index_id) {
  return layout::VectorJournal(table_id, index_id).Pack(kv::Tuple{kMarker});
}

struct Record {
  int64_t version = 0;
  std::string suffix;  // the entry key after the index's prefix
};

Result<Record> ParseRecord(int64_t table_id, int64_t index_id, std::string_view key) {
  FDYNO_ASSIGN_OR_RETURN(kv::Tuple t, layout::VectorJournal(table_id, index_id).Unpack(key));
  FDYNO_ASSIGN_OR_RETURN(int64_t kind, t.GetInt(0));
  if (kind != kRecords || t.size() != 3) return Error::Internal("malformed vector journal key");
  FDYNO_ASSIGN_OR_RETURN(kv::Versionstamp vs, t.GetVersionstamp(1));
  FDYNO_ASSIGN_OR_RETURN(std::string suffix, t.GetBytes(2));
  return Record{vs.commit_version(), std::move(suffix)};
}

}  // namespace

void JournalVectorEntryChange(kv::Transaction& tx, const TableInfo& table, const VectorIndex& index,
                              std::string_view entry_key) {
  const std::string prefix = layout::VectorIndex(table.id, index.id).key();
  kv::Tuple t;
  t.AddInt(kRecords)
      .AddVersionstamp(kv::Versionstamp::Incomplete())
      .AddBytes(entry_key.substr(prefix.size()));
  // Cannot fail: the tuple holds exactly one incomplete versionstamp.
  Result<std::string> key = layout::VectorJournal(table.id, index.id).PackWithVersionstamp(t);
  tx.AtomicOp(kv::MutationType::kSetVersionstampedKey, *key, "");
}

Result<VectorJournalPage> ReadVectorJournal(kv::Transaction& tx, int64_t table_id, int64_t index_id,
                                            int64_t after, int limit) {
  kv::RangeOptions ro;
  ro.limit = limit;
  ro.snapshot = true;
  FDYNO_ASSIGN_OR_RETURN(kv::RangeResult page, tx.GetRange(RecordsAfter(table_id, index_id, after),
                                                           RecordsEnd(table_id, index_id), ro));
  const std::string prefix = layout::VectorIndex(table_id, index_id).key();
  VectorJournalPage out;
  std::unordered_set<std::string> seen;
  int64_t last = after;
  for (const kv::KeyValue& kv : page.kvs) {
    FDYNO_ASSIGN_OR_RETURN(Record r, ParseRecord(table_id, index_id, kv.key));
    last = r.version;
    std::string entry_key = prefix + r.suffix;
    if (seen.insert(entry_key).second) out.entry_keys.push_back(std::move(entry_key));
  }
  out.complete = !page.more;
  if (out.complete) {
    FDYNO_ASSIGN_OR_RETURN(out.through, tx.GetReadVersion());
  } else {
    out.through = std::max(after, last - 1);
  }
  return out;
}

Result<int64_t> ReadVectorJournalTrimMarker(kv::Transaction& tx, int64_t table_id,
                                            int64_t index_id) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> v,
                         tx.Get(MarkerKey(table_id, index_id), /*snapshot=*/true));
  if (!v) return int64_t{0};
  std::optional<int64_t> version = kv::DecodeCounter(*v);
  if (!version) return Error::Internal("malformed vector journal trim marker");
  return *version;
}

Result<bool> TrimVectorJournal(kv::Transaction& tx, int64_t table_id, int64_t index_id,
                               int64_t cutoff) {
  const std::string begin = RecordsAfter(table_id, index_id, 0);
  const std::string end = RecordsAfter(table_id, index_id, cutoff);
  kv::RangeOptions ro;
  ro.limit = 1;
  ro.reverse = true;
  FDYNO_ASSIGN_OR_RETURN(kv::RangeResult newest, tx.GetRange(begin, end, ro));
  if (newest.kvs.empty()) return false;
  FDYNO_ASSIGN_OR_RETURN(Record r, ParseRecord(table_id, index_id, newest.kvs.front().key));
  // A conflicting read: two trims of one journal never both move the marker from one value.
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> old, tx.Get(MarkerKey(table_id, index_id)));
  int64_t marker = r.version;
  if (old) {
    std::optional<int64_t> v = kv::DecodeCounter(*old);
    if (!v) return Error::Internal("malformed vector journal trim marker");
    marker = std::max(marker, *v);
  }
  tx.ClearRange(begin, end);
  tx.Set(MarkerKey(table_id, index_id), kv::EncodeCounter(marker));
  return true;
}

Result<std::vector<int64_t>> VectorJournalIndexIds(kv::Transaction& tx, int64_t table_id) {
  const kv::Subspace part = layout::TablePartSubspace(table_id, layout::TablePart::kVectorJournal);
  auto [from, end] = part.Range();
  std::vector<int64_t> out;
  kv::RangeOptions ro;
  ro.limit = 1;
  ro.snapshot = true;
  while (from < end) {
    FDYNO_ASSIGN_OR_RETURN(kv::RangeResult page, tx.GetRange(from, end, ro));
    if (page.kvs.empty()) break;
    FDYNO_ASSIGN_OR_RETURN(kv::Tuple t, part.Unpack(page.kvs.front().key));
    FDYNO_ASSIGN_OR_RETURN(int64_t id, t.GetInt(0));
    out.push_back(id);
    from = layout::VectorJournal(table_id, id).Range().second;
  }
  return out;
}

void ClearVectorJournal(kv::Transaction& tx, int64_t table_id, int64_t index_id) {
  const kv::Subspace s = layout::VectorJournal(table_id, index_id);
  tx.ClearRange(s.key(), s.Range().second);
}

}  // namespace fdyno::store
