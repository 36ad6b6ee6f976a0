// Seeded random model test of the secondary indexes at the API level. Random PutItem,
// UpdateItem, DeleteItem, BatchWriteItem and TransactWriteItems requests with conditions go
// through the real operation handlers (BuildOperationRegistry) on the embedded engine and are
// applied to an in-memory model of the base table. Then every index, read back by Query (every
// index partition, both directions, paginated at small Limits) and by parallel Scan, must equal
// the index recomputed from the model, and the base table must equal the model:
//  * after random writes, after closing and reopening the engine, and after more writes;
//  * for a GSI created by UpdateTable and filled by the backfill worker while other threads
//    keep writing (each thread owns its partition keys, so its model is exact);
//  * for a backfill interrupted by a restart after a few pages, which must resume from its
//    cursor and end exact;
//  * for four threads writing concurrently while the fault-injecting engine answers commits
//    with 1021 (after applying and without) and 1020: each request must still take effect
//    exactly once, so indexes and ItemCounts stay exact.
//
// The index definitions, projections (ALL, KEYS_ONLY, INCLUDE), sparseness and entry order
// are the test's own: it does not call store/indexes.h. Order within an index partition is by
// index sort key, then by base key (fdyno's tie order; DynamoDB documents none).
//
// Seeds 1..3; FDYNO_FULL=1 runs seeds 1..16 with longer histories; FDYNO_SEED=n replays one
// seed: FDYNO_SEED=7 build/tests/integration/integration_index_model_test
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "api/api.h"
#include "api/testing/call.h"
#include "kv/engines/embedded/embedded.h"
#include "kv/engines/faulty/faulty.h"
#include "kv/run.h"
#include "model/attribute_value.h"
#include "model/json.h"
#include "model/number.h"
#include "seeds.h"
#include "store/catalog.h"
#include "store/maintainers.h"
#include "workers/backfill.h"

namespace fdyno::api {
namespace {

using model::AttributeValue;
using model::Item;

constexpr char kTable[] = "idx_model";

using integration::FullRun;

std::vector<uint64_t> Seeds() { return integration::Seeds(3, 16); }

// ---- values and the model ----

AttributeValue S(std::string s) { return AttributeValue::S(std::move(s)); }
AttributeValue N(int64_t n) {
  return AttributeValue::N(model::Number::Parse(std::to_string(n)).value());
}

// Every attribute of the test has one type: N for these, S for the others.
bool IsNumeric(const std::string& attr) { return attr == "sk" || attr == "g2" || attr == "x"; }

// A scalar of the test (strings and integers), ordered as DynamoDB orders keys of one type.
using Scalar = std::variant<int64_t, std::string>;

std::optional<Scalar> Get(const Item& item, const std::string& attr) {
  auto it = item.find(attr);
  if (it == item.end()) return std::nullopt;
  if (it->second.type() == model::Type::kS) return Scalar(std::get<std::string>(it->second.v));
  if (it->second.type() == model::Type::kN) {
    return Scalar(std::stoll(std::get<model::Number>(it->second.v).ToString()));
  }
  return std::nullopt;
}

AttributeValue ToValue(const Scalar& s) {
  if (const auto* n = std::get_if<int64_t>(&s)) return N(*n);
  return S(std::get<std::string>(s));
}

std::string Text(const Scalar& s) {
  if (const auto* n = std::get_if<int64_t>(&s)) return std::to_string(*n);
  const std::string& str = std::get<std::string>(s);
  return str.size() > 20 ? str.substr(0, 20) + "...(" + std::to_string(str.size()) + ")" : str;
}

using Key = std::pair<std::string, int64_t>;  // (pk, sk): std::map order is the base key order
using Model = std::map<Key, Item>;

Item KeyItem(const Key& k) { return {{"pk", S(k.first)}, {"sk", N(k.second)}}; }
std::string KeyJson(const Key& k) { return model::ItemToJson(KeyItem(k)); }
std::string KeyText(const Key& k) { return k.first + "/" + std::to_string(k.second); }

std::optional<Key> KeyOf(const Item& item) {
  auto pk = Get(item, "pk");
  auto sk = Get(item, "sk");
  if (!pk || !sk || !std::holds_alternative<std::string>(*pk) ||
      !std::holds_alternative<int64_t>(*sk)) {
    return std::nullopt;
  }
  return Key{std::get<std::string>(*pk), std::get<int64_t>(*sk)};
}

std::string ItemText(const Item& item) {
  std::string out = "{";
  for (const auto& [name, value] : item) {
    if (out.size() > 1) out += ", ";
    auto s = Get(item, name);
    out += name + "=" + (s ? Text(*s) : "?");
  }
  return out + "}";
}

// ---- the indexes, as the test defines them ----

enum class Proj { kAll, kKeysOnly, kInclude };

struct IndexDef {
  std::string name;
  bool local = false;
  std::string hash;
  std::optional<std::string> range;
  Proj proj = Proj::kAll;
  std::vector<std::string> include;
};

// The table: pk (S) HASH, sk (N) RANGE, with these indexes at creation.
const IndexDef kByLsk{"by_lsk", true, "pk", "lsk", Proj::kKeysOnly, {}};
const IndexDef kSparse{"sparse", false, "g", std::nullopt, Proj::kAll, {}};  // g is rare
const IndexDef kIncl{"incl", false, "g2", "g3", Proj::kInclude, {"x", "y"}};
// Created by UpdateTable while threads write.
const IndexDef kLate{"late", false, "h", "x", Proj::kInclude, {"y"}};
const IndexDef kLate2{"late2", false, "g3", "h", Proj::kKeysOnly, {}};

Item Project(const IndexDef& d, const Item& item) {
  if (d.proj == Proj::kAll) return item;
  std::set<std::string> keep = {"pk", "sk", d.hash};
  if (d.range) keep.insert(*d.range);
  for (const auto& a : d.include) keep.insert(a);
  Item out;
  for (const auto& [name, value] : item) {
    if (keep.count(name)) out.emplace(name, value);
  }
  return out;
}

struct Entry {
  std::optional<Scalar> range;
  Key key;
  Item image;
};

// Index partition (hash value) -> entries in index order. Items lacking a key attribute have
// no entry (sparse).
std::map<Scalar, std::vector<Entry>> ExpectedIndex(const IndexDef& d, const Model& m) {
  std::map<Scalar, std::vector<Entry>> out;
  for (const auto& [key, item] : m) {
    auto h = Get(item, d.hash);
    if (!h) continue;
    std::optional<Scalar> r;
    if (d.range) {
      r = Get(item, *d.range);
      if (!r) continue;
    }
    out[*h].push_back({r, key, Project(d, item)});
  }
  for (auto& [h, entries] : out) {
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
      return std::tie(a.range, a.key) < std::tie(b.range, b.key);
    });
  }
  return out;
}

std::string KeySchemaJson(const std::string& hash, const std::optional<std::string>& range) {
  std::string s = R"([{"AttributeName":")" + hash + R"(","KeyType":"HASH"})";
  if (range) s += R"(,{"AttributeName":")" + *range + R"(","KeyType":"RANGE"})";
  return s + "]";
}

std::string IndexJson(const IndexDef& d) {
  std::string s = R"({"IndexName":")" + d.name + R"(","KeySchema":)" +
                  KeySchemaJson(d.hash, d.range) + R"(,"Projection":{"ProjectionType":")";
  if (d.proj == Proj::kAll) s += "ALL\"";
  if (d.proj == Proj::kKeysOnly) s += "KEYS_ONLY\"";
  if (d.proj == Proj::kInclude) {
    s += R"(INCLUDE","NonKeyAttributes":[)";
    for (size_t i = 0; i < d.include.size(); ++i) {
      s += (i ? ",\"" : "\"") + d.include[i] + "\"";
    }
    s += "]";
  }
  return s + "}}";
}

std::string AttributeDefinitionJson(const std::string& attr) {
  return R"({"AttributeName":")" + attr + R"(","AttributeType":")" + (IsNumeric(attr) ? "N" : "S") +
         R"("})";
}

// ---- one service instance over a database ----

struct Instance {
  explicit Instance(kv::Database* database) : db(database) {
    ApiDeps deps;
    deps.db = db;
    deps.catalog = &catalog;
    registry = BuildOperationRegistry(deps);
  }

  // Through the operation's asynchronous form (the one `fdyno serve` runs: the commit is the
  // engine's CommitAsync, retries run on `blocking`) when `async` is set and the operation has
  // one; through its synchronous form otherwise.
  Result<std::string> Call(const std::string& op, const std::string& json) {
    if (async != nullptr && registry.FindAsync(op) != nullptr) {
      RequestContext ctx;
      ctx.blocking = async->Blocking();
      return testing::CallOperationAsync(registry, op, json, std::move(ctx));
    }
    return testing::CallOperation(registry, op, json);
  }

  kv::Database* db;
  store::Catalog catalog;
  OperationRegistry registry;
  testing::BlockingThreads* async = nullptr;
};

rapidjson::Document ParseJson(const std::string& text) {
  rapidjson::Document d;
  d.Parse(text.c_str(), text.size());
  EXPECT_FALSE(d.HasParseError()) << text.substr(0, 300);
  return d;
}

std::string ToJson(const rapidjson::Value& v) {
  rapidjson::StringBuffer b;
  rapidjson::Writer<rapidjson::StringBuffer> w(b);
  v.Accept(w);
  return std::string(b.GetString(), b.GetSize());
}

Item DecodeItemOrFail(const rapidjson::Value& v) {
  auto item = model::DecodeItem(v);
  EXPECT_TRUE(item.ok()) << ToJson(v);
  return item.ok() ? *item : Item{};
}

// The engine and its services on one directory; Restart closes both and reopens them. With
// `faulty`, the services run on the fault-injecting engine wrapping it (faults off until
// faulty()->SetOptions).
class Database {
 public:
  explicit Database(std::string dir, bool faulty = false)
      : dir_(std::move(dir)), with_faults_(faulty) {
    std::filesystem::remove_all(dir_);
    Open();
  }
  ~Database() {
    Close();
    std::filesystem::remove_all(dir_);
  }
  void Restart() {
    Close();
    Open();
  }
  Instance& in() { return *instance_; }
  kv::Database& db() { return *db_; }
  kv::FaultyDatabase* faulty() { return faulty_.get(); }

 private:
  void Open() {
    kv::EmbeddedOptions options;
    options.path = dir_;
    options.durability = kv::Durability::kNone;
    auto db = kv::OpenEmbedded(options);
    if (!db.ok()) {
      ADD_FAILURE() << db.error().message;
      std::abort();
    }
    db_ = std::move(*db);
    if (with_faults_) faulty_ = kv::WrapFaulty(db_.get(), kv::FaultOptions{});
    instance_ = std::make_unique<Instance>(faulty_ ? faulty_.get() : db_.get());
  }
  void Close() {
    instance_.reset();
    faulty_.reset();
    db_.reset();
  }
  std::string dir_;
  bool with_faults_;
  std::unique_ptr<kv::Database> db_;
  std::unique_ptr<kv::FaultyDatabase> faulty_;
  std::unique_ptr<Instance> instance_;
};

std::string TempDir(const std::string& name) {
  return ::testing::TempDir() + "/index_model_" + name + "_" + std::to_string(::getpid());
}

void CreateTable(Instance& in) {
  std::string req = R"({"TableName":")" + std::string(kTable) + R"(","AttributeDefinitions":[)";
  const char* attrs[] = {"pk", "sk", "lsk", "g", "g2", "g3"};
  for (size_t i = 0; i < std::size(attrs); ++i) {
    req += (i ? "," : "") + AttributeDefinitionJson(attrs[i]);
  }
  req += R"(],"KeySchema":)" + KeySchemaJson("pk", "sk") + R"(,"LocalSecondaryIndexes":[)" +
         IndexJson(kByLsk) + R"(],"GlobalSecondaryIndexes":[)" + IndexJson(kSparse) + "," +
         IndexJson(kIncl) + R"(],"BillingMode":"PAY_PER_REQUEST"})";
  auto r = in.Call("CreateTable", req);
  ASSERT_TRUE(r.ok()) << r.error().message;
}

// IndexStatus and Backfilling of global index `name` in DescribeTable ("" when absent).
std::pair<std::string, bool> GsiStatus(Instance& in, const std::string& name) {
  auto r = in.Call("DescribeTable", R"({"TableName":")" + std::string(kTable) + "\"}");
  EXPECT_TRUE(r.ok()) << r.error().message;
  if (!r.ok()) return {"", false};
  auto d = ParseJson(*r);
  const auto& t = d["Table"];
  if (!t.HasMember("GlobalSecondaryIndexes")) return {"", false};
  for (const auto& g : t["GlobalSecondaryIndexes"].GetArray()) {
    if (g["IndexName"].GetString() != name) continue;
    bool backfilling = g.HasMember("Backfilling") && g["Backfilling"].GetBool();
    return {g["IndexStatus"].GetString(), backfilling};
  }
  return {"", false};
}

// ---- random requests and what the model says they do ----

// A condition expression and its meaning on the item it is evaluated against.
struct Cond {
  enum Kind { kNone, kNotExists, kExists, kXLess, kNoGOrGEquals, kCount } kind = kNone;
  Scalar operand;

  bool Holds(const std::optional<Item>& old) const {
    switch (kind) {
      case kNone:
        return true;
      case kNotExists:
        return !old;
      case kExists:
        return old.has_value();
      case kXLess: {
        if (!old) return false;
        auto x = Get(*old, "x");
        return x && *x < operand;
      }
      case kNoGOrGEquals: {
        if (!old) return true;
        auto g = Get(*old, "g");
        return !g || *g == operand;
      }
      case kCount:
        break;
    }
    return false;
  }
  std::string Text() const {
    switch (kind) {
      case kNone:
        return "always";
      case kNotExists:
        return "attribute_not_exists(pk)";
      case kExists:
        return "attribute_exists(pk)";
      case kXLess:
        return "x < " + fdyno::api::Text(operand);
      case kNoGOrGEquals:
        return "attribute_not_exists(g) OR g = " + fdyno::api::Text(operand);
      case kCount:
        break;
    }
    return "?";
  }
  // The expression with names #c0 and values :c0.
  std::string Expression() const {
    switch (kind) {
      case kNotExists:
        return "attribute_not_exists(#c0)";
      case kExists:
        return "attribute_exists(#c0)";
      case kXLess:
        return "#c0 < :c0";
      case kNoGOrGEquals:
        return "attribute_not_exists(#c0) OR #c0 = :c0";
      default:
        return "";
    }
  }
  std::vector<std::pair<std::string, std::string>> Names() const {
    if (kind == kNone) return {};
    return {{"#c0", kind == kXLess ? "x" : kind == kNoGOrGEquals ? "g" : "pk"}};
  }
  std::vector<std::pair<std::string, AttributeValue>> Values() const {
    if (kind == kXLess || kind == kNoGOrGEquals) return {{":c0", ToValue(operand)}};
    return {};
  }
};

// SET / REMOVE of attributes; no expression at all when `has_expression` is false.
struct UpdateSpec {
  std::vector<std::pair<std::string, AttributeValue>> set;
  std::vector<std::string> remove;
  bool has_expression = true;

  std::string Expression() const {
    std::string e;
    for (size_t i = 0; i < set.size(); ++i) {
      e +=
          (i ? ", " : "SET ") + std::string("#u") + std::to_string(i) + " = :u" + std::to_string(i);
    }
    for (size_t i = 0; i < remove.size(); ++i) {
      e +=
          (i ? ", " : (e.empty() ? "REMOVE " : " REMOVE ")) + std::string("#r") + std::to_string(i);
    }
    return e;
  }
  std::string Text() const {
    if (!has_expression) return "(no UpdateExpression)";
    std::string s;
    for (const auto& [a, v] : set) s += (s.empty() ? "SET " : ", ") + a + "=" + ItemText({{a, v}});
    for (size_t i = 0; i < remove.size(); ++i) s += (i ? ", " : " REMOVE ") + remove[i];
    return s;
  }
  // The item after the update of `old` at `key` (nullopt: still absent). DynamoDB creates a
  // missing item unless the update only removes attributes.
  std::optional<Item> Apply(const Key& key, const std::optional<Item>& old) const {
    if (!old && has_expression && set.empty()) return std::nullopt;
    Item item = old ? *old : KeyItem(key);
    for (const auto& [a, v] : set) item[a] = v;
    for (const auto& a : remove) item.erase(a);
    return item;
  }
};

// ExpressionAttributeNames / ExpressionAttributeValues members (with a leading comma), or "".
std::string ExprMembers(const std::vector<std::pair<std::string, std::string>>& names,
                        const std::vector<std::pair<std::string, AttributeValue>>& values) {
  std::string s;
  if (!names.empty()) {
    s += R"(,"ExpressionAttributeNames":{)";
    for (size_t i = 0; i < names.size(); ++i) {
      s += (i ? ",\"" : "\"") + names[i].first + "\":\"" + names[i].second + "\"";
    }
    s += "}";
  }
  if (!values.empty()) {
    s += R"(,"ExpressionAttributeValues":{)";
    for (size_t i = 0; i < values.size(); ++i) {
      s += (i ? ",\"" : "\"") + values[i].first +
           "\":" + model::AttributeValueToJson(values[i].second);
    }
    s += "}";
  }
  return s;
}

// Condition and update members of one request or transaction action.
std::string WriteMembers(const Cond& cond, const UpdateSpec* update) {
  auto names = cond.Names();
  auto values = cond.Values();
  std::string s;
  if (update != nullptr && update->has_expression) {
    for (size_t i = 0; i < update->set.size(); ++i) {
      names.push_back({"#u" + std::to_string(i), update->set[i].first});
      values.push_back({":u" + std::to_string(i), update->set[i].second});
    }
    for (size_t i = 0; i < update->remove.size(); ++i) {
      names.push_back({"#r" + std::to_string(i), update->remove[i]});
    }
    s += R"(,"UpdateExpression":")" + update->Expression() + "\"";
  }
  if (cond.kind != Cond::kNone) s += R"(,"ConditionExpression":")" + cond.Expression() + "\"";
  return s + ExprMembers(names, values);
}

// What makes a write invalid: an index key of the wrong type, or an empty string index key.
struct Invalid {
  std::string attr;
  AttributeValue value;
};

// A random writer over its own partition keys with an exact model of them. Not thread-safe;
// each thread has its own.
class Writer {
 public:
  // Writes keys (pk, sk) with pk in `pks` and sk in [0, sort_keys).
  Writer(uint64_t seed, std::vector<std::string> pks, std::string label, int sort_keys = 8)
      : rng_(seed), pks_(std::move(pks)), label_(std::move(label)), sort_keys_(sort_keys) {}

  const Model& model() const { return model_; }
  int steps() const { return steps_.load(); }
  // "N requests (A applied, C failed a condition, I invalid)". REQUIRES: not running.
  std::string Summary() const {
    return std::to_string(steps_.load()) + " requests (" + std::to_string(applied_) + " applied, " +
           std::to_string(failed_) + " failed a condition, " + std::to_string(invalid_) +
           " invalid)";
  }

  // One random write request through `in`, checked against the model and applied to it.
  void Step(Instance& in) {
    ++steps_;
    const int op = Pick(100);
    if (op < 25) {
      Put(in);
    } else if (op < 55) {
      Update(in);
    } else if (op < 70) {
      Delete(in);
    } else if (op < 85) {
      Batch(in);
    } else {
      Transact(in);
    }
  }

  // The recent requests on `k` ("" when this writer never wrote it). REQUIRES: not running.
  std::string History(const Key& k) const {
    auto it = history_.find(k);
    if (it == history_.end()) return "";
    std::string s = "\n  history of " + KeyText(k) + " (" + label_ + "):";
    for (const std::string& h : it->second) s += "\n    " + h;
    return s;
  }

 private:
  int Pick(int n) { return static_cast<int>(rng_() % static_cast<uint64_t>(n)); }
  bool OneIn(int n) { return Pick(n) == 0; }

  // Where a failure happened, with the recent history of the keys of the current request.
  std::string Where() const {
    std::string s = label_ + " step " + std::to_string(steps_.load());
    for (const Key& k : current_) s += History(k);
    return s + "\n ";
  }

  // Remembers what the current request did to `k` (the last 8 per key).
  void Record(const Key& k, const std::string& what, const Result<std::string>& r) {
    auto& h = history_[k];
    std::string outcome = r.ok() ? "ok" : std::string(WireType(r.error().type));
    auto it = model_.find(k);
    h.push_back("step " + std::to_string(steps_.load()) + " " + what + " -> " + outcome +
                "; model " + (it == model_.end() ? "absent" : ItemText(it->second)));
    if (h.size() > 8) h.erase(h.begin());
  }

  Key RandomKey() { return {pks_[Pick(static_cast<int>(pks_.size()))], Pick(sort_keys_)}; }

  // `n` distinct random keys.
  std::vector<Key> RandomKeys(int n) {
    std::set<Key> keys;
    while (static_cast<int>(keys.size()) < n) keys.insert(RandomKey());
    std::vector<Key> out(keys.begin(), keys.end());
    std::shuffle(out.begin(), out.end(), rng_);
    return out;
  }

  std::optional<Item> Old(const Key& k) const {
    auto it = model_.find(k);
    if (it == model_.end()) return std::nullopt;
    return it->second;
  }

  void Apply(const Key& k, const std::optional<Item>& item) {
    if (item) {
      model_[k] = *item;
    } else {
      model_.erase(k);
    }
  }

  AttributeValue RandomValue(const std::string& attr) {
    if (attr == "lsk") return S("l" + std::to_string(Pick(4)));
    if (attr == "g") return S("g" + std::to_string(Pick(3)));
    if (attr == "g2") return N(Pick(3));
    if (attr == "g3") return S("v" + std::to_string(Pick(3)));
    if (attr == "h") return S("h" + std::to_string(Pick(3)));
    if (attr == "x") return N(Pick(100));
    if (attr == "y") {
      // Now and then an item too large for one engine value (chunked base item and entries).
      if (OneIn(60)) return S(std::string(120'000, static_cast<char>('a' + Pick(26))));
      return S("y" + std::to_string(Pick(1000)));
    }
    return S("z" + std::to_string(Pick(10)));  // z: projected by ALL only
  }

  Item RandomItem(const Key& k) {
    static const std::pair<const char*, int> kPresence[] = {
        {"lsk", 70}, {"g", 30}, {"g2", 75}, {"g3", 75}, {"h", 60}, {"x", 60}, {"y", 50}, {"z", 50}};
    Item item = KeyItem(k);
    for (const auto& [attr, percent] : kPresence) {
      if (Pick(100) < percent) item[attr] = RandomValue(attr);
    }
    return item;
  }

  Cond RandomCond(bool allow_none = true) {
    Cond c;
    int kind = allow_none ? Pick(Cond::kCount) : 1 + Pick(Cond::kCount - 1);
    if (allow_none && Pick(3) == 0) kind = Cond::kNone;  // mostly unconditional
    c.kind = static_cast<Cond::Kind>(kind);
    if (c.kind == Cond::kXLess) c.operand = int64_t{Pick(100)};
    if (c.kind == Cond::kNoGOrGEquals) c.operand = "g" + std::to_string(Pick(3));
    return c;
  }

  UpdateSpec RandomUpdate(bool require_action) {
    static const char* kAttrs[] = {"lsk", "g", "g2", "g3", "h", "x", "y", "z"};
    UpdateSpec u;
    if (OneIn(8)) {
      // Only removals: on a missing item they create nothing.
      for (const char* a : kAttrs) {
        if (OneIn(3)) u.remove.push_back(a);
      }
      if (u.remove.empty()) u.remove.push_back("z");
      return u;
    }
    for (const char* a : kAttrs) {
      int p = Pick(10);
      if (p < 3) {
        u.set.push_back({a, RandomValue(a)});
      } else if (p < 5) {
        u.remove.push_back(a);
      }
    }
    if (u.set.empty() && u.remove.empty()) {
      if (require_action || !OneIn(3)) {
        u.set.push_back({"x", RandomValue("x")});
      } else {
        u.has_expression = false;  // no UpdateExpression: creates the bare key
      }
    }
    return u;
  }

  Invalid RandomInvalid() {
    switch (Pick(3)) {
      case 0:
        return {"g", N(1)};  // sparse: S expected
      case 1:
        return {"g2", S("two")};  // incl: N expected
      default:
        return {"lsk", S("")};  // by_lsk: empty string key
    }
  }

  void ExpectInvalid(const Result<std::string>& r, const std::string& what) {
    ++invalid_;
    if (r.ok()) {
      ADD_FAILURE() << Where() << ": " << what << " with an invalid index key succeeded";
      return;
    }
    EXPECT_EQ(r.error().type, ErrorType::kValidation) << Where() << ": " << r.error().message;
    EXPECT_EQ(r.error().message.rfind("One or more parameter values", 0), 0u)
        << Where() << ": " << r.error().message;
  }

  // Compares the ReturnValues attributes of a response with the model's image.
  void ExpectAttributes(const std::string& response, const std::optional<Item>& want,
                        const std::string& what) {
    auto d = ParseJson(response);
    if (!want) {
      EXPECT_FALSE(d.HasMember("Attributes")) << Where() << ": " << what << " " << response;
      return;
    }
    if (!d.HasMember("Attributes")) {
      ADD_FAILURE() << Where() << ": " << what << " returned no Attributes; model has "
                    << ItemText(*want);
      return;
    }
    Item got = DecodeItemOrFail(d["Attributes"]);
    EXPECT_TRUE(got == *want) << Where() << ": " << what << " got " << ItemText(got) << " model "
                              << ItemText(*want);
  }

  void ExpectOutcome(const Result<std::string>& r, bool holds, const std::string& what) {
    ++(holds ? applied_ : failed_);
    if (holds) {
      EXPECT_TRUE(r.ok()) << Where() << ": " << what << ": " << r.error().message;
    } else {
      ASSERT_FALSE(r.ok()) << Where() << ": " << what << " succeeded; the model's condition fails";
      EXPECT_EQ(r.error().type, ErrorType::kConditionalCheckFailed)
          << Where() << ": " << what << ": " << r.error().message;
    }
  }

  void Put(Instance& in) {
    const Key k = RandomKey();
    Item item = RandomItem(k);
    const Cond cond = RandomCond();
    const bool invalid = cond.kind == Cond::kNone && OneIn(25);
    if (invalid) {
      Invalid bad = RandomInvalid();
      item[bad.attr] = bad.value;
    }
    const bool return_old = OneIn(2);
    std::string req = R"({"TableName":")" + std::string(kTable) + R"(","Item":)" +
                      model::ItemToJson(item) + WriteMembers(cond, nullptr) +
                      (return_old ? R"(,"ReturnValues":"ALL_OLD")" : "") + "}";
    current_ = {k};
    auto r = in.Call("PutItem", req);
    if (invalid) return ExpectInvalid(r, "PutItem " + KeyText(k));
    const auto old = Old(k);
    ExpectOutcome(r, cond.Holds(old), "PutItem " + KeyText(k));
    if (r.ok()) {
      if (return_old) ExpectAttributes(*r, old, "PutItem ALL_OLD");
      Apply(k, item);
    }
    Record(k, "PutItem " + ItemText(item) + " if " + cond.Text(), r);
  }

  void Update(Instance& in) {
    const Key k = RandomKey();
    UpdateSpec u = RandomUpdate(false);
    const Cond cond = RandomCond();
    const bool invalid = cond.kind == Cond::kNone && OneIn(25);
    if (invalid) {
      Invalid bad = RandomInvalid();
      u.has_expression = true;
      u.set.push_back({bad.attr, bad.value});
      u.remove.erase(std::remove(u.remove.begin(), u.remove.end(), bad.attr), u.remove.end());
      for (size_t i = 0; i + 1 < u.set.size(); ++i) {
        if (u.set[i].first == bad.attr) u.set.erase(u.set.begin() + static_cast<long>(i));
      }
    }
    const int rv = Pick(3);  // NONE, ALL_OLD, ALL_NEW
    std::string req = R"({"TableName":")" + std::string(kTable) + R"(","Key":)" + KeyJson(k) +
                      WriteMembers(cond, &u) +
                      (rv == 1   ? R"(,"ReturnValues":"ALL_OLD")"
                       : rv == 2 ? R"(,"ReturnValues":"ALL_NEW")"
                                 : "") +
                      "}";
    current_ = {k};
    auto r = in.Call("UpdateItem", req);
    if (invalid) return ExpectInvalid(r, "UpdateItem " + KeyText(k));
    const auto old = Old(k);
    ExpectOutcome(r, cond.Holds(old), "UpdateItem " + KeyText(k) + " " + u.Expression());
    if (r.ok()) {
      const auto now = u.Apply(k, old);
      if (rv == 1) ExpectAttributes(*r, old, "UpdateItem ALL_OLD");
      if (rv == 2) ExpectAttributes(*r, now, "UpdateItem ALL_NEW");
      Apply(k, now);
    }
    Record(k, "UpdateItem " + u.Text() + " if " + cond.Text(), r);
  }

  void Delete(Instance& in) {
    const Key k = RandomKey();
    const Cond cond = RandomCond();
    const bool return_old = OneIn(2);
    std::string req = R"({"TableName":")" + std::string(kTable) + R"(","Key":)" + KeyJson(k) +
                      WriteMembers(cond, nullptr) +
                      (return_old ? R"(,"ReturnValues":"ALL_OLD")" : "") + "}";
    current_ = {k};
    auto r = in.Call("DeleteItem", req);
    const auto old = Old(k);
    ExpectOutcome(r, cond.Holds(old), "DeleteItem " + KeyText(k));
    if (r.ok()) {
      if (return_old) ExpectAttributes(*r, old, "DeleteItem ALL_OLD");
      Apply(k, std::nullopt);
    }
    Record(k, "DeleteItem if " + cond.Text(), r);
  }

  void Batch(Instance& in) {
    const std::vector<Key> keys = RandomKeys(1 + Pick(6));
    const bool invalid = OneIn(20);
    std::vector<std::optional<Item>> writes;  // nullopt: delete
    std::string req = R"({"RequestItems":{")" + std::string(kTable) + R"(":[)";
    for (size_t i = 0; i < keys.size(); ++i) {
      std::optional<Item> w;
      if (!OneIn(3)) w = RandomItem(keys[i]);
      if (invalid && i == 0) {
        if (!w) w = RandomItem(keys[i]);
        Invalid bad = RandomInvalid();
        (*w)[bad.attr] = bad.value;
      }
      req += i ? "," : "";
      req += w ? R"({"PutRequest":{"Item":)" + model::ItemToJson(*w) + "}}"
               : R"({"DeleteRequest":{"Key":)" + KeyJson(keys[i]) + "}}";
      writes.push_back(std::move(w));
    }
    req += "]}}";
    current_ = keys;
    auto r = in.Call("BatchWriteItem", req);
    if (invalid) return ExpectInvalid(r, "BatchWriteItem");
    ASSERT_TRUE(r.ok()) << Where() << ": BatchWriteItem: " << r.error().message;
    ++applied_;
    // Requests that come back unprocessed did not happen.
    std::set<Key> unprocessed;
    auto d = ParseJson(*r);
    if (d.HasMember("UnprocessedItems") && d["UnprocessedItems"].HasMember(kTable)) {
      for (const auto& w : d["UnprocessedItems"][kTable].GetArray()) {
        const auto& inner =
            w.HasMember("PutRequest") ? w["PutRequest"]["Item"] : w["DeleteRequest"]["Key"];
        if (auto k = KeyOf(DecodeItemOrFail(inner))) unprocessed.insert(*k);
      }
    }
    for (size_t i = 0; i < keys.size(); ++i) {
      if (!unprocessed.count(keys[i])) Apply(keys[i], writes[i]);
      Record(keys[i],
             std::string("BatchWriteItem ") +
                 (writes[i] ? "put " + ItemText(*writes[i]) : "delete") +
                 (unprocessed.count(keys[i]) ? " (unprocessed)" : ""),
             r);
    }
  }

  void Transact(Instance& in) {
    struct Action {
      int kind;  // 0 Put, 1 Update, 2 Delete, 3 ConditionCheck
      Key key;
      Cond cond;
      Item item;
      UpdateSpec update;
    };
    const std::vector<Key> keys = RandomKeys(1 + Pick(4));
    const bool invalid = OneIn(20);
    std::vector<Action> actions;
    std::string req = R"({"TransactItems":[)";
    for (size_t i = 0; i < keys.size(); ++i) {
      Action a;
      a.kind = Pick(4);
      a.key = keys[i];
      a.cond = RandomCond(a.kind != 3);
      if (invalid && i == 0) {
        a.kind = 0;
        a.cond = Cond{};
      }
      std::string body = R"({"TableName":")" + std::string(kTable) + "\"";
      if (a.kind == 0) {
        a.item = RandomItem(a.key);
        if (invalid && i == 0) {
          Invalid bad = RandomInvalid();
          a.item[bad.attr] = bad.value;
        }
        body += R"(,"Item":)" + model::ItemToJson(a.item) + WriteMembers(a.cond, nullptr);
      } else if (a.kind == 1) {
        a.update = RandomUpdate(true);
        body += R"(,"Key":)" + KeyJson(a.key) + WriteMembers(a.cond, &a.update);
      } else {
        body += R"(,"Key":)" + KeyJson(a.key) + WriteMembers(a.cond, nullptr);
      }
      static const char* kNames[] = {"Put", "Update", "Delete", "ConditionCheck"};
      req += (i ? ",{\"" : "{\"") + std::string(kNames[a.kind]) + "\":" + body + "}}";
      actions.push_back(std::move(a));
    }
    req += "]}";
    current_ = keys;
    auto r = in.Call("TransactWriteItems", req);
    auto record = [&] {
      static const char* kNames[] = {"Put", "Update", "Delete", "ConditionCheck"};
      for (const Action& a : actions) {
        std::string what = std::string("TransactWriteItems ") + kNames[a.kind];
        if (a.kind == 0) what += " " + ItemText(a.item);
        if (a.kind == 1) what += " " + a.update.Text();
        Record(a.key, what + " if " + a.cond.Text(), r);
      }
    };
    std::vector<std::string> want_codes;
    bool all_hold = true;
    for (const Action& a : actions) {
      bool holds = a.cond.Holds(Old(a.key));
      all_hold = all_hold && holds;
      want_codes.push_back(holds ? "None" : "ConditionalCheckFailed");
    }
    if (invalid) {
      ++invalid_;
      ASSERT_FALSE(r.ok()) << Where() << ": TransactWriteItems with an invalid index key succeeded";
      if (r.error().type == ErrorType::kTransactionCanceled) {
        auto reasons = ParseJson(r.error().cancellation_reasons_json);
        EXPECT_EQ(std::string(reasons[0]["Code"].GetString()), "ValidationError") << Where();
      } else {
        EXPECT_EQ(r.error().type, ErrorType::kValidation) << Where() << r.error().message;
      }
      return;
    }
    ++(all_hold ? applied_ : failed_);
    if (all_hold) {
      ASSERT_TRUE(r.ok()) << Where() << ": TransactWriteItems: " << r.error().message << "\n"
                          << req.substr(0, 2000);
      for (const Action& a : actions) {
        if (a.kind == 0) Apply(a.key, a.item);
        if (a.kind == 1) Apply(a.key, a.update.Apply(a.key, Old(a.key)));
        if (a.kind == 2) Apply(a.key, std::nullopt);
      }
      record();
      return;
    }
    record();
    ASSERT_FALSE(r.ok()) << Where() << ": TransactWriteItems succeeded; a condition fails";
    ASSERT_EQ(r.error().type, ErrorType::kTransactionCanceled) << Where() << r.error().message;
    auto reasons = ParseJson(r.error().cancellation_reasons_json);
    ASSERT_TRUE(reasons.IsArray()) << r.error().cancellation_reasons_json;
    std::vector<std::string> codes;
    for (const auto& reason : reasons.GetArray()) codes.push_back(reason["Code"].GetString());
    EXPECT_EQ(codes, want_codes) << Where() << ": " << r.error().message;
  }

  std::mt19937_64 rng_;
  std::vector<std::string> pks_;
  std::string label_;
  int sort_keys_;
  Model model_;
  std::vector<Key> current_;                         // keys of the request being made
  std::map<Key, std::vector<std::string>> history_;  // recent requests per key
  int applied_ = 0, failed_ = 0, invalid_ = 0;
  std::atomic<int> steps_{0};  // read by other threads (WriterThreads::AwaitProgress)
};

// ---- reading everything back ----

// Every page of a Query or Scan request (`base` without its closing brace), following
// LastEvaluatedKey. Checks page sizes against `limit` (0: none) and that every
// LastEvaluatedKey names exactly `key_attrs` with the values of the page's last item.
std::vector<Item> AllPages(Instance& in, const std::string& op, const std::string& base, int limit,
                           const std::set<std::string>& key_attrs, const std::string& where) {
  std::vector<Item> out;
  std::string start;
  for (int page = 0; page < 100'000; ++page) {
    std::string req = base;
    if (limit > 0) req += R"(,"Limit":)" + std::to_string(limit);
    if (!start.empty()) req += R"(,"ExclusiveStartKey":)" + start;
    req += "}";
    auto r = in.Call(op, req);
    if (!r.ok()) {
      ADD_FAILURE() << where << ": " << op << " failed: " << r.error().message << "\n" << req;
      return out;
    }
    auto d = ParseJson(*r);
    const auto& items = d["Items"].GetArray();
    if (limit > 0) {
      EXPECT_LE(static_cast<int>(items.Size()), limit) << where;
    }
    EXPECT_EQ(d["Count"].GetInt(), static_cast<int>(items.Size())) << where;
    for (const auto& i : items) out.push_back(DecodeItemOrFail(i));
    if (!d.HasMember("LastEvaluatedKey")) return out;
    Item lek = DecodeItemOrFail(d["LastEvaluatedKey"]);
    std::set<std::string> names;
    for (const auto& [n, v] : lek) names.insert(n);
    EXPECT_EQ(names, key_attrs) << where << ": LastEvaluatedKey " << ItemText(lek);
    if (items.Size() > 0) {
      const Item& last = out.back();
      for (const auto& [n, v] : lek) {
        auto it = last.find(n);
        EXPECT_TRUE(it != last.end() && it->second == v)
            << where << ": LastEvaluatedKey " << ItemText(lek) << " is not the last item "
            << ItemText(last);
      }
    }
    start = ToJson(d["LastEvaluatedKey"]);
  }
  ADD_FAILURE() << where << ": pagination does not end";
  return out;
}

std::string Describe(const std::vector<Item>& items) {
  std::string s;
  for (const Item& i : items) {
    auto k = KeyOf(i);
    s += (k ? KeyText(*k) : ItemText(i)) + " ";
  }
  return s;
}

// Base key -> item of a list read back; duplicates are failures.
std::map<Key, Item> ByKey(const std::vector<Item>& items, const std::string& where) {
  std::map<Key, Item> out;
  for (const Item& i : items) {
    auto k = KeyOf(i);
    if (!k) {
      ADD_FAILURE() << where << ": item without its base key: " << ItemText(i);
      continue;
    }
    if (!out.emplace(*k, i).second) {
      ADD_FAILURE() << where << ": " << KeyText(*k) << " returned twice";
    }
  }
  return out;
}

// Recent requests on a key, for failure messages.
using HistoryFn = std::function<std::string(const Key&)>;

void ExpectSameItems(const std::map<Key, Item>& got, const std::map<Key, Item>& want,
                     const std::string& where, const HistoryFn& history) {
  if (got == want) return;
  std::ostringstream diff;
  for (const auto& [k, item] : want) {
    auto it = got.find(k);
    if (it == got.end()) {
      diff << "\n  missing " << KeyText(k) << " " << ItemText(item) << history(k);
    } else if (it->second != item) {
      diff << "\n  differs " << KeyText(k) << ": got " << ItemText(it->second) << " want "
           << ItemText(item) << history(k);
    }
  }
  for (const auto& [k, item] : got) {
    if (!want.count(k)) diff << "\n  extra " << KeyText(k) << " " << ItemText(item) << history(k);
  }
  ADD_FAILURE() << where << ":" << diff.str();
}

std::string ScanBase(const std::string& index, int segment, int total) {
  std::string s = R"({"TableName":")" + std::string(kTable) + "\"";
  if (!index.empty()) s += R"(,"IndexName":")" + index + "\"";
  if (total > 1) {
    s +=
        R"(,"Segment":)" + std::to_string(segment) + R"(,"TotalSegments":)" + std::to_string(total);
  }
  return s;
}

// Scan of the table or an index in `total` parallel segments, paginated at `limit`.
std::map<Key, Item> ScanAll(Instance& in, const std::string& index, int limit, int total,
                            const std::set<std::string>& key_attrs, const std::string& where) {
  std::vector<Item> all;
  for (int seg = 0; seg < total; ++seg) {
    auto page = AllPages(in, "Scan", ScanBase(index, seg, total), limit, key_attrs,
                         where + " segment " + std::to_string(seg) + "/" + std::to_string(total));
    all.insert(all.end(), page.begin(), page.end());
  }
  return ByKey(all, where);
}

std::set<std::string> KeyAttrs(const IndexDef* d) {
  std::set<std::string> s = {"pk", "sk"};
  if (d != nullptr) {
    s.insert(d->hash);
    if (d->range) s.insert(*d->range);
  }
  return s;
}

// "" when equal, else where the two sequences first differ.
std::string SequenceDiff(const std::vector<Item>& got, const std::vector<Item>& want) {
  if (got == want) return "";
  std::string s = "\n got  " + Describe(got) + "\n want " + Describe(want);
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    if (got[i] != want[i]) {
      return s + "\n first difference at " + std::to_string(i) + ": got " + ItemText(got[i]) +
             " want " + ItemText(want[i]);
    }
  }
  return s;
}

// A Query of index `d` partition `h` (without its closing brace), optionally with the sort key
// condition "range >= from".
std::string QueryRequest(const IndexDef& d, const Scalar& h, const std::optional<Scalar>& from) {
  std::string names = R"("#h":")" + d.hash + "\"";
  std::string values = R"(":h":)" + model::AttributeValueToJson(ToValue(h));
  std::string condition = "#h = :h";
  if (from) {
    names += R"(,"#r":")" + *d.range + "\"";
    values += R"(,":r":)" + model::AttributeValueToJson(ToValue(*from));
    condition += " AND #r >= :r";
  }
  return R"({"TableName":")" + std::string(kTable) + R"(","IndexName":")" + d.name +
         R"(","KeyConditionExpression":")" + condition + R"(","ExpressionAttributeNames":{)" +
         names + R"(},"ExpressionAttributeValues":{)" + values + "}";
}

void CheckIndex(Instance& in, const Model& m, const IndexDef& d, std::mt19937_64& rng,
                const std::string& where, const HistoryFn& history) {
  static const int kLimits[] = {1, 2, 3, 5, 8, 0};
  auto limit = [&] { return kLimits[rng() % std::size(kLimits)]; };
  const auto expected = ExpectedIndex(d, m);
  const std::string w = where + " index " + d.name;
  const auto key_attrs = KeyAttrs(&d);

  // Scan, in parallel segments.
  std::map<Key, Item> flat;
  for (const auto& [h, entries] : expected) {
    for (const Entry& e : entries) flat.emplace(e.key, e.image);
  }
  const int total = 1 + static_cast<int>(rng() % 4);
  const int scan_limit = limit();
  ExpectSameItems(ScanAll(in, d.name, scan_limit, total, key_attrs, w + " Scan"), flat,
                  w + " Scan (TotalSegments " + std::to_string(total) + ", Limit " +
                      std::to_string(scan_limit) + ")",
                  history);

  // Query every partition, and one that has no entries, in both directions.
  std::vector<Scalar> hashes;
  for (const auto& [h, entries] : expected) hashes.push_back(h);
  hashes.push_back(IsNumeric(d.hash) ? Scalar(int64_t{77}) : Scalar(std::string("absent")));
  for (const Scalar& h : hashes) {
    static const std::vector<Entry> kNone;
    auto it = expected.find(h);
    const std::vector<Entry>& entries = it == expected.end() ? kNone : it->second;
    std::vector<Item> want;
    for (const Entry& e : entries) want.push_back(e.image);
    const std::string base = QueryRequest(d, h, std::nullopt);
    const std::string pw = w + " partition " + Text(h);
    for (bool forward : {true, false}) {
      const int l = limit();
      const std::string what =
          pw + (forward ? " forward" : " backward") + " Limit " + std::to_string(l);
      auto got = AllPages(in, "Query", base + (forward ? "" : R"(,"ScanIndexForward":false)"), l,
                          key_attrs, what);
      std::vector<Item> ordered = want;
      if (!forward) std::reverse(ordered.begin(), ordered.end());
      std::string diff = SequenceDiff(got, ordered);
      EXPECT_TRUE(diff.empty()) << what << diff;
    }
    auto count = in.Call("Query", base + R"(,"Select":"COUNT"})");
    if (count.ok()) {
      EXPECT_EQ(ParseJson(*count)["Count"].GetInt(), static_cast<int>(want.size())) << pw;
    } else {
      ADD_FAILURE() << pw << " Select COUNT: " << count.error().message;
    }
    // A sort key condition: the entries from a pivot on.
    if (d.range && !entries.empty()) {
      const Scalar pivot = *entries[rng() % entries.size()].range;
      std::vector<Item> from;
      for (const Entry& e : entries) {
        if (*e.range >= pivot) from.push_back(e.image);
      }
      const int l = limit();
      const std::string what = pw + " range >= " + Text(pivot) + " Limit " + std::to_string(l);
      auto got = AllPages(in, "Query", QueryRequest(d, h, pivot), l, key_attrs, what);
      std::string diff = SequenceDiff(got, from);
      EXPECT_TRUE(diff.empty()) << what << diff;
    }
    // A local index fetches the attributes it does not project from the base table.
    if (d.local) {
      std::vector<Item> full;
      for (const Entry& e : entries) full.push_back(m.at(e.key));
      const int l = limit();
      const std::string what = pw + " ALL_ATTRIBUTES Limit " + std::to_string(l);
      auto got = AllPages(in, "Query", base + R"(,"Select":"ALL_ATTRIBUTES")", l, key_attrs, what);
      std::string diff = SequenceDiff(got, full);
      EXPECT_TRUE(diff.empty()) << what << diff;
    }
  }
}

// DescribeTable's ItemCount of the table and of every index in `indexes` (fdyno keeps them
// exact, docs/format/item_counts.md) against the model.
void CheckItemCounts(Instance& in, const Model& m, const std::vector<const IndexDef*>& indexes,
                     const std::string& where) {
  auto r = in.Call("DescribeTable", R"({"TableName":")" + std::string(kTable) + "\"}");
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto d = ParseJson(*r);
  const auto& t = d["Table"];
  ASSERT_TRUE(t.HasMember("ItemCount")) << where;
  EXPECT_EQ(t["ItemCount"].GetInt64(), static_cast<int64_t>(m.size())) << where << " table";
  for (const IndexDef* def : indexes) {
    const char* list = def->local ? "LocalSecondaryIndexes" : "GlobalSecondaryIndexes";
    ASSERT_TRUE(t.HasMember(list)) << where;
    int64_t want = 0;
    for (const auto& [h, entries] : ExpectedIndex(*def, m)) want += entries.size();
    bool found = false;
    for (const auto& i : t[list].GetArray()) {
      if (i["IndexName"].GetString() != def->name) continue;
      found = true;
      ASSERT_TRUE(i.HasMember("ItemCount")) << where << " " << def->name;
      EXPECT_EQ(i["ItemCount"].GetInt64(), want) << where << " index " << def->name << " ItemCount";
    }
    EXPECT_TRUE(found) << where << " " << def->name;
  }
}

// The base table by Scan, and every index in `indexes`, against the model.
void CheckAll(Instance& in, const Model& m, const std::vector<const IndexDef*>& indexes,
              std::mt19937_64& rng, const std::string& where, const HistoryFn& history) {
  static const int kLimits[] = {1, 3, 7, 0};
  const int limit = kLimits[rng() % std::size(kLimits)];
  const int total = 1 + static_cast<int>(rng() % 4);
  ExpectSameItems(ScanAll(in, "", limit, total, KeyAttrs(nullptr), where + " table Scan"), m,
                  where + " table Scan (TotalSegments " + std::to_string(total) + ", Limit " +
                      std::to_string(limit) + ")",
                  history);
  for (const IndexDef* d : indexes) CheckIndex(in, m, *d, rng, where, history);
  CheckItemCounts(in, m, indexes, where);
}

Model Merge(const std::vector<const Model*>& models) {
  Model out;
  for (const Model* m : models) out.insert(m->begin(), m->end());
  return out;
}

const std::vector<const IndexDef*> kInitialIndexes = {&kByLsk, &kSparse, &kIncl};

// "N items; entries: by_lsk A, sparse B, ..." for the test log.
std::string Sizes(const Model& m, const std::vector<const IndexDef*>& indexes) {
  std::string s = std::to_string(m.size()) + " items; entries:";
  for (const IndexDef* d : indexes) {
    size_t n = 0;
    for (const auto& [h, entries] : ExpectedIndex(*d, m)) n += entries.size();
    s += " " + d->name + " " + std::to_string(n);
  }
  return s;
}

// A check is only as strong as what it compares: the model holds at least `items` items and
// every index in `indexes` at least one entry.
void ExpectLargeEnough(const Model& m, const std::vector<const IndexDef*>& indexes, size_t items) {
  EXPECT_GE(m.size(), items) << "the model test ended with too few items to prove much";
  for (const IndexDef* d : indexes) {
    size_t n = 0;
    for (const auto& [h, entries] : ExpectedIndex(*d, m)) n += entries.size();
    EXPECT_GT(n, 0u) << "index " << d->name << " ended empty";
  }
}

std::string SeedTrace(uint64_t seed) {
  return "seed " + std::to_string(seed) + " (replay: FDYNO_SEED=" + std::to_string(seed) + ")";
}

// ---- the tests ----

TEST(IndexModelTest, RandomWritesThenRestart) {
  const int steps = FullRun() ? 1500 : 300;
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(SeedTrace(seed));
    Database db(TempDir("restart_" + std::to_string(seed)));
    CreateTable(db.in());
    if (::testing::Test::HasFatalFailure()) return;
    std::mt19937_64 rng(seed * 7919);
    // 4 x 64 keys: the table ends with hundreds of items.
    Writer writer(seed, {"p0", "p1", "p2", "p3"}, "seed " + std::to_string(seed), 64);
    const HistoryFn history = [&](const Key& k) { return writer.History(k); };
    for (int i = 0; i < steps; ++i) {
      writer.Step(db.in());
      if (::testing::Test::HasFatalFailure()) return;
      if (i % 100 == 99)
        CheckAll(db.in(), writer.model(), kInitialIndexes, rng, "before restart", history);
    }
    db.Restart();
    CheckAll(db.in(), writer.model(), kInitialIndexes, rng, "after restart", history);
    for (int i = 0; i < steps / 2; ++i) {
      writer.Step(db.in());
      if (::testing::Test::HasFatalFailure()) return;
    }
    CheckAll(db.in(), writer.model(), kInitialIndexes, rng, "after restart and more writes",
             history);
    ExpectLargeEnough(writer.model(), kInitialIndexes, 100);
    std::cout << "seed " << seed << ": " << writer.Summary() << "; "
              << Sizes(writer.model(), kInitialIndexes) << "\n";
    if (::testing::Test::HasFailure()) return;  // one seed's report is enough
  }
}

// Threads writing random requests, each over its own partition keys, until stopped.
class WriterThreads {
 public:
  WriterThreads(uint64_t seed, int threads, int sort_keys = 8) {
    for (int t = 0; t < threads; ++t) {
      const std::string p = "t" + std::to_string(t);
      writers_.push_back(std::make_unique<Writer>(
          seed * 1000 + static_cast<uint64_t>(t), std::vector<std::string>{p + "a", p + "b"},
          "seed " + std::to_string(seed) + " thread " + std::to_string(t), sort_keys));
    }
  }
  ~WriterThreads() { Stop(); }

  // REQUIRES: stopped. `in` must outlive the next Stop().
  void Start(Instance& in) {
    stop_ = false;
    for (auto& w : writers_) {
      Writer* writer = w.get();
      threads_.emplace_back([this, writer, &in] {
        for (int i = 0; i < 200'000 && !stop_.load(); ++i) writer->Step(in);
      });
    }
  }
  // Every writer makes exactly `steps` requests, concurrently; returns when all are done.
  // REQUIRES: stopped.
  void RunSteps(Instance& in, int steps) {
    for (auto& w : writers_) {
      Writer* writer = w.get();
      threads_.emplace_back([writer, &in, steps] {
        for (int i = 0; i < steps && !::testing::Test::HasFatalFailure(); ++i) writer->Step(in);
      });
    }
    for (auto& t : threads_) t.join();
    threads_.clear();
  }
  // Waits (up to 20 s) until every writer made `n` more requests than when called.
  void AwaitProgress(int n) {
    std::vector<int> from;
    for (auto& w : writers_) from.push_back(w->steps());
    for (int spin = 0; spin < 20'000; ++spin) {
      bool done = true;
      for (size_t i = 0; i < writers_.size(); ++i) {
        if (writers_[i]->steps() < from[i] + n) done = false;
      }
      if (done) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ADD_FAILURE() << "writers made no progress";
  }
  void Stop() {
    stop_ = true;
    for (auto& t : threads_) t.join();
    threads_.clear();
  }
  std::vector<std::string> summaries() const {
    std::vector<std::string> out;
    for (const auto& w : writers_) out.push_back(w->Summary());
    return out;
  }
  std::string History(const Key& k) const {
    std::string s;
    for (const auto& w : writers_) s += w->History(k);
    return s;
  }
  std::vector<const Model*> models() const {
    std::vector<const Model*> out;
    for (const auto& w : writers_) out.push_back(&w->model());
    return out;
  }

 private:
  std::vector<std::unique_ptr<Writer>> writers_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false};
};

// Four threads write concurrently, each over its own keys, while the engine answers commits
// with 1021 after applying, 1021 without applying and 1020. The retry runner and the receipts
// must turn each request into exactly one effect, so the model of each thread stays exact: the base
// table, every index (entries and their order) and every ItemCount must equal it.
void ConcurrentWritersUnderFaults(bool async) {
  const int steps = FullRun() ? 1500 : 200;  // per thread
  for (uint64_t seed : Seeds()) {
    SCOPED_TRACE(SeedTrace(seed));
    Database db(TempDir("unknown_" + std::to_string(seed)), /*faulty=*/true);
    testing::BlockingThreads retries;
    if (async) {
      ASSERT_TRUE(db.faulty()->CommitsAsynchronously());
      db.in().async = &retries;
    }
    CreateTable(db.in());
    if (::testing::Test::HasFatalFailure()) return;
    kv::FaultOptions faults;
    faults.seed = seed;
    faults.unknown_applied = 0.1;
    faults.unknown_not_applied = 0.1;
    faults.commit_conflict = 0.05;
    db.faulty()->SetOptions(faults);
    WriterThreads threads(seed, 4, /*sort_keys=*/24);
    threads.RunSteps(db.in(), steps);
    retries.JoinAll();
    db.faulty()->SetOptions(kv::FaultOptions{});
    const kv::FaultCounts counts = db.faulty()->counts();
    EXPECT_GT(counts.unknown_applied, 20);
    EXPECT_GT(counts.unknown_not_applied, 20);
    if (async) {
      EXPECT_GT(retries.started(), 20) << "retries never left the committing thread";
    }
    const Model m = Merge(threads.models());
    std::mt19937_64 rng(seed * 31337);
    CheckAll(db.in(), m, kInitialIndexes, rng, "after concurrent writes under 1021",
             [&](const Key& k) { return threads.History(k); });
    ExpectLargeEnough(m, kInitialIndexes, 60);
    std::cout << "seed " << seed << (async ? " (asynchronous commits)" : "")
              << ": 1021 after applying " << counts.unknown_applied << ", 1021 without "
              << counts.unknown_not_applied << ", 1020 " << counts.conflicts << "; threads";
    for (const std::string& t : threads.summaries()) std::cout << " " << t;
    std::cout << "; " << Sizes(m, kInitialIndexes) << "\n";
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(IndexModelTest, ConcurrentWritersUnderUnknownCommitResults) {
  ConcurrentWritersUnderFaults(/*async=*/false);
}

// The same through the asynchronous handlers and the embedded engine's real CommitAsync, as
// `fdyno serve` runs writes.
TEST(IndexModelTest, ConcurrentAsynchronousWritersUnderUnknownCommitResults) {
  ConcurrentWritersUnderFaults(/*async=*/true);
}

struct Ids {
  int64_t table = 0;
  int64_t index = 0;
};

Ids FindIds(Database& db, const std::string& index) {
  auto r = kv::Run(db.db(), [&](kv::Transaction& tx, const kv::Attempt&) {
    return db.in().catalog.Find(tx, {store::kSharedAccount, "us-east-1"}, kTable);
  });
  EXPECT_TRUE(r.ok() && *r != nullptr);
  if (!r.ok() || *r == nullptr) return {};
  const store::SecondaryIndex* i = (*r)->FindIndex(index);
  EXPECT_NE(i, nullptr) << index;
  return {(*r)->id, i != nullptr ? i->id : 0};
}

std::optional<std::string> Cursor(Database& db, const Ids& ids) {
  auto r = kv::Run(db.db(), [&](kv::Transaction& tx, const kv::Attempt&) {
    return tx.Get(store::IndexBackfillCursorKey(ids.table, ids.index));
  });
  EXPECT_TRUE(r.ok());
  return r.ok() ? *r : std::nullopt;
}

void ExpectBackfilling(Instance& in, const IndexDef& d) {
  EXPECT_EQ(GsiStatus(in, d.name), (std::pair<std::string, bool>{"CREATING", true}));
  auto r = in.Call("Query", QueryRequest(d, Scalar(std::string("h0")), std::nullopt) + "}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().type, ErrorType::kValidation);
  EXPECT_EQ(r.error().message, "Cannot read from backfilling global secondary index: " + d.name);
}

// Creates GSI `late` by UpdateTable while three threads and the main thread write, runs the
// backfill worker page by page (optionally restarting everything after three pages) until the
// index is ACTIVE, then checks every index.
enum class Driver {
  kSteps,          // RunIndexStep page by page, writes between pages
  kRestartMidway,  // the same, with a restart after three pages
  kWorkerThread,   // the IndexWorker thread, as fdyno serve runs it
};

void RunBackfill(uint64_t seed, const IndexDef& late, Driver driver) {
  const bool restart_midway = driver == Driver::kRestartMidway;
  SCOPED_TRACE(SeedTrace(seed));
  Database db(TempDir("backfill_" + late.name + "_" + std::to_string(seed)));
  CreateTable(db.in());
  if (::testing::Test::HasFatalFailure()) return;
  std::mt19937_64 rng(seed * 104729);
  Writer main(seed, {"p0", "p1", "p2", "p3"}, "seed " + std::to_string(seed) + " main");
  const int prefill = FullRun() ? 600 : 150;
  for (int i = 0; i < prefill; ++i) main.Step(db.in());
  WriterThreads threads(seed, 3);
  const HistoryFn history = [&](const Key& k) { return main.History(k) + threads.History(k); };
  threads.Start(db.in());
  threads.AwaitProgress(30);

  std::string update = R"({"TableName":")" + std::string(kTable) + R"(","AttributeDefinitions":[)";
  std::vector<std::string> attrs = {late.hash};
  if (late.range) attrs.push_back(*late.range);
  for (size_t i = 0; i < attrs.size(); ++i) {
    update += (i ? "," : "") + AttributeDefinitionJson(attrs[i]);
  }
  update += R"(],"GlobalSecondaryIndexUpdates":[{"Create":)" + IndexJson(late) + "}]}";
  auto updated = db.in().Call("UpdateTable", update);
  ASSERT_TRUE(updated.ok()) << updated.error().message;
  ExpectBackfilling(db.in(), late);
  const Ids ids = FindIds(db, late.name);

  workers::BackfillOptions options;
  options.page_items = 4;
  int pages = 0;
  bool finished = false;
  auto page = [&] {
    auto r = workers::RunIndexStep(db.db(), db.in().catalog,
                                   {std::string(store::kSharedAccount), "us-east-1", kTable},
                                   ids.index, options);
    ASSERT_TRUE(r.ok()) << r.error().message;
    ++pages;
    finished = r->finished;
    // Writes between pages, before and after the cursor.
    main.Step(db.in());
    threads.AwaitProgress(1);
  };

  if (restart_midway) {
    for (int i = 0; i < 3; ++i) {
      page();
      ASSERT_FALSE(finished) << "the backfill ended before the restart";
    }
    threads.Stop();
    const auto before = Cursor(db, ids);
    ASSERT_TRUE(before.has_value());
    db.Restart();
    ExpectBackfilling(db.in(), late);
    EXPECT_EQ(Cursor(db, ids), before);
    {
      auto models = threads.models();
      models.push_back(&main.model());
      CheckAll(db.in(), Merge(models), kInitialIndexes, rng,
               "restarted in the middle of the backfill", history);
    }
    threads.Start(db.in());
    page();
    // It resumed from its cursor: a backfill started over would be behind it.
    if (!finished) {
      auto after = Cursor(db, ids);
      ASSERT_TRUE(after.has_value());
      EXPECT_GT(*after, *before) << "the backfill did not resume from its cursor";
    }
  }
  if (driver == Driver::kWorkerThread) {
    workers::BackfillOptions worker_options = options;
    worker_options.poll = std::chrono::milliseconds(2);
    worker_options.page_items = 1;  // a long backfill: one item per page
    workers::IndexWorker worker(&db.db(), &db.in().catalog, worker_options);
    worker.Start();
    for (int i = 0; i < 20'000 && !finished; ++i) {
      main.Step(db.in());
      threads.AwaitProgress(1);
      finished = GsiStatus(db.in(), late.name).first == "ACTIVE";
    }
    worker.Stop();
    // The worker thread itself finished the backfill: no explicit page may stand in for it.
    ASSERT_TRUE(finished) << "the IndexWorker did not finish the backfill";
    ASSERT_EQ(pages, 0);
  }
  while (!finished && pages < 10'000) {
    page();
    if (::testing::Test::HasFatalFailure()) return;
  }
  ASSERT_TRUE(finished);
  threads.AwaitProgress(20);  // writes to the ACTIVE index
  threads.Stop();
  EXPECT_EQ(GsiStatus(db.in(), late.name), (std::pair<std::string, bool>{"ACTIVE", false}));
  EXPECT_FALSE(Cursor(db, ids).has_value());

  std::vector<const IndexDef*> all = kInitialIndexes;
  all.push_back(&late);
  auto models = threads.models();
  models.push_back(&main.model());
  CheckAll(db.in(), Merge(models), all, rng,
           "backfill done after " + std::to_string(pages) + " explicit pages", history);
  std::cout << "seed " << seed << ": backfill of " << late.name << " in "
            << (driver == Driver::kWorkerThread ? std::string("the IndexWorker")
                                                : std::to_string(pages) + " pages")
            << "; main " << main.Summary() << "; threads";
  for (const std::string& t : threads.summaries()) std::cout << " " << t;
  std::cout << "; " << Sizes(Merge(models), all) << "\n";
  if (restart_midway) {
    db.Restart();
    CheckAll(db.in(), Merge(models), all, rng, "restarted after the backfill", history);
  }
}

TEST(IndexModelTest, BackfillUnderConcurrentWrites) {
  for (uint64_t seed : Seeds()) {
    RunBackfill(seed, kLate, Driver::kSteps);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(IndexModelTest, BackfillResumesAfterRestart) {
  for (uint64_t seed : Seeds()) {
    RunBackfill(seed, kLate2, Driver::kRestartMidway);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(IndexModelTest, BackfillByTheIndexWorkerThread) {
  for (uint64_t seed : Seeds()) {
    RunBackfill(seed, kLate, Driver::kWorkerThread);
    if (::testing::Test::HasFailure()) return;
  }
}

}  // namespace
}  // namespace fdyno::api
