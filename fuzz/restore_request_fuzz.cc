// libFuzzer target for the requests of on-demand backups (api/backup_ops.cc,
// api/restore_request.h): RestoreTableFromBackup up to its transaction (ParseRestoreRequest, the
// override constraints, the backup ARN), then PlanRestoredTable against a fixed backed-up table
// (a sort key, a local and a global index, provisioned); ListBackups' request
// (ParseListBackups); and backup ARNs (ParseBackupArn). The first byte picks the variant; the
// rest is the body, admitted as the router admits it (api_body.h), or the ARN. Invariants: no
// crash, no sanitizer report; every error is a client error (HTTP 4xx: ValidationException,
// SerializationException, BackupNotFoundException, AccessDeniedException); a planned table has
// the target's name, is CREATING, and keeps the source's key schema; a ListBackups request has a
// Limit of 1 to 100; a backup ARN that parses names a backup id, and the ARN built from what it
// names parses back to the same.
//
// The functions are internal to backup_ops.cc (no header declares them), so this file includes
// backup_ops.cc: its definitions are this program's own, and the linker never takes
// backup_ops.cc's object out of libfdyno_api.a, since this file already defines every symbol it
// would bring.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "api/restore_request.h"
#include "api_body.h"
// The file under test, last: see the header comment.
#include "api/backup_ops.cc"

namespace fdyno::api {
namespace {

using fuzz::Require;

constexpr int64_t kNowMs = 1'700'000'000'000;

void RequireHttp4xx(const Error& e) { Require(HttpStatus(e.type) / 100 == 4); }

store::SecondaryIndex SourceIndex(std::string name, int64_t id, std::string hash, std::string range,
                                  bool global) {
  store::SecondaryIndex i;
  i.name = std::move(name);
  i.id = id;
  i.key_schema.hash = {std::move(hash), store::ScalarType::kS};
  i.key_schema.range = store::AttributeDefinition{std::move(range), store::ScalarType::kN};
  i.projection.type = store::ProjectionType::kKeysOnly;
  if (global) i.throughput = {5, 5};
  return i;
}

const TableInfo& Source() {
  static const TableInfo* source = [] {
    auto* t = new TableInfo;
    t->name = "src";
    t->id = 3;
    t->attribute_definitions = {{"pk", store::ScalarType::kS},
                                {"sk", store::ScalarType::kN},
                                {"lsk", store::ScalarType::kN},
                                {"gpk", store::ScalarType::kS},
                                {"gsk", store::ScalarType::kN}};
    t->key_schema.hash = {"pk", store::ScalarType::kS};
    t->key_schema.range = store::AttributeDefinition{"sk", store::ScalarType::kN};
    t->throughput = {5, 5};
    t->local_indexes.push_back(SourceIndex("lsi", 1, "pk", "lsk", false));
    t->global_indexes.push_back(SourceIndex("gsi", 2, "gpk", "gsk", true));
    t->next_index_id = 3;
    return t;
  }();
  return *source;
}

// RestoreTableFromBackup's checks before its transaction, then the table it would create.
void FuzzRestore(const rapidjson::Value& body) {
  const RequestContext ctx;
  Result<RestoreRequest> r = ParseRestoreRequest(body);
  if (!r.ok()) return RequireHttp4xx(r.error());
  Result<std::optional<std::string>> backup_arn = GetOwnedString(body, "BackupArn");
  if (!backup_arn.ok()) return RequireHttp4xx(backup_arn.error());
  ConstraintErrors e;
  CheckName(e, "targetTableName", r->target);
  e.NotNull("backupArn", backup_arn->has_value());
  if (*backup_arn) {
    e.MinLength("backupArn", **backup_arn, 37);
    e.MaxLength("backupArn", **backup_arn, 1024);
  }
  CheckOverrideConstraints(e, *r);
  if (!e.empty()) return RequireHttp4xx(e.ToError());
  Result<BackupRef> ref = ParseBackupArn(ctx, **backup_arn, "RestoreTableFromBackup");
  // The handler stops at an ARN naming no backup; the plan does not depend on it, so it is
  // made for every request that passed the constraints.
  if (!ref.ok()) RequireHttp4xx(ref.error());
  Result<TableInfo> plan = PlanRestoredTable(Source(), *r, kNowMs, "backup");
  if (!plan.ok()) return RequireHttp4xx(plan.error());
  Require(plan->name == *r->target && plan->status == store::TableStatus::kCreating);
  Require(plan->key_schema == Source().key_schema);
}

void FuzzListBackups(const rapidjson::Value& body) {
  const RequestContext ctx;
  Result<ListBackupsRequest> r = ParseListBackups(ctx, body);
  if (!r.ok()) return RequireHttp4xx(r.error());
  Require(r->limit >= 1 && r->limit <= kMaxListBackups);
}

void FuzzBackupArn(std::string_view arn) {
  const RequestContext ctx;
  Result<BackupRef> ref = ParseBackupArn(ctx, arn, "DescribeBackup");
  if (!ref.ok()) return RequireHttp4xx(ref.error());
  Require(store::IsBackupId(ref->id) && !ref->table.empty());
  const std::string rebuilt = "arn:aws:dynamodb:" + ctx.region + ":" + ctx.account_id + ":table/" +
                              ref->table + "/backup/" + ref->id;
  Result<BackupRef> again = ParseBackupArn(ctx, rebuilt, "DescribeBackup");
  Require(again.ok() && again->table == ref->table && again->id == ref->id);
}

void FuzzBackups(const uint8_t* data, size_t size) {
  if (size == 0) return;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 3 == 2) return FuzzBackupArn(rest);
  rapidjson::Document doc;
  if (!fuzz::ParseBody(rest, doc)) return;
  if (data[0] % 3 == 0) return FuzzRestore(doc);
  FuzzListBackups(doc);
}

}  // namespace
}  // namespace fdyno::api

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fdyno::api::FuzzBackups(data, size);
  return 0;
}
