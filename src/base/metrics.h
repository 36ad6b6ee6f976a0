// Process-wide metrics: monotonic counters, gauges and fixed-bucket latency histograms,
// named with optional labels. Registration is thread-safe and returns a reference that stays
// valid for the life of the process, so hot paths look a metric up once and keep it.
// The http layer renders them as JSON (/metrics) and Prometheus text (/metrics/prometheus).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
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
  int64_t value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> value_{0};
};

// Latency histogram with fixed upper bounds in microseconds (Prometheus "le" buckets).
class Histogram {
 public:
  static constexpr std::array<int64_t, 14> kBoundsUs = {
      100, 250, 500, 1'000, 2'500, 5'000, 10'000, 25'000, 50'000,
      100'000, 250'000, 500'000, 1'000'000, 5'000'000};
  void Observe(int64_t us);
  // Cumulative counts per bound, then +Inf.
  std::array<int64_t, kBoundsUs.size() + 1> Cumulative() const;
  int64_t count() const { return count_.load(std::memory_order_relaxed); }
  int64_t sum_us() const { return sum_us_.load(std::memory_order_relaxed); }

 private:
  std::array<std::atomic<int64_t>, kBoundsUs.size() + 1> buckets_{};
  std::atomic<int64_t> count_{0};
  std::atomic<int64_t> sum_us_{0};
};

class Metrics {
 public:
  static Metrics& Global();

  Counter& GetCounter(const std::string& name, const Labels& labels = {});
  Gauge& GetGauge(const std::string& name, const Labels& labels = {});
  Histogram& GetHistogram(const std::string& name, const Labels& labels = {});

  template <typename T>
  struct Entry {
    std::string name;
    Labels labels;
    const T* metric;
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
};

}  // namespace fdyno
