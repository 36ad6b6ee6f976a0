#include "api/key_insights.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <utility>

#include "model/base64.h"

namespace fdyno::api {
namespace {

const store::KeySchema* ResourceKeys(const store::TableInfo& table, std::string_view index) {
  if (index.empty()) return &table.key_schema;
  for (const store::SecondaryIndex& i : table.global_indexes) {
    if (i.name == index) return &i.key_schema;
  }
  return nullptr;
}

const store::InsightsSettings* ResourceSettings(const store::TableInfo& table,
                                                std::string_view index) {
  if (index.empty()) return &table.insights;
  for (const store::SecondaryIndex& i : table.global_indexes) {
    if (i.name == index) return &i.insights;
  }
  return nullptr;
}

// A key value as CloudWatch shows it: a string as it is, a number as its text, binary in base64.
bool KeyText(const model::Item& item, const std::string& attribute, std::string* out) {
  auto it = item.find(attribute);
  if (it == item.end()) return false;
  const model::AttributeValue& v = it->second;
  switch (v.type()) {
    case model::Type::kS:
      *out = std::get<std::string>(v.v);
      return true;
    case model::Type::kN:
      *out = std::get<model::Number>(v.v).ToString();
      return true;
    case model::Type::kB:
      *out = model::Base64Encode(std::get<model::Binary>(v.v).bytes);
      return true;
    default:
      return false;
  }
}

std::string Joined(const std::vector<std::string>& keys) {
  std::string out;
  for (const std::string& k : keys) {
    if (!out.empty()) out += '|';
    out += k;
  }
  return out;
}

struct RuleSpec {
  bool sort = false;       // SK: counts partition and sort key
  bool throttles = false;  // T: throttles; C: accesses
  std::string name;
};

// DynamoDB's rules for a resource, in its order: PKC, SKC, PKT, SKT.
std::vector<RuleSpec> Rules(const store::TableInfo& table, std::string_view index,
                            const store::InsightsSettings& settings) {
  const store::KeySchema* keys = ResourceKeys(table, index);
  const bool sort = keys != nullptr && keys->has_range();
  const std::string resource = index.empty() ? table.name : table.name + "-" + std::string(index);
  const std::string suffix = "-" + resource + "-" + std::to_string(settings.rules_ms);
  std::vector<RuleSpec> rules;
  for (bool throttles : {false, true}) {
    if (!throttles && settings.mode == store::InsightsMode::kThrottledKeys) continue;
    const char* kind = throttles ? "T" : "C";
    rules.push_back({false, throttles, "DynamoDBContributorInsights-PK" + (kind + suffix)});
    if (sort)
      rules.push_back({true, throttles, "DynamoDBContributorInsights-SK" + (kind + suffix)});
  }
  return rules;
}

}  // namespace

std::vector<std::string> RuleNames(const store::TableInfo& table, std::string_view index,
                                   const store::InsightsSettings& settings) {
  std::vector<std::string> names;
  for (RuleSpec& rule : Rules(table, index, settings)) names.push_back(std::move(rule.name));
  return names;
}

int RuleCount(const store::KeySchema& key_schema, store::InsightsMode mode) {
  const int per_kind = key_schema.has_range() ? 2 : 1;
  return mode == store::InsightsMode::kAccessedAndThrottledKeys ? 2 * per_kind : per_kind;
}

void KeyInsights::Summary::Add(std::vector<std::string> keys) {
  std::string joined = Joined(keys);
  if (auto it = where.find(joined); it != where.end()) {
    ++counters[it->second].count;
    return;
  }
  if (counters.size() < kCountersPerRule) {
    where.emplace(std::move(joined), counters.size());
    counters.push_back({std::move(keys), 1});
    return;
  }
  // Space-Saving: the new key replaces the least counted one and inherits its count.
  size_t least = 0;
  for (size_t i = 1; i < counters.size(); ++i) {
    if (counters[i].count < counters[least].count) least = i;
  }
  where.erase(Joined(counters[least].keys));
  where.emplace(std::move(joined), least);
  counters[least].keys = std::move(keys);
  ++counters[least].count;
}

KeyInsights::KeyInsights(Clock* clock) : clock_(clock) {}

void KeyInsights::Accessed(const store::TableInfo& table, std::string_view index,
                           const model::Item& item_or_key) {
  Count(table, index, item_or_key, false);
}

void KeyInsights::Throttled(const store::TableInfo& table, std::string_view index,
                            const model::Item& key) {
  Count(table, index, key, true);
}

void KeyInsights::Forget(const store::TableInfo& table, std::string_view index) {
  std::lock_guard lock(mu_);
  resources_.erase({table.uuid, std::string(index)});
}

KeyInsights::Resource& KeyInsights::ResourceFor(const store::TableInfo& table,
                                                std::string_view index,
                                                const store::InsightsSettings& settings) {
  Resource& r = resources_[{table.uuid, std::string(index)}];
  std::vector<RuleSpec> specs = Rules(table, index, settings);
  bool same = r.rules.size() == specs.size();
  for (size_t i = 0; same && i < specs.size(); ++i) same = r.rules[i].name == specs[i].name;
  if (same) return r;
  // New rules (insights enabled again, or another mode): they count afresh.
  r.account = table.account;
  r.table = table.name;
  r.index = std::string(index);
  r.rules.clear();
  for (RuleSpec& spec : specs) {
    Rule rule;
    rule.sort = spec.sort;
    rule.throttles = spec.throttles;
    rule.name = std::move(spec.name);
    r.rules.push_back(std::move(rule));
  }
  return r;
}

void KeyInsights::Count(const store::TableInfo& table, std::string_view index,
                        const model::Item& item, bool throttled) {
  const store::InsightsSettings* settings = ResourceSettings(table, index);
  if (settings == nullptr || !settings->enabled()) return;
  if (!throttled && settings->mode == store::InsightsMode::kThrottledKeys) return;
  const store::KeySchema* keys = ResourceKeys(table, index);
  std::string partition, sort;
  if (!KeyText(item, keys->hash.name, &partition)) return;
  const bool has_sort = keys->has_range() && KeyText(item, keys->range->name, &sort);
  const int64_t minute = clock_->WallMillis() / 60000;
  std::lock_guard lock(mu_);
  for (Rule& rule : ResourceFor(table, index, *settings).rules) {
    if (rule.throttles != throttled || (rule.sort && !has_sort)) continue;
    if (rule.current.minute != minute) {
      rule.previous = rule.current.minute == minute - 1 ? std::move(rule.current) : Summary{};
      rule.current = Summary{};
      rule.current.minute = minute;
    }
    rule.current.Add(rule.sort ? std::vector<std::string>{partition, sort}
                               : std::vector<std::string>{partition});
  }
}

std::vector<KeyInsights::ResourceReport> KeyInsights::Report(size_t top) const {
  const int64_t minute = clock_->WallMillis() / 60000;
  std::vector<ResourceReport> out;
  std::lock_guard lock(mu_);
  for (const auto& [key, resource] : resources_) {
    ResourceReport report{resource.account, resource.table, resource.index, {}};
    for (const Rule& rule : resource.rules) {
      std::map<std::string, KeyCount> merged;
      for (const Summary* s : {&rule.current, &rule.previous}) {
        if (s->minute < minute - 1) continue;
        for (const KeyCount& c : s->counters) {
          KeyCount& m = merged[Joined(c.keys)];
          m.keys = c.keys;
          m.count += c.count;
        }
      }
      if (merged.empty()) continue;
      RuleReport r{rule.name, {}};
      for (auto& [joined, c] : merged) r.top.push_back(std::move(c));
      std::stable_sort(r.top.begin(), r.top.end(),
                       [](const KeyCount& a, const KeyCount& b) { return a.count > b.count; });
      if (r.top.size() > top) r.top.resize(top);
      report.rules.push_back(std::move(r));
    }
    if (!report.rules.empty()) out.push_back(std::move(report));
  }
  std::sort(out.begin(), out.end(), [](const ResourceReport& a, const ResourceReport& b) {
    return std::tie(a.account, a.table, a.index) < std::tie(b.account, b.table, b.index);
  });
  return out;
}

std::string KeyInsights::ReportJson(size_t top) const {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  auto str = [&](const std::string& s) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  };
  w.StartObject();
  w.Key("resources");
  w.StartArray();
  for (const ResourceReport& r : Report(top)) {
    w.StartObject();
    w.Key("account");
    str(r.account);
    w.Key("table");
    str(r.table);
    w.Key("index");
    str(r.index);
    w.Key("rules");
    w.StartArray();
    for (const RuleReport& rule : r.rules) {
      w.StartObject();
      w.Key("rule");
      str(rule.rule);
      w.Key("top");
      w.StartArray();
      for (const KeyCount& c : rule.top) {
        w.StartObject();
        w.Key("keys");
        w.StartArray();
        for (const std::string& k : c.keys) str(k);
        w.EndArray();
        w.Key("count");
        w.Int64(c.count);
        w.EndObject();
      }
      w.EndArray();
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

void KeyInsights::Publish(Metrics& metrics, size_t top) const {
  std::vector<std::pair<Labels, int64_t>> samples;
  for (const ResourceReport& r : Report(top)) {
    for (const RuleReport& rule : r.rules) {
      for (const KeyCount& c : rule.top) {
        samples.push_back({{{"account", r.account},
                            {"table", r.table},
                            {"index", r.index},
                            {"rule", rule.rule},
                            {"key", Joined(c.keys)}},
                           c.count});
      }
    }
  }
  metrics.SetGaugeFamily("fdyno_contributor_insights_key_events", std::move(samples));
}

}  // namespace fdyno::api
