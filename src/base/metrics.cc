#include "base/metrics.h"

#include <algorithm>

namespace fdyno {

void Histogram::Observe(int64_t us) {
  size_t i = std::lower_bound(kBoundsUs.begin(), kBoundsUs.end(), us) - kBoundsUs.begin();
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_us_.fetch_add(us, std::memory_order_relaxed);
}

std::array<int64_t, Histogram::kBoundsUs.size() + 1> Histogram::Cumulative() const {
  std::array<int64_t, kBoundsUs.size() + 1> out{};
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
template <typename T>
T& FindOrAdd(std::map<std::pair<std::string, Labels>, T*>& index, std::deque<T>& store,
             const std::string& name, const Labels& labels) {
  auto key = std::make_pair(name, labels);
  auto it = index.find(key);
  if (it != index.end()) return *it->second;
  T& metric = store.emplace_back();
  index.emplace(std::move(key), &metric);
  return metric;
}

template <typename T>
std::vector<Metrics::Entry<T>> List(const std::map<std::pair<std::string, Labels>, T*>& index) {
  std::vector<Metrics::Entry<T>> out;
  out.reserve(index.size());
  for (const auto& [key, metric] : index) out.push_back({key.first, key.second, metric});
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
Histogram& Metrics::GetHistogram(const std::string& name, const Labels& labels) {
  std::lock_guard lock(mu_);
  return FindOrAdd(histograms_, histogram_store_, name, labels);
}
std::vector<Metrics::Entry<Counter>> Metrics::Counters() const {
  std::lock_guard lock(mu_);
  return List(counters_);
}
std::vector<Metrics::Entry<Gauge>> Metrics::Gauges() const {
  std::lock_guard lock(mu_);
  return List(gauges_);
}
std::vector<Metrics::Entry<Histogram>> Metrics::Histograms() const {
  std::lock_guard lock(mu_);
  return List(histograms_);
}

}  // namespace fdyno
