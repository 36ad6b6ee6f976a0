#include "main/init_tables.h"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "api/item_keys.h"
#include "api/json_util.h"
#include "api/table_arn.h"
#include "kv/run.h"
#include "model/json.h"
#include "workers/export_files.h"

namespace fdyno::main {
namespace {

namespace fs = std::filesystem;
using rapidjson::Document;
using rapidjson::Value;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

constexpr std::string_view kInitTag = "fdyno:init";
constexpr std::string_view kLoading = "loading";
constexpr std::string_view kComplete = "complete";
constexpr size_t kBatchItems = 25;           // BatchWriteItem's most
constexpr int kMaxUnprocessedRounds = 1000;  // UnprocessedItems sent again at most this often

Error Bad(const std::string& message) { return Error::Validation("--init: " + message); }

std::string View(const Value& v) { return std::string(api::AsStringView(v)); }

std::string Compact(const Value& v) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  v.Accept(w);
  return {buffer.GetString(), buffer.GetSize()};
}

Result<std::string> ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) return Bad("cannot read " + path.string());
  return text.str();
}

size_t LineOf(std::string_view text, size_t offset) {
  return 1 + std::count(text.begin(), text.begin() + std::min(offset, text.size()), '\n');
}

// ---- the files -------------------------------------------------------------------------------

struct TableFiles {
  std::string name;
  fs::path definition;
  std::optional<fs::path> items;  // <name>.items.json or <name>.csv
  bool csv = false;
};

// The tables DIR describes, by name.
Result<std::vector<TableFiles>> FindTables(const fs::path& dir) {
  std::map<std::string, TableFiles> tables;
  std::vector<std::pair<std::string, fs::path>> data;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_regular_file()) continue;
    const std::string file = e.path().filename().string();
    auto ends = [&](std::string_view suffix) {
      return file.size() > suffix.size() &&
             file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (ends(".items.json")) {
      data.emplace_back(file.substr(0, file.size() - 11), e.path());
    } else if (ends(".csv")) {
      data.emplace_back(file.substr(0, file.size() - 4), e.path());
    } else if (ends(".json")) {
      TableFiles& t = tables[file.substr(0, file.size() - 5)];
      t.name = file.substr(0, file.size() - 5);
      t.definition = e.path();
    }
  }
  if (ec) return Bad("cannot list " + dir.string() + ": " + ec.message());
  for (auto& [name, path] : data) {
    auto it = tables.find(name);
    if (it == tables.end()) {
      return Bad(path.string() + " has no table definition " + name + ".json beside it");
    }
    if (it->second.items) {
      return Bad("table " + name + " has two item files: " + it->second.items->string() + " and " +
                 path.string());
    }
    it->second.items = path;
    it->second.csv = path.extension() == ".csv";
  }
  std::vector<TableFiles> out;
  for (auto& [name, t] : tables) out.push_back(std::move(t));
  return out;
}

// The CreateTable request of `t`, its TableName the file's name.
Result<std::unique_ptr<Document>> ReadDefinition(const TableFiles& t) {
  FDYNO_ASSIGN_OR_RETURN(std::string text, ReadText(t.definition));
  auto doc = std::make_unique<Document>();
  doc->Parse(text.data(), text.size());
  if (doc->HasParseError()) {
    return Bad(t.definition.string() + ":" + std::to_string(LineOf(text, doc->GetErrorOffset())) +
               ": not JSON: " + rapidjson::GetParseError_En(doc->GetParseError()));
  }
  if (!doc->IsObject()) return Bad(t.definition.string() + ": not a JSON object");
  if (!doc->HasMember("TableName")) {
    doc->AddMember("TableName", Value(t.name.c_str(), doc->GetAllocator()), doc->GetAllocator());
  } else if (const Value& name = (*doc)["TableName"]; !name.IsString() || View(name) != t.name) {
    return Bad(t.definition.string() + ": its TableName must be " + t.name + ", the file's name");
  }
  return doc;
}

// The table's attribute definitions and key schema as far as the request gives them (for the
// items' checks; CreateTable validates the request itself).
store::TableInfo KeysOf(const Value& definition) {
  store::TableInfo t;
  auto defs = definition.FindMember("AttributeDefinitions");
  if (defs != definition.MemberEnd() && defs->value.IsArray()) {
    for (const Value& d : defs->value.GetArray()) {
      auto n = d.FindMember("AttributeName");
      auto ty = d.FindMember("AttributeType");
      if (n == d.MemberEnd() || ty == d.MemberEnd() || !n->value.IsString() ||
          !ty->value.IsString()) {
        continue;
      }
      if (auto type = model::ParseScalarType(View(ty->value))) {
        t.attribute_definitions.push_back({View(n->value), *type});
      }
    }
  }
  auto keys = definition.FindMember("KeySchema");
  if (keys != definition.MemberEnd() && keys->value.IsArray()) {
    for (const Value& k : keys->value.GetArray()) {
      auto n = k.FindMember("AttributeName");
      auto kind = k.FindMember("KeyType");
      if (n == k.MemberEnd() || kind == k.MemberEnd() || !n->value.IsString() ||
          !kind->value.IsString()) {
        continue;
      }
      for (const store::AttributeDefinition& d : t.attribute_definitions) {
        if (d.name != View(n->value)) continue;
        if (View(kind->value) == "HASH") t.key_schema.hash = d;
        if (View(kind->value) == "RANGE") t.key_schema.range = d;
      }
    }
  }
  return t;
}

struct Line {
  model::Item item;
  std::string where;  // file:line
};

// Checks that `item` has the table's key attributes with their types.
Status CheckKey(const store::TableInfo& keys, const model::Item& item, const std::string& where) {
  if (keys.key_schema.hash.name.empty()) return Status::Ok();
  for (const model::KeyAttribute& a : keys.key_schema.Attributes()) {
    auto it = item.find(a.name);
    if (it == item.end()) return Bad(where + ": the item has no key attribute " + a.name);
    if (it->second.type() != model::ToType(a.type)) {
      return Bad(where + ": key attribute " + a.name + " must be of type " +
                 std::string(model::ScalarTypeName(a.type)));
    }
  }
  return Status::Ok();
}

// One line of a .items.json file: {"Item": {...}} or the bare item.
Result<model::Item> ParseItemLine(const std::string& line) {
  Result<model::Item> wrapped = workers::ParseDynamoJsonLine(line);
  if (wrapped.ok()) return wrapped;
  Result<model::Item> bare = workers::ParseDynamoJsonLine("{\"Item\":" + line + "}");
  if (bare.ok()) return bare;
  return line.find("\"Item\"") != std::string::npos ? wrapped : bare;
}

Result<std::vector<Line>> ReadJsonItems(const fs::path& path, const store::TableInfo& keys) {
  FDYNO_ASSIGN_OR_RETURN(std::string text, ReadText(path));
  std::vector<Line> out;
  std::istringstream in(text);
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    const std::string where = path.string() + ":" + std::to_string(number);
    Result<model::Item> item = ParseItemLine(line);
    if (!item.ok()) return Bad(where + ": " + item.error().message);
    FDYNO_RETURN_IF_ERROR(CheckKey(keys, *item, where));
    out.push_back({std::move(item).value(), where});
  }
  return out;
}

Result<std::vector<Line>> ReadCsvItems(const fs::path& path, const store::TableInfo& keys) {
  FDYNO_ASSIGN_OR_RETURN(std::string text, ReadText(path));
  std::vector<Line> out;
  std::vector<std::string> headers;
  std::istringstream in(text);
  std::string line;
  size_t number = 0;
  while (std::getline(in, line)) {
    const size_t first = ++number;
    std::string record = line;
    while (workers::CsvRecordOpen(record) && std::getline(in, line)) {
      ++number;
      record += "\n" + line;
    }
    if (!record.empty() && record.back() == '\r') record.pop_back();
    if (record.empty()) continue;
    const std::string where = path.string() + ":" + std::to_string(first);
    Result<std::vector<std::string>> cells = workers::ParseCsvRecord(record, ',');
    if (!cells.ok()) return Bad(where + ": " + cells.error().message);
    if (headers.empty()) {
      headers = std::move(cells).value();
      continue;
    }
    Result<model::Item> item = workers::CsvItem(keys, headers, *cells);
    if (!item.ok()) return Bad(where + ": " + item.error().message);
    FDYNO_RETURN_IF_ERROR(CheckKey(keys, *item, where));
    out.push_back({std::move(item).value(), where});
  }
  return out;
}

// A table's files, read and checked.
struct Table {
  std::string name;
  std::unique_ptr<Document> definition;
  std::vector<Line> items;
};

Result<Table> ReadTable(const TableFiles& files) {
  Table t;
  t.name = files.name;
  FDYNO_ASSIGN_OR_RETURN(t.definition, ReadDefinition(files));
  const store::TableInfo keys = KeysOf(*t.definition);
  if (files.items) {
    FDYNO_ASSIGN_OR_RETURN(
        t.items, files.csv ? ReadCsvItems(*files.items, keys) : ReadJsonItems(*files.items, keys));
  }
  return t;
}

// ---- comparing a definition with the table -----------------------------------------------------

using Fields = std::map<std::string, std::string>;

std::string KeySchemaText(const Value* v) {
  if (v == nullptr || !v->IsArray()) return "";
  std::vector<std::string> parts;
  for (const Value& k : v->GetArray()) {
    auto n = k.FindMember("AttributeName");
    auto t = k.FindMember("KeyType");
    if (n == k.MemberEnd() || t == k.MemberEnd()) continue;
    parts.push_back(Compact(n->value) + " " + Compact(t->value));
  }
  // HASH before RANGE, whatever the order written.
  std::sort(parts.begin(), parts.end(), [](const std::string& a, const std::string& b) {
    return (a.find("HASH") != std::string::npos) > (b.find("HASH") != std::string::npos);
  });
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

// The member `name` of `v` (null when absent, JSON null, or `v` is no object).
const Value* Find(const Value& v, std::string_view name) {
  return v.IsObject() ? api::Member(v, name) : nullptr;
}

std::string ThroughputText(const Value* v) {
  if (v == nullptr) return "";
  const Value* r = Find(*v, "ReadCapacityUnits");
  const Value* w = Find(*v, "WriteCapacityUnits");
  return (r ? Compact(*r) : "?") + " read, " + (w ? Compact(*w) : "?") + " write";
}

std::string ProjectionText(const Value* v) {
  if (v == nullptr) return "";
  const Value* type = Find(*v, "ProjectionType");
  std::string out = type ? Compact(*type) : "";
  if (const Value* attrs = Find(*v, "NonKeyAttributes"); attrs && attrs->IsArray()) {
    std::vector<std::string> names;
    for (const Value& a : attrs->GetArray()) names.push_back(Compact(a));
    std::sort(names.begin(), names.end());
    for (const std::string& n : names) out += " " + n;
  }
  return out;
}

// The indexes of a definition or description, by name.
std::string IndexesText(const Value* v, bool provisioned) {
  if (v == nullptr || !v->IsArray()) return "";
  std::vector<std::string> parts;
  for (const Value& index : v->GetArray()) {
    const Value* name = Find(index, "IndexName");
    std::string p = (name ? Compact(*name) : "") + " (" + KeySchemaText(Find(index, "KeySchema")) +
                    "; " + ProjectionText(Find(index, "Projection"));
    if (provisioned) p += "; " + ThroughputText(Find(index, "ProvisionedThroughput"));
    parts.push_back(p + ")");
  }
  std::sort(parts.begin(), parts.end());
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

// What makes two tables the same, from a CreateTable request or a TableDescription.
Fields DefinitionOf(const Value& v, bool description) {
  Fields f;
  f["KeySchema"] = KeySchemaText(Find(v, "KeySchema"));
  std::vector<std::string> defs;
  if (const Value* d = Find(v, "AttributeDefinitions"); d && d->IsArray()) {
    for (const Value& a : d->GetArray()) {
      const Value* n = Find(a, "AttributeName");
      const Value* t = Find(a, "AttributeType");
      defs.push_back((n ? Compact(*n) : "") + " " + (t ? Compact(*t) : ""));
    }
  }
  std::sort(defs.begin(), defs.end());
  for (const std::string& d : defs)
    f["AttributeDefinitions"] += (f["AttributeDefinitions"].empty() ? "" : ", ") + d;
  const Value* mode = description ? [&]() -> const Value* {
    const Value* s = Find(v, "BillingModeSummary");
    return s ? Find(*s, "BillingMode") : nullptr;
  }()
      : Find(v, "BillingMode");
  const std::string billing = mode && mode->IsString() ? View(*mode) : "PROVISIONED";
  f["BillingMode"] = billing;
  const bool provisioned = billing == "PROVISIONED";
  if (provisioned) f["ProvisionedThroughput"] = ThroughputText(Find(v, "ProvisionedThroughput"));
  f["GlobalSecondaryIndexes"] = IndexesText(Find(v, "GlobalSecondaryIndexes"), provisioned);
  f["LocalSecondaryIndexes"] = IndexesText(Find(v, "LocalSecondaryIndexes"), false);
  const Value* stream = Find(v, "StreamSpecification");
  const Value* enabled = stream ? Find(*stream, "StreamEnabled") : nullptr;
  if (enabled && enabled->IsTrue()) {
    const Value* view = Find(*stream, "StreamViewType");
    f["StreamSpecification"] = view ? Compact(*view) : "enabled";
  } else {
    f["StreamSpecification"] = "none";
  }
  return f;
}

// "" when the same; else what differs.
std::string Differences(const Fields& table, const Fields& file) {
  std::string out;
  for (const auto& [name, value] : file) {
    auto it = table.find(name);
    const std::string has = it == table.end() ? "" : it->second;
    if (has == value) continue;
    out += (out.empty() ? "" : "; ") + name + " is [" + has + "] in the table, [" + value +
           "] in the file";
  }
  return out;
}

// ---- the operations
// ------------------------------------------------------------------------------

// The operations --init runs, as the caller InitOptions names.
class Api {
 public:
  Api(const api::OperationRegistry& registry, const InitOptions& options)
      : registry_(registry), options_(options) {}

  Result<Document> Call(std::string_view operation, const std::string& body) const {
    const api::Handler* handler = registry_.Find(operation);
    if (handler == nullptr) return Error::Internal(std::string(operation) + " is not built");
    Document request;
    request.Parse(body.data(), body.size());
    api::RequestContext ctx;
    ctx.account_id = options_.account;
    ctx.region = options_.region;
    ctx.request_id = "init";
    ctx.clock = options_.clock;
    ctx.deadline = options_.clock->Now() + kv::OperationTimeout();
    FDYNO_ASSIGN_OR_RETURN(std::string answer, (*handler)(ctx, request));
    Document out;
    out.Parse(answer.data(), answer.size());
    return out;
  }

  std::string TableArn(const std::string& name) const {
    return api::TableArn(options_.region, options_.account, name);
  }

 private:
  const api::OperationRegistry& registry_;
  const InitOptions& options_;
};

std::string Quoted(std::string_view s) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  return {buffer.GetString(), buffer.GetSize()};
}

// The table's description, or nullopt when there is none.
Result<std::optional<Document>> Describe(const Api& api, const std::string& name) {
  Result<Document> d = api.Call("DescribeTable", "{\"TableName\":" + Quoted(name) + "}");
  if (!d.ok()) {
    if (d.error().type == ErrorType::kResourceNotFound) return std::optional<Document>();
    return std::move(d).error();
  }
  return std::optional<Document>(std::move(d).value());
}

// The table's fdyno:init tag ("" when it has none).
Result<std::string> InitTag(const Api& api, const std::string& name) {
  FDYNO_ASSIGN_OR_RETURN(
      Document tags,
      api.Call("ListTagsOfResource", "{\"ResourceArn\":" + Quoted(api.TableArn(name)) + "}"));
  if (const Value* list = Find(tags, "Tags"); list && list->IsArray()) {
    for (const Value& tag : list->GetArray()) {
      const Value* key = Find(tag, "Key");
      const Value* value = Find(tag, "Value");
      if (key && value && key->IsString() && View(*key) == kInitTag && value->IsString()) {
        return View(*value);
      }
    }
  }
  return std::string();
}

Status SetInitTag(const Api& api, const std::string& name, std::string_view value) {
  FDYNO_RETURN_IF_ERROR(api.Call("TagResource", "{\"ResourceArn\":" + Quoted(api.TableArn(name)) +
                                                    ",\"Tags\":[{\"Key\":" + Quoted(kInitTag) +
                                                    ",\"Value\":" + Quoted(value) + "}]}"));
  return Status::Ok();
}

Status Drop(const Api& api, const std::string& name) {
  FDYNO_RETURN_IF_ERROR(api.Call("DeleteTable", "{\"TableName\":" + Quoted(name) + "}"));
  return Status::Ok();
}

// The request of `t` with the fdyno:init=loading tag.
std::string CreateRequest(const Table& t) {
  Document request;
  request.CopyFrom(*t.definition, request.GetAllocator());
  auto& a = request.GetAllocator();
  if (!request.HasMember("Tags") || !request["Tags"].IsArray()) {
    request.RemoveMember("Tags");
    request.AddMember("Tags", Value(rapidjson::kArrayType), a);
  }
  Value tag(rapidjson::kObjectType);
  tag.AddMember("Key", Value(kInitTag.data(), static_cast<rapidjson::SizeType>(kInitTag.size()), a),
                a);
  tag.AddMember("Value",
                Value(kLoading.data(), static_cast<rapidjson::SizeType>(kLoading.size()), a), a);
  request["Tags"].PushBack(tag, a);
  return Compact(request);
}

std::string BatchRequest(const std::string& table, const std::vector<const Line*>& lines) {
  std::string body = "{\"RequestItems\":{" + Quoted(table) + ":[";
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) body += ',';
    body += "{\"PutRequest\":{\"Item\":" + api::ItemJson(lines[i]->item) + "}}";
  }
  return body + "]}}";
}

// The line among `lines` whose item PutItem refuses, with DynamoDB's reason, or `error` when
// each is accepted alone.
Error Locate(const Api& api, const std::string& table, const std::vector<const Line*>& lines,
             Error error) {
  for (const Line* line : lines) {
    Result<Document> put = api.Call("PutItem", "{\"TableName\":" + Quoted(table) +
                                                   ",\"Item\":" + api::ItemJson(line->item) + "}");
    if (!put.ok() && put.error().type == ErrorType::kValidation) {
      return Bad(line->where + ": " + put.error().message);
    }
  }
  return error;
}

// Writes `lines` in batches of distinct keys, sending UnprocessedItems again.
Status WriteBatch(const Api& api, const std::string& table, std::vector<const Line*> batch) {
  for (int round = 0; !batch.empty(); ++round) {
    if (round > kMaxUnprocessedRounds) return Error::Internal("items stayed unprocessed");
    Result<Document> answer = api.Call("BatchWriteItem", BatchRequest(table, batch));
    if (!answer.ok()) {
      if (answer.error().type == ErrorType::kValidation) {
        return Locate(api, table, batch, std::move(answer).error());
      }
      return std::move(answer).error();
    }
    // UnprocessedItems hold the requests as sent: each item as api::ItemJson wrote it.
    const Value* left = Find(answer.value(), "UnprocessedItems");
    const Value* mine = left ? Find(*left, table) : nullptr;
    std::set<std::string> unprocessed;
    if (mine != nullptr && mine->IsArray()) {
      for (const Value& request : mine->GetArray()) {
        const Value* put = Find(request, "PutRequest");
        if (const Value* item = put ? Find(*put, "Item") : nullptr)
          unprocessed.insert(Compact(*item));
      }
    }
    std::vector<const Line*> again;
    for (const Line* line : batch) {
      if (unprocessed.count(api::ItemJson(line->item)) > 0) again.push_back(line);
    }
    batch = std::move(again);
    if (!batch.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10 * (round + 1)));
  }
  return Status::Ok();
}

Status Load(const Api& api, const Table& t) {
  std::vector<const Line*> batch;
  std::set<std::string> keys;  // of the batch: a key at most once in one BatchWriteItem
  const store::TableInfo schema = KeysOf(*t.definition);
  for (const Line& line : t.items) {
    std::string key = api::ItemJson(api::KeyOf(schema.key_schema, line.item));
    if (batch.size() == kBatchItems || keys.count(key) > 0) {
      FDYNO_RETURN_IF_ERROR(WriteBatch(api, t.name, std::move(batch)));
      batch.clear();
      keys.clear();
    }
    keys.insert(std::move(key));
    batch.push_back(&line);
  }
  if (!batch.empty()) FDYNO_RETURN_IF_ERROR(WriteBatch(api, t.name, std::move(batch)));
  return Status::Ok();
}

// Creates and loads `t`, or leaves it as a start before left it.
Status Init(const Api& api, const Table& t, const std::string& file) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<Document> existing, Describe(api, t.name));
  if (existing) {
    const Value* description = Find(*existing, "Table");
    const std::string diff =
        Differences(DefinitionOf(*description, true), DefinitionOf(*t.definition, false));
    if (!diff.empty()) {
      return Bad("table " + t.name + " exists and differs from " + file + ": " + diff);
    }
    FDYNO_ASSIGN_OR_RETURN(std::string tag, InitTag(api, t.name));
    if (tag != kLoading) {
      spdlog::info("--init: table {} exists as {} defines it; left alone", t.name, file);
      return Status::Ok();
    }
    spdlog::warn("--init: table {} was left half loaded by an earlier start; loading it again",
                 t.name);
    FDYNO_RETURN_IF_ERROR(Drop(api, t.name));
  }
  Result<Document> created = api.Call("CreateTable", CreateRequest(t));
  if (!created.ok()) {
    if (created.error().type == ErrorType::kValidation) {
      return Bad(file + ": " + created.error().message);
    }
    return std::move(created).error();
  }
  if (Status loaded = Load(api, t); !loaded.ok()) {
    Status dropped = Drop(api, t.name);
    if (!dropped.ok()) spdlog::error("--init: dropping {}: {}", t.name, dropped.error().message);
    return loaded;
  }
  FDYNO_RETURN_IF_ERROR(SetInitTag(api, t.name, kComplete));
  spdlog::info("--init: table {} created with {} item(s)", t.name, t.items.size());
  return Status::Ok();
}

}  // namespace

Status InitTables(const api::OperationRegistry& registry, const InitOptions& options) {
  FDYNO_ASSIGN_OR_RETURN(std::vector<TableFiles> files, FindTables(options.dir));
  // Every file read and checked before anything is created.
  std::vector<Table> tables;
  for (const TableFiles& f : files) {
    FDYNO_ASSIGN_OR_RETURN(Table t, ReadTable(f));
    tables.push_back(std::move(t));
  }
  const Api api(registry, options);
  for (size_t i = 0; i < tables.size(); ++i) {
    FDYNO_RETURN_IF_ERROR(Init(api, tables[i], files[i].definition.string()));
  }
  return Status::Ok();
}

}  // namespace fdyno::main
