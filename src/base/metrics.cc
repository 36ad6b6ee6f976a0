#include "base/metrics.h"

#include <algorithm>
#include <tuple>

namespace fdyno {

const std::vector<int64_t>& Histogram::DefaultLatencyBoundsUs() {
  static const std::vector<int64_t> bounds = LatencyBoundsUpToUs(5'000'000);
  return bounds;
}

std::vector<int64_t> Histogram::LatencyBoundsUpToUs(int64_t max_us) {
  std::vector<int64_t> bounds;
  for (int64_t decade = 100; decade <= max_us; decade *= 10) {
    for (int64_t step : {decade, decade * 5 / 2, decade * 5}) {
      if (step >= max_us) break;
      bounds.push_back(step);
    }
  }
  bounds.push_back(std::max<int64_t>(max_us, 1));
  return bounds;
}

std::vector<int64_t> Histogram::PowersOfTwoUpTo(int64_t max) {
  std::vector<int64_t> bounds;
  for (int64_t b = 1; b < max; b *= 2) bounds.push_back(b);
  bounds.push_back(std::max<int64_t>(max, 1));
  return bounds;
}

Histogram::Histogram(std::vector<int64_t> bounds)
    : bounds_(std::move(bounds)), buckets_(new std::atomic<int64_t>[bounds_.size() + 1]()) {}

void Histogram::Observe(int64_t value) {
  size_t i = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(value, std::memory_order_relaxed);
}

std::vector<int64_t> Histogram::Cumulative() const {
  std::vector<int64_t> out(bounds_.size() + 1);
  int64_t total = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    total += buckets_[i].load(std::memory_order_relaxed);
    out[i] = total;
  }
  return out;
}

Metrics& Metrics::Global() {
  static Metrics* metrics = new Metrics();  // never destroyed: outlives every thread
  return *metrics;
}

namespace {
template <typename T, typename... Args>
T& FindOrAdd(std::map<std::pair<std::string, Labels>, T*>& index, std::deque<T>& store,
             const std::string& name, const Labels& labels, Args&&... args) {
  auto key = std::make_pair(name, labels);
  auto it = index.find(key);
  if (it != index.end()) return *it->second;
  T& metric = store.emplace_back(std::forward<Args>(args)...);
  index.emplace(std::move(key), &metric);
  return metric;
}

template <typename T>
std::vector<Metrics::Entry<T>> List(const std::map<std::pair<std::string, Labels>, T*>& index) {
  std::vector<Metrics::Entry<T>> out;
  out.reserve(index.size());
  for (const auto& [key, metric] : index) out.push_back({key.first, key.second, metric, nullptr});
  return out;
}
}  // namespace

Counter& Metrics::GetCounter(const std::string& name, const Labels& labels) {
  std::lock_guard lock(mu_);
  return FindOrAdd(counters_, counter_store_, name, labels);
}
Gauge& Metrics::GetGauge(const std::string& name, const Labels& labels) {
  std::lock_guard lock(mu_);
  return FindOrAdd(gauges_, gauge_store_, name, labels);
}
Histogram& Metrics::GetHistogram(const std::string& name, const Labels& labels,
                                 const std::vector<int64_t>& bounds) {
  std::lock_guard lock(mu_);
  return FindOrAdd(histograms_, histogram_store_, name, labels, bounds);
}

void Metrics::Describe(const std::string& name, std::string help) {
  std::lock_guard lock(mu_);
  help_[name] = std::move(help);
}

std::string Metrics::Help(const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = help_.find(name);
  return it == help_.end() ? std::string() : it->second;
}

uint64_t Metrics::AddCollector(std::function<void()> collect) {
  std::lock_guard lock(collectors_mu_);
  uint64_t id = next_collector_++;
  collectors_.emplace(id, std::move(collect));
  return id;
}

void Metrics::RemoveCollector(uint64_t id) {
  std::lock_guard lock(collectors_mu_);
  collectors_.erase(id);
}

void Metrics::Collect() const {
  std::lock_guard lock(collectors_mu_);
  for (const auto& [id, collect] : collectors_) collect();
}

std::vector<Metrics::Entry<Counter>> Metrics::Counters() const {
  std::lock_guard lock(mu_);
  return List(counters_);
}
std::vector<Metrics::Entry<Gauge>> Metrics::Gauges() const {
  std::lock_guard lock(mu_);
  std::vector<Entry<Gauge>> out = List(gauges_);
  for (const auto& [name, family] : families_) {
    for (const auto& [labels, gauge] : *family) out.push_back({name, labels, &gauge, family});
  }
  std::stable_sort(out.begin(), out.end(), [](const Entry<Gauge>& a, const Entry<Gauge>& b) {
    return std::tie(a.name, a.labels) < std::tie(b.name, b.labels);
  });
  return out;
}

void Metrics::SetGaugeFamily(const std::string& name,
                             std::vector<std::pair<Labels, int64_t>> samples) {
  auto family = std::make_shared<std::map<Labels, Gauge>>();
  for (auto& [labels, value] : samples) (*family)[std::move(labels)].Set(value);
  std::lock_guard lock(mu_);
  families_[name] = std::move(family);
}
std::vector<Metrics::Entry<Histogram>> Metrics::Histograms() const {
  std::lock_guard lock(mu_);
  return List(histograms_);
}

}  // namespace fdyno
