#include "api/capacity.h"

namespace fdyno::api {

Result<ReturnConsumedCapacity> ParseReturnConsumedCapacity(const std::string* value) {
  if (value == nullptr || *value == "NONE") return ReturnConsumedCapacity::kNone;
  if (*value == "TOTAL") return ReturnConsumedCapacity::kTotal;
  if (*value == "INDEXES") return ReturnConsumedCapacity::kIndexes;
  return Error::Validation("1 validation error detected: Value '" + *value +
                           "' at 'returnConsumedCapacity' failed to satisfy constraint: Member "
                           "must satisfy enum value set: [INDEXES, TOTAL, NONE]");
}

namespace {
uint64_t CeilDiv(uint64_t a, uint64_t b) { return (a + b - 1) / b; }
}  // namespace

double ReadUnits(uint64_t size_bytes, bool consistent_read) {
  uint64_t units = CeilDiv(size_bytes, kReadUnitBytes);
  if (units == 0) units = 1;
  return consistent_read ? static_cast<double>(units) : static_cast<double>(units) / 2.0;
}

double WriteUnits(uint64_t old_size_bytes, uint64_t new_size_bytes) {
  uint64_t size = old_size_bytes > new_size_bytes ? old_size_bytes : new_size_bytes;
  uint64_t units = CeilDiv(size, kWriteUnitBytes);
  if (units == 0) units = 1;
  return static_cast<double>(units);
}

double ConsumedCapacity::total() const {
  double t = table_units;
  for (const auto& [name, units] : global_indexes) t += units;
  for (const auto& [name, units] : local_indexes) t += units;
  return t;
}

namespace {
void WriteIndexes(rapidjson::Writer<rapidjson::StringBuffer>& w, const char* key,
                  const std::vector<std::pair<std::string, double>>& indexes) {
  if (indexes.empty()) return;
  w.Key(key);
  w.StartObject();
  for (const auto& [name, units] : indexes) {
    w.Key(name.data(), static_cast<rapidjson::SizeType>(name.size()));
    w.StartObject();
    w.Key("CapacityUnits");
    w.Double(units);
    w.EndObject();
  }
  w.EndObject();
}
}  // namespace

void WriteConsumedCapacityObject(rapidjson::Writer<rapidjson::StringBuffer>& w,
                                 ReturnConsumedCapacity mode, const ConsumedCapacity& c) {
  w.StartObject();
  w.Key("TableName");
  w.String(c.table_name.data(), static_cast<rapidjson::SizeType>(c.table_name.size()));
  w.Key("CapacityUnits");
  w.Double(c.total());
  if (mode == ReturnConsumedCapacity::kIndexes) {
    w.Key("Table");
    w.StartObject();
    w.Key("CapacityUnits");
    w.Double(c.table_units);
    w.EndObject();
    WriteIndexes(w, "GlobalSecondaryIndexes", c.global_indexes);
    WriteIndexes(w, "LocalSecondaryIndexes", c.local_indexes);
  }
  w.EndObject();
}

void WriteConsumedCapacity(rapidjson::Writer<rapidjson::StringBuffer>& w,
                           ReturnConsumedCapacity mode, const ConsumedCapacity& c) {
  if (mode == ReturnConsumedCapacity::kNone) return;
  w.Key("ConsumedCapacity");
  WriteConsumedCapacityObject(w, mode, c);
}

}  // namespace fdyno::api
