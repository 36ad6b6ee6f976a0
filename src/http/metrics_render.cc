#include "http/metrics_render.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdio>

namespace fdyno::http {
namespace {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

void WriteLabels(JsonWriter& w, const Labels& labels) {
  w.Key("labels");
  w.StartObject();
  for (const auto& [k, v] : labels) {
    w.Key(k.data(), static_cast<rapidjson::SizeType>(k.size()));
    w.String(v.data(), static_cast<rapidjson::SizeType>(v.size()));
  }
  w.EndObject();
}

std::string SanitizeName(const std::string& name) {
  std::string out = name.empty() ? "_" : name;
  for (size_t i = 0; i < out.size(); ++i) {
    char c = out[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) out[i] = '_';
  }
  return out;
}

std::string SanitizeLabelName(const std::string& name) {
  std::string out = SanitizeName(name);
  for (char& c : out) {
    if (c == ':') c = '_';
  }
  return out;
}

void AppendEscapedLabelValue(std::string& out, const std::string& v) {
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out.push_back(c);
    }
  }
}

// {a="x",b="y"} plus an optional extra label (le), or nothing when there are no labels.
void AppendLabels(std::string& out, const Labels& labels, const char* extra_name = nullptr,
                  const std::string& extra_value = {}) {
  if (labels.empty() && extra_name == nullptr) return;
  out.push_back('{');
  bool first = true;
  for (const auto& [k, v] : labels) {
    if (!first) out.push_back(',');
    first = false;
    out += SanitizeLabelName(k);
    out += "=\"";
    AppendEscapedLabelValue(out, v);
    out.push_back('"');
  }
  if (extra_name != nullptr) {
    if (!first) out.push_back(',');
    out += extra_name;
    out += "=\"";
    out += extra_value;
    out.push_back('"');
  }
  out.push_back('}');
}

// Microseconds as exact decimal seconds ("0.0001", "2.5", "10.003050" -> "10.00305").
std::string Seconds(int64_t us) {
  bool negative = us < 0;
  uint64_t v = negative ? static_cast<uint64_t>(-(us + 1)) + 1 : static_cast<uint64_t>(us);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%s%llu.%06llu", negative ? "-" : "",
                static_cast<unsigned long long>(v / 1'000'000),
                static_cast<unsigned long long>(v % 1'000'000));
  std::string out = buf;
  while (out.back() == '0') out.pop_back();
  if (out.back() == '.') out.pop_back();
  return out;
}

bool IsSeconds(const std::string& name) {
  constexpr std::string_view kSuffix = "_seconds";
  return name.size() >= kSuffix.size() &&
         name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0;
}

// HELP text escaped as the text format wants it (backslash and newline).
std::string EscapeHelp(const std::string& help) {
  std::string out;
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

template <typename Entries, typename Fn>
void RenderFamilies(std::string& out, const Metrics& metrics, const Entries& entries,
                    const char* type, Fn&& samples) {
  std::string last;
  std::string name;
  for (const auto& e : entries) {
    if (e.name != last) {
      last = e.name;
      name = ExposedName(e.name, std::string_view(type) == "counter");
      if (std::string help = metrics.Help(e.name); !help.empty()) {
        out += "# HELP " + name + " " + EscapeHelp(help) + "\n";
      }
      out += "# TYPE " + name + " " + type + "\n";
    }
    samples(name, e);
  }
}

}  // namespace

std::string ExposedName(const std::string& registered, bool counter) {
  std::string name = SanitizeName(registered);
  if (name.rfind("fdyno_", 0) != 0) name = "fdyno_" + name;
  constexpr std::string_view kTotal = "_total";
  const bool has_total = name.size() >= kTotal.size() &&
                         name.compare(name.size() - kTotal.size(), kTotal.size(), kTotal) == 0;
  if (counter && !has_total) name += kTotal;
  return name;
}

std::string RenderMetricsJson(const Metrics& metrics) {
  metrics.Collect();
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  w.Key("counters");
  w.StartArray();
  for (const auto& e : metrics.Counters()) {
    w.StartObject();
    w.Key("name");
    w.String(e.name.c_str());
    WriteLabels(w, e.labels);
    w.Key("value");
    w.Int64(e.metric->value());
    w.EndObject();
  }
  w.EndArray();
  w.Key("gauges");
  w.StartArray();
  for (const auto& e : metrics.Gauges()) {
    w.StartObject();
    w.Key("name");
    w.String(e.name.c_str());
    WriteLabels(w, e.labels);
    w.Key("value");
    w.Int64(e.metric->value());
    w.EndObject();
  }
  w.EndArray();
  w.Key("histograms");
  w.StartArray();
  for (const auto& e : metrics.Histograms()) {
    auto cumulative = e.metric->Cumulative();
    const auto& bounds = e.metric->bounds();
    const bool us = IsSeconds(e.name);
    w.StartObject();
    w.Key("name");
    w.String(e.name.c_str());
    WriteLabels(w, e.labels);
    w.Key("count");
    w.Int64(cumulative.back());
    w.Key(us ? "sum_us" : "sum");
    w.Int64(e.metric->sum());
    w.Key("buckets");
    w.StartArray();
    for (size_t i = 0; i < cumulative.size(); ++i) {
      w.StartObject();
      w.Key(us ? "le_us" : "le");
      if (i < bounds.size()) {
        w.Int64(bounds[i]);
      } else {
        w.String("+Inf");
      }
      w.Key("count");
      w.Int64(cumulative[i]);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string RenderMetricsPrometheus(const Metrics& metrics) {
  metrics.Collect();
  std::string out;
  out.reserve(16 * 1024);
  RenderFamilies(out, metrics, metrics.Counters(), "counter",
                 [&](const std::string& name, const auto& e) {
                   out += name;
                   AppendLabels(out, e.labels);
                   out += " " + std::to_string(e.metric->value()) + "\n";
                 });
  RenderFamilies(out, metrics, metrics.Gauges(), "gauge",
                 [&](const std::string& name, const auto& e) {
                   out += name;
                   AppendLabels(out, e.labels);
                   out += " " + std::to_string(e.metric->value()) + "\n";
                 });
  RenderFamilies(out, metrics, metrics.Histograms(), "histogram",
                 [&](const std::string& name, const auto& e) {
                   // Read the buckets once; count is their +Inf total so the sample is coherent.
                   auto cumulative = e.metric->Cumulative();
                   const auto& bounds = e.metric->bounds();
                   const bool us = IsSeconds(e.name);
                   auto value = [&](int64_t v) { return us ? Seconds(v) : std::to_string(v); };
                   for (size_t i = 0; i < cumulative.size(); ++i) {
                     std::string le = i < bounds.size() ? value(bounds[i]) : std::string("+Inf");
                     out += name + "_bucket";
                     AppendLabels(out, e.labels, "le", le);
                     out += " " + std::to_string(cumulative[i]) + "\n";
                   }
                   out += name + "_sum";
                   AppendLabels(out, e.labels);
                   out += " " + value(e.metric->sum()) + "\n";
                   out += name + "_count";
                   AppendLabels(out, e.labels);
                   out += " " + std::to_string(cumulative.back()) + "\n";
                 });
  return out;
}

}  // namespace fdyno::http
