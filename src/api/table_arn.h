// Table ARNs: rendering arn:aws:dynamodb:<region>:<account>:table/<name> for the caller, and
// accepting an ARN wherever DynamoDB lets an existing table be named by one.
#pragma once

#include <rapidjson/document.h>

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "api/operation.h"
#include "base/result.h"
#include "store/catalog.h"

namespace fdyno::api {

// Where the caller's tables live: its account in the region its request is signed for.
inline store::TableScope CallerScope(const RequestContext& ctx) {
  return {ctx.account_id, ctx.region};
}

// arn:aws:dynamodb:<region>:<account>:table/<table> for the caller.
std::string TableArn(const RequestContext& ctx, std::string_view table);
// The same for a table of `account` in `region`.
std::string TableArn(std::string_view region, std::string_view account, std::string_view table);

// arn:aws:dynamodb:<region>:<account>:table/<table>/backup/<backup id> for the caller.
std::string BackupArn(const RequestContext& ctx, std::string_view table,
                      std::string_view backup_id);

// AccessDeniedException "User: arn:aws:iam::<caller>:root is not authorized to perform:
// dynamodb:<operation> on resource: <arn>", then " " and `why` when not empty ("because no
// resource-based policy allows the dynamodb:<operation> action", "with an explicit deny in a
// resource-based policy").
Error NotAuthorized(const RequestContext& ctx, std::string_view operation, std::string_view arn,
                    std::string_view why = {});
// NotAuthorized's reason for a table of another account whose policy does not allow the action.
std::string NoPolicyAllows(std::string_view operation);

// The six parts of an ARN: "arn", partition, service, region, account, resource (which may hold
// colons); nullopt when it has fewer.
std::optional<std::array<std::string, 6>> SplitArn(std::string_view arn);
// Whether `region` is a region of AWS's commercial partition or the caller's own region.
bool IsKnownRegion(const RequestContext& ctx, std::string_view region);

// Whether an ARN's service and resource name a DynamoDB resource at all: a table or something
// of a table (table/<t>[/...]) but not a backup (table/<t>/backup/<id>). The others are
// "Provided Arn is not a DynamoDB resource arn: <arn>" to the tag and policy operations.
bool IsDynamoDbResourceArn(std::string_view service, std::string_view resource);

struct ArnTarget {
  std::string arn;
  std::string table;
};

// Parses a resource ARN the tag operations accept: arn:aws:dynamodb:<region>:<account>:table/<t>
// in the caller's region and account (another account's ARN is AccessDeniedException). A
// backup's ARN is not a DynamoDB resource ARN to them; an index's is "only table or stream".
Result<ArnTarget> ParseTableArn(const RequestContext& ctx, std::string_view arn,
                                std::string_view operation);

// A table name or ARN naming an existing table (not for CreateTable), validated. An ARN of
// another partition or region is DynamoDB's enveloped "Invalid AWS partition in '<arn>'" /
// "Invalid AWS region in '<arn>'"; other malformed ARNs get ParseTableArn's errors.
Result<std::string> ResolveTableName(const RequestContext& ctx,
                                     std::optional<std::string_view> name_or_arn,
                                     std::string_view operation);

// ResourceNotFoundException "Requested resource not found: Table: <name> not found".
Error TableNotFound(std::string_view name);
// Whether the operations on a table's settings (UpdateTable, tags, TTL, backups, point-in-time
// recovery, policies, Contributor Insights, Kinesis destinations) find table `t`: not when it is
// null or being created (a restore's or an import's target is CREATING until it holds every item).
// As in DynamoDB, they answer not found for it, while DescribeTable shows it and DeleteTable
// refuses it as in use.
bool Settled(const std::shared_ptr<const store::TableInfo>& t);

// The TableName member of an operation on an existing table: a name or an ARN.
Result<std::string> ReadExistingTableName(const RequestContext& ctx, const rapidjson::Value& body,
                                          std::string_view operation);

}  // namespace fdyno::api
