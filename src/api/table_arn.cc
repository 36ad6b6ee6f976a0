#include "api/table_arn.h"

#include <vector>

#include "api/json_util.h"

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

Result<ArnTarget> ParseTableArn(const RequestContext& ctx, std::string_view arn,
                                std::string_view operation) {
  std::string a(arn);
  if (a.rfind("arn:", 0) != 0) return Invalid("ARNs must start with 'arn:': " + a);
  std::vector<std::string> parts;
  size_t pos = 0;
  for (int i = 0; i < 5; ++i) {
    size_t colon = a.find(':', pos);
    if (colon == std::string::npos) {
      return Error::Validation("Invalid TableArn: Invalid ResourceArn provided as input " + a);
    }
    parts.push_back(a.substr(pos, colon - pos));
    pos = colon + 1;
  }
  parts.push_back(a.substr(pos));
  // parts: arn, partition, service, region, account, resource
  if (parts[2] != "dynamodb") {
    return Invalid("Provided Arn is not a DynamoDB resource arn: " + a);
  }
  const std::string& resource = parts[5];
  if (resource.rfind("table/", 0) != 0 || resource.size() <= 6 ||
      resource.find('/', 6) != std::string::npos) {
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

Result<std::string> ReadExistingTableName(const RequestContext& ctx, const rapidjson::Value& body,
                                          std::string_view operation) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> name, GetString(body, "TableName"));
  return ResolveTableName(ctx, name, operation);
}

}  // namespace fdyno::api
