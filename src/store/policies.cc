#include "store/policies.h"

#include "store/catalog.h"
#include "store/record_codec.h"

namespace fdyno::store {
namespace {

// Persisted (docs/format/policies.md): never renumber.
constexpr uint8_t kPolicyRecordVersion = 1;

// The persisted fields, in the order they are written (record_codec.h).
template <typename Fields, typename Record>
void PolicyFields(Fields& f, Record& r) {
  f.Str("document", r.document);
  f.Bool("version_given", r.version_given);
  f.Int("revision_ms", r.revision_ms);
  f.Bool("deleted", r.deleted);
}

}  // namespace

std::string EncodePolicy(const PolicyRecord& r) {
  RecordWriter w;
  PolicyFields(w, r);
  return w.Finish(kPolicyRecordVersion);
}

Result<PolicyRecord> DecodePolicy(std::string_view bytes) {
  RecordReader r(bytes, kPolicyRecordVersion);
  PolicyRecord record;
  PolicyFields(r, record);
  if (!r.ok()) return CorruptRecord("resource policy");
  return record;
}

Result<std::optional<PolicyRecord>> ReadPolicy(kv::Transaction& txn, int64_t table_id,
                                               std::string_view slot) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> bytes,
                         txn.Get(Catalog::PolicyKey(table_id, slot)));
  if (!bytes) return std::optional<PolicyRecord>();
  FDYNO_ASSIGN_OR_RETURN(PolicyRecord record, DecodePolicy(*bytes));
  return std::optional<PolicyRecord>(std::move(record));
}

void WritePolicy(kv::Transaction& txn, int64_t table_id, std::string_view slot,
                 const PolicyRecord& record) {
  txn.Set(Catalog::PolicyKey(table_id, slot), EncodePolicy(record));
}

}  // namespace fdyno::store
