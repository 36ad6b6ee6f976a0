// Resource-based policies: PutResourcePolicy, GetResourcePolicy, DeleteResourcePolicy on a
// table or its latest stream (each its own policy, store/policies.h), and CreateTable's
// ResourcePolicy.
//
// DynamoDB's rules: the document is validated and kept in canonical form (api/policy_document.h);
// the RevisionId is the time of the change in milliseconds; a Put of a document equivalent to
// the current one changes nothing and answers its RevisionId; ExpectedRevisionId must be the
// current one (NO_POLICY: there must be none), else PolicyNotFoundException; after a change,
// another one within Services::policy_update_interval_ms (DynamoDB's 15 seconds) is a
// ThrottlingException naming when to try again; a Put whose document would deny the caller
// PutResourcePolicy needs ConfirmRemoveSelfResourceAccess; DeleteResourcePolicy of a table that
// never had a policy answers an empty body, after a delete the deletion's RevisionId. Only the
// table's own account may call them. Where policies are enforced: api/policy_guard.h.
//
// Thread-safety: the handlers are thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "api/operation.h"
#include "api/policy_document.h"
#include "api/services.h"
#include "base/result.h"
#include "kv/kv.h"
#include "store/catalog.h"

namespace fdyno::api {

void RegisterPolicyOperations(OperationRegistry& registry, const Services& services);

// Writes CreateTable's ResourcePolicy (validated by ParsePolicy for a table) as the policy of
// the table `table_id` being created, whose record must then say has_policies.
void WriteTablePolicy(kv::Transaction& txn, int64_t table_id, const PolicyDocument& doc,
                      int64_t now_ms);

}  // namespace fdyno::api
