#include "api/table_arn.h"

#include <algorithm>
#include <iterator>
#include <vector>

#include "api/json_util.h"
#include "base/regions.h"

namespace fdyno::api {
namespace {

Error Invalid(const std::string& detail) {
  return Error::Validation("One or more parameter values were invalid: " + detail);
}

}  // namespace

std::string TableArn(const RequestContext& ctx, std::string_view table) {
  return TableArn(ctx.region, ctx.account_id, table);
}

std::string TableArn(std::string_view region, std::string_view account, std::string_view table) {
  return "arn:aws:dynamodb:" + std::string(region) + ":" + std::string(account) + ":table/" +
         std::string(table);
}

std::string BackupArn(const RequestContext& ctx, std::string_view table,
                      std::string_view backup_id) {
  return TableArn(ctx, table) + "/backup/" + std::string(backup_id);
}

Error NotAuthorized(const RequestContext& ctx, std::string_view operation, std::string_view arn,
                    std::string_view why) {
  return Error::Make(ErrorType::kAccessDenied,
                     "User: arn:aws:iam::" + ctx.account_id +
                         ":root is not authorized to perform: dynamodb:" + std::string(operation) +
                         " on resource: " + std::string(arn) +
                         (why.empty() ? "" : " " + std::string(why)));
}

std::string NoPolicyAllows(std::string_view operation) {
  return "because no resource-based policy allows the dynamodb:" + std::string(operation) +
         " action";
}

std::optional<std::array<std::string, 6>> SplitArn(std::string_view arn) {
  std::array<std::string, 6> parts;
  size_t pos = 0;
  for (size_t i = 0; i < 5; ++i) {
    const size_t colon = arn.find(':', pos);
    if (colon == std::string_view::npos) return std::nullopt;
    parts[i] = std::string(arn.substr(pos, colon - pos));
    pos = colon + 1;
  }
  parts[5] = std::string(arn.substr(pos));
  return parts;
}

bool IsKnownRegion(const RequestContext& ctx, std::string_view region) {
  return region == ctx.region || IsAwsRegion(region);
}

bool IsDynamoDbResourceArn(std::string_view service, std::string_view resource) {
  return service == "dynamodb" && resource.starts_with("table/") &&
         resource.find("/backup/") == std::string_view::npos;
}

Result<ArnTarget> ParseTableArn(const RequestContext& ctx, std::string_view arn,
                                std::string_view operation) {
  std::string a(arn);
  if (a.rfind("arn:", 0) != 0) return Invalid("ARNs must start with 'arn:': " + a);
  const std::optional<std::array<std::string, 6>> split = SplitArn(a);
  if (!split)
    return Error::Validation("Invalid TableArn: Invalid ResourceArn provided as input " + a);
  const std::array<std::string, 6>& parts = *split;
  // parts: arn, partition, service, region, account, resource
  const std::string& resource = parts[5];
  if (!IsDynamoDbResourceArn(parts[2], resource)) {
    return Invalid("Provided Arn is not a DynamoDB resource arn: " + a);
  }
  if (resource.size() <= 6 || resource.find('/', 6) != std::string::npos) {
    return Invalid(
        "Invalid resource arn provided, only table or stream is accepted. Provided "
        "resource arn: " +
        a);
  }
  if (parts[1] != "aws" || parts[3] != ctx.region) {
    return Error::Validation("Invalid TableArn: Invalid ResourceArn provided as input " + a);
  }
  if (parts[4] != ctx.account_id)
    return NotAuthorized(ctx, operation, a, NoPolicyAllows(operation));
  return ArnTarget{a, resource.substr(6)};
}

Result<std::string> ResolveTableName(const RequestContext& ctx,
                                     std::optional<std::string_view> name_or_arn,
                                     std::string_view operation) {
  if (name_or_arn && name_or_arn->rfind("arn:", 0) == 0) {
    ConstraintErrors e;
    e.MaxLength("tableName", *name_or_arn, 1024);
    FDYNO_RETURN_IF_ERROR(e.ToStatus());
    const std::optional<std::array<std::string, 6>> parts = SplitArn(*name_or_arn);
    const std::string quoted = "'" + std::string(*name_or_arn) + "'";
    if (parts && (*parts)[1] != "aws") {
      return Error::EnvelopedValidation("Invalid AWS partition in " + quoted);
    }
    if (parts && (*parts)[3] != ctx.region) {
      return Error::EnvelopedValidation("Invalid AWS region in " + quoted);
    }
    FDYNO_ASSIGN_OR_RETURN(ArnTarget target, ParseTableArn(ctx, *name_or_arn, operation));
    return target.table;
  }
  FDYNO_RETURN_IF_ERROR(ValidateControlPlaneTableName(name_or_arn));
  return std::string(*name_or_arn);
}

Error TableNotFound(std::string_view name) {
  return Error::ResourceNotFound("Requested resource not found: Table: " + std::string(name) +
                                 " not found");
}

bool Settled(const std::shared_ptr<const store::TableInfo>& t) {
  return t != nullptr && t->status != store::TableStatus::kCreating;
}

Result<std::string> ReadExistingTableName(const RequestContext& ctx, const rapidjson::Value& body,
                                          std::string_view operation) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> name, GetString(body, "TableName"));
  return ResolveTableName(ctx, name, operation);
}

}  // namespace fdyno::api
