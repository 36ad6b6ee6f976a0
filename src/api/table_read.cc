#include "api/table_read.h"

#include "api/run_options.h"
#include "api/table_arn.h"
#include "kv/run.h"

namespace fdyno::api {

Result<std::shared_ptr<const store::TableInfo>> ReadTable(const Services& s,
                                                          const RequestContext& ctx,
                                                          const std::string& name) {
  FDYNO_ASSIGN_OR_RETURN(
      std::shared_ptr<const store::TableInfo> t,
      kv::Run(*s.db, RunOptionsFor(ctx, s, true), [&](kv::Transaction& txn, const kv::Attempt&) {
        return s.catalog->Find(txn, CallerScope(ctx), name);
      }));
  if (!Settled(t)) return TableNotFound(name);
  return t;
}

}  // namespace fdyno::api
