// Exports and imports: ExportTableToPointInTime, DescribeExport, ListExports (export_ops.cc) and
// ImportTable, DescribeImport, ListImports (import_ops.cc). store/exports.h holds what they
// store, workers/exports.h does the work in the background; the files go to, and come from, a
// local directory standing for Amazon S3 (Services::export_root, buckets its subdirectories).
//
// ExportTableToPointInTime needs point-in-time recovery on the table, as DynamoDB does, and an
// ExportTime within its window. ImportTable creates its table CREATING (unusable until ACTIVE).
// A ClientToken reused within 8 hours with the same request answers the same job; with another
// request, ExportConflictException or ImportConflictException.
//
// Thread-safety: the handlers are thread-safe; they share only thread-safe services.
#pragma once

#include <rapidjson/document.h>

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/json_util.h"
#include "api/operation.h"
#include "api/services.h"
#include "base/result.h"
#include "kv/run.h"
#include "store/exports.h"

namespace fdyno::api {

// Registers the export operations. What `services` points to must outlive the handlers.
void RegisterExportOperations(OperationRegistry& registry, const Services& services);
// Registers the import operations. What `services` points to must outlive the handlers.
void RegisterImportOperations(OperationRegistry& registry, const Services& services);

// ---- what the two share -------------------------------------------------------------------

// How long a ClientToken names its job (DynamoDB: 8 hours).
inline constexpr int64_t kClientTokenWindowMs = 8 * 3600 * 1000;

// The request without its ClientToken as canonical JSON (members sorted at every level): two
// requests are the same request when these are equal.
std::string RequestFingerprint(const rapidjson::Value& body);

// The job id an export or import ARN names (arn:aws:dynamodb:<region>:<account>:table/<table>/
// <kind>/<id>, kind "export" or "import", in the caller's region and account), or nullopt.
std::optional<std::string> JobIdOfArn(const RequestContext& ctx, std::string_view arn,
                                      std::string_view kind);
// arn:aws:dynamodb:<region>:<account>:table/<table>/<kind>/<id>.
std::string JobArn(const RequestContext& ctx, std::string_view table, std::string_view kind,
                   std::string_view id);

// Checks S3Bucket, S3BucketOwner and the prefix against the API model (paths `bucket_path`...).
// ClientToken's pattern (no '$'), for ExportTableToPointInTime and ImportTable: a request table's
// custom check (api/request_model.h).
void ClientTokenPattern(ConstraintErrors& e, std::string_view path, const rapidjson::Value* token);

void CheckS3Constraints(ConstraintErrors& e, std::string_view bucket_path,
                        const std::optional<std::string>& bucket, std::string_view owner_path,
                        const std::optional<std::string>& owner, std::string_view prefix_path,
                        const std::optional<std::string>& prefix);

kv::RunOptions JobRunOptions(const RequestContext& ctx, const Services& s, bool read_only = false);

// The ExportArn or ImportArn member `member` (constraint path `path`): required, 37..1024
// characters.
Result<std::string> ReadJobArn(const rapidjson::Value& body, const char* member,
                               std::string_view path);

// One page of ListExports or ListImports: the jobs of `account` after id `after` (empty: from the
// first), in creation order, of table `table_arn` when given, at most `limit`; and whether more
// follow.
// `list(tx, after, n)` lists the next `n` jobs after an id (store::ListExportJobs, ...).
template <typename Job, typename List>
Result<std::pair<std::vector<Job>, bool>> ListJobPage(kv::Transaction& tx, List list,
                                                      store::TableScope scope, std::string after,
                                                      int limit,
                                                      const std::optional<std::string>& table_arn) {
  constexpr int kRead = 100;  // records read per range read, filtered by table
  std::pair<std::vector<Job>, bool> out;
  for (;;) {
    FDYNO_ASSIGN_OR_RETURN(std::vector<Job> jobs, list(tx, after, kRead));
    for (Job& j : jobs) {
      after = j.id;
      if (store::ScopeOf(j) != scope || (table_arn && j.table_arn != *table_arn)) continue;
      if (static_cast<int>(out.first.size()) == limit) {
        out.second = true;
        return out;
      }
      out.first.push_back(std::move(j));
    }
    if (jobs.size() < static_cast<size_t>(kRead)) return out;
  }
}

// The job an earlier request with the same ClientToken made (token record at `token_key`,
// the job read with `read(tx, id)`), when it still names one: within kClientTokenWindowMs, the
// same request (fingerprint) answers it, another is `conflict(earlier)`.
template <typename Job, typename Read, typename Conflict>
Result<std::optional<Job>> JobOfToken(kv::Transaction& tx, const std::string& token_key,
                                      const Job& request, int64_t now_ms, Read read,
                                      Conflict conflict) {
  if (request.client_token.empty()) return std::optional<Job>();
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> id, store::ReadTokenJob(tx, token_key));
  if (!id) return std::optional<Job>();
  FDYNO_ASSIGN_OR_RETURN(std::optional<Job> earlier, read(tx, *id));
  if (!earlier || now_ms - earlier->start_ms > kClientTokenWindowMs) return std::optional<Job>();
  if (earlier->fingerprint != request.fingerprint) return conflict(*earlier);
  return earlier;
}

}  // namespace fdyno::api
