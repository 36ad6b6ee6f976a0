// DescribeEndpoints and DescribeLimits: answers about the service, not about any table.
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "api/api.h"
#include "api/table_rules.h"

namespace fdyno::api {
namespace {

// DynamoDB caches a discovered endpoint for a day.
constexpr int kEndpointCacheMinutes = 1440;
// DynamoDB's default account and table quotas for provisioned capacity.
constexpr int64_t kAccountMaxCapacityUnits = 80'000;

// {"Endpoints":[{"Address":"<host the client used>","CachePeriodInMinutes":1440}]}
Result<std::string> DescribeEndpoints(const RequestContext& ctx, const rapidjson::Value&) {
  std::string address =
      ctx.endpoint_host.empty() ? "dynamodb." + ctx.region + ".amazonaws.com" : ctx.endpoint_host;
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("Endpoints");
  w.StartArray();
  w.StartObject();
  w.Key("Address");
  w.String(address.data(), static_cast<rapidjson::SizeType>(address.size()));
  w.Key("CachePeriodInMinutes");
  w.Int64(kEndpointCacheMinutes);
  w.EndObject();
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

Result<std::string> DescribeLimits(const RequestContext&, const rapidjson::Value&) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("AccountMaxReadCapacityUnits");
  w.Int64(kAccountMaxCapacityUnits);
  w.Key("AccountMaxWriteCapacityUnits");
  w.Int64(kAccountMaxCapacityUnits);
  w.Key("TableMaxReadCapacityUnits");
  w.Int64(tables::kTableMaxCapacityUnits);
  w.Key("TableMaxWriteCapacityUnits");
  w.Int64(tables::kTableMaxCapacityUnits);
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace

void RegisterMetaOperations(OperationRegistry& registry, const ApiDeps&) {
  registry.Register("DescribeEndpoints", DescribeEndpoints);
  registry.Register("DescribeLimits", DescribeLimits);
}

}  // namespace fdyno::api
