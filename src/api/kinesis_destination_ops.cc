#include "api/kinesis_destination_ops.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/json_util.h"
#include "api/run_options.h"
#include "api/table_arn.h"
#include "api/table_read.h"
#include "kv/run.h"
#include "store/catalog.h"

namespace fdyno::api {
namespace {

using rapidjson::Value;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;
using store::KinesisDestination;

constexpr std::string_view kNotValid =
    "Table is not in a valid state to enable Kinesis Streaming Destination: ";

struct Request {
  std::string table;
  std::string stream_arn;
  const Value* config = nullptr;  // Enable... or UpdateKinesisStreamingConfiguration
  std::optional<std::string> precision;
};

Result<Request> Parse(const RequestContext& ctx, const Value& body, std::string_view operation,
                      const char* config_member) {
  Request r;
  FDYNO_ASSIGN_OR_RETURN(r.table, ReadExistingTableName(ctx, body, operation));
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string_view> arn, GetString(body, "StreamArn"));
  FDYNO_ASSIGN_OR_RETURN(r.config, GetStruct(body, config_member, config_member));
  std::optional<std::string_view> precision;
  if (r.config != nullptr) {
    FDYNO_ASSIGN_OR_RETURN(precision, GetString(*r.config, "ApproximateCreationDateTimePrecision"));
  }
  ConstraintErrors e;
  e.NotNull("streamArn", arn.has_value());
  if (arn) {
    e.MinLength("streamArn", *arn, 37);
    e.MaxLength("streamArn", *arn, 1024);
  }
  if (precision) {
    std::string path(config_member);
    path[0] = static_cast<char>(std::tolower(path[0]));
    e.Enum(path + ".approximateCreationDateTimePrecision", *precision,
           {"MILLISECOND", "MICROSECOND"});
  }
  FDYNO_RETURN_IF_ERROR(e.ToStatus());
  r.stream_arn = std::string(*arn);
  if (precision) r.precision = std::string(*precision);
  return r;
}

// Why DynamoDB cannot deliver to `arn` when fdyno serves no such stream: its
// DestinationStatusDescription for a stream of another region, for something that is not an
// active stream of the account, or for a stream that does not exist.
std::string FailureOf(const RequestContext& ctx, std::string_view arn) {
  std::vector<std::string_view> parts;
  size_t pos = 0;
  while (parts.size() < 5) {
    const size_t colon = arn.find(':', pos);
    if (colon == std::string_view::npos) break;
    parts.push_back(arn.substr(pos, colon - pos));
    pos = colon + 1;
  }
  constexpr std::string_view kBelongs =
      "The kinesis Arn used to enable kinesis replication belongs to a stream which is ";
  if (parts.size() == 5 && parts[2] == "kinesis" && parts[3] != ctx.region) {
    return std::string(kBelongs) + "not in the current region";
  }
  if (parts.size() == 5 &&
      (parts[2] == "firehose" || (parts[2] == "kinesis" && parts[4] != ctx.account_id))) {
    return std::string(kBelongs) + "not in Active state";
  }
  return "User does not have a permission to use kinesis stream";
}

bool InFlightOrActive(const KinesisDestination& d) {
  return d.status == "ENABLING" || d.status == "ACTIVE" || d.status == "UPDATING" ||
         d.status == "DISABLING";
}

std::vector<KinesisDestination>::iterator Find(store::TableInfo& t, const std::string& arn) {
  return std::find_if(t.kinesis.begin(), t.kinesis.end(),
                      [&](const KinesisDestination& d) { return d.stream_arn == arn; });
}

// Runs `change` on the table's record in one transaction and writes it back.
template <typename Change>
Status ChangeTable(Services& s, const RequestContext& ctx, const std::string& name,
                   Change&& change) {
  return kv::Run(*s.db, RunOptionsFor(ctx, s, false),
                 [&](kv::Transaction& txn, const kv::Attempt&) -> Status {
                   FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const store::TableInfo> t,
                                          s.catalog->Find(txn, CallerScope(ctx), name));
                   if (!Settled(t)) return TableNotFound(name);
                   store::TableInfo updated = *t;
                   FDYNO_RETURN_IF_ERROR(change(updated));
                   return s.catalog->Update(txn, updated);
                 });
}

// {"TableName", "StreamArn", "DestinationStatus", and the configuration member as sent}.
std::string Answer(const Request& r, std::string_view status, const char* config_member) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("TableName");
  Str(w, r.table);
  w.Key("StreamArn");
  Str(w, r.stream_arn);
  w.Key("DestinationStatus");
  Str(w, status);
  if (config_member != nullptr) {
    w.Key(config_member);
    w.StartObject();
    if (r.precision) {
      w.Key("ApproximateCreationDateTimePrecision");
      Str(w, *r.precision);
    }
    w.EndObject();
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

Result<std::string> Enable(Services& s, const RequestContext& ctx, const Value& body) {
  constexpr const char* kConfig = "EnableKinesisStreamingConfiguration";
  FDYNO_ASSIGN_OR_RETURN(Request r, Parse(ctx, body, "EnableKinesisStreamingDestination", kConfig));
  FDYNO_RETURN_IF_ERROR(ChangeTable(s, ctx, r.table, [&](store::TableInfo& t) -> Status {
    if (std::any_of(t.kinesis.begin(), t.kinesis.end(), InFlightOrActive)) {
      return Error::Validation(std::string(kNotValid) +
                               "EnableKinesisStreamingDestination must be DISABLED or "
                               "ENABLE_FAILED to perform ENABLE operation.");
    }
    // The same stream again flips its entry (to the front: the latest first).
    if (auto it = Find(t, r.stream_arn); it != t.kinesis.end()) t.kinesis.erase(it);
    t.kinesis.insert(t.kinesis.begin(),
                     KinesisDestination{r.stream_arn, "ENABLE_FAILED", FailureOf(ctx, r.stream_arn),
                                        r.precision.value_or("")});
    return Status::Ok();
  }));
  return Answer(r, "ENABLING", kConfig);
}

Result<std::string> Disable(Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(Request r, Parse(ctx, body, "DisableKinesisStreamingDestination",
                                          "EnableKinesisStreamingConfiguration"));
  if (r.config != nullptr) {
    return Error::Validation(
        "Stream cannot be disabled using EnableKinesisStreamingConfiguration parameters");
  }
  FDYNO_RETURN_IF_ERROR(ChangeTable(s, ctx, r.table, [&](store::TableInfo& t) -> Status {
    auto it = Find(t, r.stream_arn);
    if (it == t.kinesis.end() || it->status != "ACTIVE") {
      return Error::Validation(std::string(kNotValid) +
                               "KinesisStreamingDestination must be ACTIVE to perform DISABLE "
                               "operation.");
    }
    it->status = "DISABLED";
    return Status::Ok();
  }));
  return Answer(r, "DISABLING", nullptr);
}

Result<std::string> Update(Services& s, const RequestContext& ctx, const Value& body) {
  constexpr const char* kConfig = "UpdateKinesisStreamingConfiguration";
  FDYNO_ASSIGN_OR_RETURN(Request r, Parse(ctx, body, "UpdateKinesisStreamingDestination", kConfig));
  if (!r.precision) {
    return Error::Validation(
        "Streaming destination cannot be updated with given parameters: "
        "UpdateKinesisStreamingConfiguration cannot be null or contain only null values");
  }
  FDYNO_RETURN_IF_ERROR(ChangeTable(s, ctx, r.table, [&](store::TableInfo& t) -> Status {
    auto it = Find(t, r.stream_arn);
    if (it == t.kinesis.end()) {
      return Error::Validation(std::string(kNotValid) +
                               "No streaming destination with streamArn: " + r.stream_arn);
    }
    if (it->status != "ACTIVE") {
      return Error::Validation(std::string(kNotValid) +
                               "Kinesis streaming is not in ACTIVE state. Updates are only allowed "
                               "in ACTIVE state. TableName: " +
                               r.table + ", kdsArn: " + r.stream_arn);
    }
    if (it->precision.empty() ? *r.precision == "MILLISECOND" : it->precision == *r.precision) {
      return Error::Validation(
          "Invalid Request: Precision is already set to the desired value of " + *r.precision +
          " for tableId: " + t.uuid + ", kdsArn: " + r.stream_arn);
    }
    it->precision = *r.precision;
    return Status::Ok();
  }));
  return Answer(r, "UPDATING", kConfig);
}

Result<std::string> Describe(Services& s, const RequestContext& ctx, const Value& body) {
  FDYNO_ASSIGN_OR_RETURN(std::string name,
                         ReadExistingTableName(ctx, body, "DescribeKinesisStreamingDestination"));
  FDYNO_ASSIGN_OR_RETURN(std::shared_ptr<const store::TableInfo> t, ReadTable(s, ctx, name));
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  w.Key("TableName");
  Str(w, t->name);
  w.Key("KinesisDataStreamDestinations");
  w.StartArray();
  for (const KinesisDestination& d : t->kinesis) {
    w.StartObject();
    w.Key("StreamArn");
    Str(w, d.stream_arn);
    w.Key("DestinationStatus");
    Str(w, d.status);
    if (!d.description.empty()) {
      w.Key("DestinationStatusDescription");
      Str(w, d.description);
    }
    if (!d.precision.empty()) {
      w.Key("ApproximateCreationDateTimePrecision");
      Str(w, d.precision);
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace

void RegisterKinesisDestinationOperations(OperationRegistry& registry, const Services& services) {
  auto s = std::make_shared<Services>(services);
  registry.Register("EnableKinesisStreamingDestination", Bind(s, &Enable));
  registry.Register("DisableKinesisStreamingDestination", Bind(s, &Disable));
  registry.Register("UpdateKinesisStreamingDestination", Bind(s, &Update));
  registry.Register("DescribeKinesisStreamingDestination", Bind(s, &Describe));
}

}  // namespace fdyno::api
