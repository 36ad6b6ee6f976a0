// Process-wide metrics: monotonic counters, gauges and fixed-bucket histograms, named with
// optional labels. Registration is thread-safe and returns a reference that stays valid for
// the life of the process, so hot paths look a metric up once and keep it.
// The http layer renders them as JSON (/metrics) and Prometheus text (/metrics/prometheus).
//
// Naming contract: names match [a-zA-Z_][a-zA-Z0-9_]*. In Prometheus text every family gets
// the prefix "fdyno_" when it lacks it and a counter the suffix "_total" when it lacks it, so a
// layer may register "kv_conflicts" and scrapers see "fdyno_kv_conflicts_total"; the JSON page
// keeps the registered names. A histogram whose name ends in "_seconds" observes microseconds
// (rendered as seconds); any other observes plain numbers (a count, bytes: say which in the
// name). Every family should be described (Describe) with its help text and unit.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace fdyno {

using Labels = std::vector<std::pair<std::string, std::string>>;

class Counter {
 public:
  void Add(int64_t n = 1) { value_.fetch_add(n, std::memory_order_relaxed); }
  int64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> value_{0};
};

class Gauge {
 public:
  void Add(int64_t n) { value_.fetch_add(n, std::memory_order_relaxed); }
  void Set(int64_t v) { value_.store(v, std::memory_order_relaxed); }
  int64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> value_{0};
};

// A histogram with fixed, increasing upper bounds (Prometheus "le" buckets) plus +Inf.
class Histogram {
 public:
  // Latency bounds in microseconds: 100 us to 5 s in 1-2.5-5 steps.
  static const std::vector<int64_t>& DefaultLatencyBoundsUs();
  // The same ladder continued (10 s, 25 s, 50 s, ...) up to and including `max_us`.
  static std::vector<int64_t> LatencyBoundsUpToUs(int64_t max_us);
  // Powers of two from 1 to `max` (batch sizes, counts).
  static std::vector<int64_t> PowersOfTwoUpTo(int64_t max);

  explicit Histogram(std::vector<int64_t> bounds = DefaultLatencyBoundsUs());
  void Observe(int64_t value);
  const std::vector<int64_t>& bounds() const { return bounds_; }
  // Cumulative counts per bound, then +Inf (bounds().size() + 1 entries).
  std::vector<int64_t> Cumulative() const;
  int64_t count() const { return count_.load(std::memory_order_relaxed); }
  int64_t sum() const { return sum_.load(std::memory_order_relaxed); }

 private:
  const std::vector<int64_t> bounds_;
  const std::unique_ptr<std::atomic<int64_t>[]> buckets_;
  std::atomic<int64_t> count_{0};
  std::atomic<int64_t> sum_{0};
};

class Metrics {
 public:
  static Metrics& Global();

  Counter& GetCounter(const std::string& name, const Labels& labels = {});
  Gauge& GetGauge(const std::string& name, const Labels& labels = {});
  // `bounds` applies when this call creates the histogram; later calls get the existing one.
  Histogram& GetHistogram(const std::string& name, const Labels& labels = {},
                          const std::vector<int64_t>& bounds = Histogram::DefaultLatencyBoundsUs());

  // The help text of a family ("Requests answered, by operation."), rendered as # HELP.
  void Describe(const std::string& name, std::string help);
  // "" when the family was never described.
  std::string Help(const std::string& name) const;

  // A function run before every rendering, to set gauges from their source (engine sizes).
  // Returns an id for RemoveCollector, which must be called before what it reads goes away.
  uint64_t AddCollector(std::function<void()> collect);
  void RemoveCollector(uint64_t id);
  void Collect() const;

  // Replaces every gauge of family `name` set through this function with `samples` (labels,
  // value): a family whose label sets come and go (the most accessed keys), which GetGauge
  // could only ever add to. REQUIRES: GetGauge is never called with `name`.
  void SetGaugeFamily(const std::string& name, std::vector<std::pair<Labels, int64_t>> samples);

  template <typename T>
  struct Entry {
    std::string name;
    Labels labels;
    const T* metric;
    std::shared_ptr<const void> keep = nullptr;  // keeps `metric` alive (SetGaugeFamily's)
  };
  // Snapshots of every registered metric, sorted by name then labels.
  std::vector<Entry<Counter>> Counters() const;
  std::vector<Entry<Gauge>> Gauges() const;
  std::vector<Entry<Histogram>> Histograms() const;

 private:
  using Key = std::pair<std::string, Labels>;
  mutable std::mutex mu_;
  std::map<Key, Counter*> counters_;
  std::map<Key, Gauge*> gauges_;
  std::map<Key, Histogram*> histograms_;
  std::deque<Counter> counter_store_;
  std::deque<Gauge> gauge_store_;
  std::deque<Histogram> histogram_store_;
  // SetGaugeFamily's families: labels -> gauge, shared with the entries that point into them.
  std::map<std::string, std::shared_ptr<const std::map<Labels, Gauge>>> families_;
  std::map<std::string, std::string> help_;
  // Collectors run under their own lock, so they may register and set metrics.
  mutable std::mutex collectors_mu_;
  std::map<uint64_t, std::function<void()>> collectors_;
  uint64_t next_collector_ = 1;
};

}  // namespace fdyno
