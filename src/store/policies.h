// Resource policies (PutResourcePolicy) of tables and their streams, stored in the catalog
// subspace at Catalog::PolicyKey(table id, slot): slot "" is the table's policy, a stream's
// label its stream's. The record (docs/format/policies.md): version byte 1, then JSON
// {"document": the canonical policy text (api/policy_document.h), "version_given": whether the
// caller wrote Version (a document without it reads back with 2008-10-17 but is another
// document for the no-op rule), "revision_ms": the RevisionId (the change's time, ms),
// "deleted": whether this is what a DeleteResourcePolicy left (its revision is the deletion's)}.
// Decoding fails closed on an unknown version or a malformed record.
//
// Thread-safety: pure functions over a transaction.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "kv/kv.h"

namespace fdyno::store {

struct PolicyRecord {
  std::string document;
  bool version_given = true;
  int64_t revision_ms = 0;
  bool deleted = false;
  bool operator==(const PolicyRecord&) const = default;
};

std::string EncodePolicy(const PolicyRecord& record);
Result<PolicyRecord> DecodePolicy(std::string_view bytes);

// The record of `slot` of table `table_id`, or nullopt when none was ever written.
Result<std::optional<PolicyRecord>> ReadPolicy(kv::Transaction& txn, int64_t table_id,
                                               std::string_view slot);
void WritePolicy(kv::Transaction& txn, int64_t table_id, std::string_view slot,
                 const PolicyRecord& record);

}  // namespace fdyno::store
