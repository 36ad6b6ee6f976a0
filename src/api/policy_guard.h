// Resource-based policies enforced (with --credentials): before an operation runs, the policies
// of the tables it addresses decide whether the caller may run it.
//
// The tables a request addresses: its TableName (a name, or an ARN that may name another
// account's table), the tables of BatchGetItem's and BatchWriteItem's RequestItems, of
// TransactWriteItems' and TransactGetItems' actions, and the ResourceArn of the tag operations.
// The resource is the table's ARN, or its index's (".../index/<name>") for a read through an
// index. For each one whose table has a policy (store::TableInfo::has_policies), the policy is
// evaluated for the caller (arn:aws:iam::<account>:root) and the action dynamodb:<Operation>
// (api/policy_document.h): an explicit Deny refuses the request, whoever the caller is (the
// owner too). A table of another account is reachable only through its ARN and only when its
// policy allows the action (and none denies it); the operation then runs in the owner's account.
// The condition keys a request carries: aws:PrincipalAccount, aws:PrincipalArn, and
// dynamodb:LeadingKeys and dynamodb:Attributes where fdyno can tell them (LeadingKeys: the
// partition key values of GetItem, PutItem, UpdateItem, DeleteItem and the batch and
// transaction items; Attributes: the attributes of PutItem's item and those GetItem reads);
// elsewhere they are unknown and fail closed.
//
// Refusals are AccessDeniedException with DynamoDB's messages. Without --credentials there is
// one account and policies are stored and validated but not enforced.
//
// Thread-safety: the guarded handlers are thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "api/operation.h"
#include "api/policy_document.h"
#include "api/services.h"

namespace fdyno::api {

// The caller of `ctx` asking for dynamodb:<operation> on `resource`, with the condition keys
// every request carries.
AccessRequest CallerAccess(const RequestContext& ctx, std::string_view operation,
                           std::string resource);

// `inner` (the handler of `operation`) behind the policies of the tables it addresses.
Handler GuardHandler(const Services& services, std::string operation, Handler inner);
// The same for an operation's asynchronous form (the check itself runs on the calling thread).
AsyncHandler GuardAsyncHandler(const Services& services, std::string operation, AsyncHandler inner);

// Without policy enforcement (open mode): `inner` with the tables the request names by the ARN of
// the caller's own table in its region named by name, as DynamoDB takes a table's ARN wherever it
// takes its name (the guard does the same for the tables it admits).
Handler OwnTableArnsHandler(Handler inner);
AsyncHandler OwnTableArnsAsyncHandler(AsyncHandler inner);

}  // namespace fdyno::api
