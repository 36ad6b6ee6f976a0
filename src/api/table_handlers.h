// Internal to the table operations (api/table_ops.h): the handlers that live in their own files
// (api/create_table.cc, api/update_table.cc, api/tag_ops.cc), for RegisterTableOperations to
// register, the kv::RunOptions all of the family's handlers run their transactions with, and the
// JSON writing their list responses (ListTables, ListTagsOfResource) share. Each handler answers
// one request as api/table_ops.h describes: DynamoDB's response as JSON text, or DynamoDB's error.
//
// Thread-safety: the handlers are thread-safe; they share only thread-safe services.
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string>
#include <string_view>

#include "api/operation.h"
#include "api/run_options.h"
#include "api/services.h"
#include "base/result.h"
#include "kv/run.h"

namespace fdyno::api::tables {

// The JSON text written into `buffer`.
std::string JsonText(const rapidjson::StringBuffer& buffer);

// api/create_table.cc.
Result<std::string> CreateTable(Services& s, const RequestContext& ctx,
                                const rapidjson::Value& body);
// api/update_table.cc.
Result<std::string> UpdateTable(Services& s, const RequestContext& ctx,
                                const rapidjson::Value& body);
// api/tag_ops.cc.
Result<std::string> TagResource(Services& s, const RequestContext& ctx,
                                const rapidjson::Value& body);
Result<std::string> UntagResource(Services& s, const RequestContext& ctx,
                                  const rapidjson::Value& body);
Result<std::string> ListTagsOfResource(Services& s, const RequestContext& ctx,
                                       const rapidjson::Value& body);

}  // namespace fdyno::api::tables
