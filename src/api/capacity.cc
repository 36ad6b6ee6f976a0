#include "api/capacity.h"

#include <algorithm>
#include <optional>

#include "model/item_size.h"
#include "store/indexes.h"
#include "store/vector_index.h"

namespace fdyno::api {

Result<ReturnConsumedCapacity> ParseReturnConsumedCapacity(std::optional<std::string_view> value) {
  if (!value || *value == "NONE") return ReturnConsumedCapacity::kNone;
  if (*value == "TOTAL") return ReturnConsumedCapacity::kTotal;
  if (*value == "INDEXES") return ReturnConsumedCapacity::kIndexes;
  return Error::EnvelopedValidation("Value '" + std::string(*value) +
                                    "' at 'returnConsumedCapacity' failed to satisfy constraint: "
                                    "Member must satisfy enum value set: [INDEXES, TOTAL, NONE]");
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

void AddUnits(std::vector<std::pair<std::string, double>>& list, const std::string& name,
              double units) {
  for (auto& [n, u] : list) {
    if (n == name) {
      u += units;
      return;
    }
  }
  list.emplace_back(name, units);
}

// The write units one index consumes for the change (nullopt: its entry does not change).
std::optional<double> IndexWriteUnits(const store::TableInfo& table,
                                      const store::SecondaryIndex& index,
                                      const model::Item* old_item, const model::Item* new_item) {
  std::optional<store::IndexEntry> before, after;
  if (old_item != nullptr) before = store::ComputeIndexEntry(table, index, *old_item);
  if (new_item != nullptr) after = store::ComputeIndexEntry(table, index, *new_item);
  auto units = [](const store::IndexEntry& e) { return WriteUnits(model::ItemSize(e.image), 0); };
  if (!before && !after) return std::nullopt;
  if (!before) return units(*after);
  if (!after) return units(*before);
  if (before->key != after->key) return units(*before) + units(*after);  // a delete and a put
  if (before->image == after->image) return std::nullopt;
  return std::max(units(*before), units(*after));
}

}  // namespace

void ConsumedCapacity::AddIndexUnits(const ConsumedCapacity& other) {
  for (const auto& [name, units] : other.global_indexes) AddUnits(global_indexes, name, units);
  for (const auto& [name, units] : other.local_indexes) AddUnits(local_indexes, name, units);
  for (const auto& [name, bytes] : other.vector_indexes) AddUnits(vector_indexes, name, bytes);
}

void AddIndexWriteUnits(const store::TableInfo& table, const model::Item* old_item,
                        const model::Item* new_item, ConsumedCapacity& c, bool vector_write_bytes) {
  for (const auto* list : {&table.global_indexes, &table.local_indexes}) {
    for (const store::SecondaryIndex& index : *list) {
      if (!store::IndexIsMaintained(index)) continue;
      std::optional<double> units = IndexWriteUnits(table, index, old_item, new_item);
      if (!units) continue;
      AddUnits(list == &table.global_indexes ? c.global_indexes : c.local_indexes, index.name,
               *units);
    }
  }
  if (!vector_write_bytes) return;
  for (const store::VectorIndex& index : table.vector_indexes) {
    if (!store::VectorIndexIsMaintained(index)) continue;
    std::optional<uint64_t> bytes = store::VectorWriteBytes(table, index, old_item, new_item);
    if (bytes) AddUnits(c.vector_indexes, index.name, static_cast<double>(*bytes));
  }
}

namespace {
void WriteIndexes(rapidjson::Writer<rapidjson::StringBuffer>& w, const char* key,
                  const std::vector<std::pair<std::string, double>>& indexes,
                  const char* figure = "CapacityUnits") {
  if (indexes.empty()) return;
  w.Key(key);
  w.StartObject();
  for (const auto& [name, value] : indexes) {
    w.Key(name.data(), static_cast<rapidjson::SizeType>(name.size()));
    w.StartObject();
    w.Key(figure);
    w.Double(value);
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
    WriteIndexes(w, "VectorIndexes", c.vector_indexes, "VectorWriteRequestBytes");
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
