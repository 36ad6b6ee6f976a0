#include "http/metrics_render.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>

namespace fdyno::http {
namespace {

TEST(MetricsRenderTest, PrometheusText) {
  Metrics m;
  m.GetCounter("fdyno_requests_total", {{"operation", "GetItem"}}).Add(3);
  m.GetCounter("fdyno_requests_total", {{"operation", "PutItem"}}).Add(1);
  m.GetCounter("kv_conflicts").Add(2);
  m.GetGauge("fdyno_in_flight_requests").Add(5);
  m.GetCounter("weird-name", {{"v", "a\"b\\c\nd"}}).Add(1);
  Histogram& h = m.GetHistogram("fdyno_request_duration_seconds", {{"operation", "GetItem"}});
  h.Observe(50);
  h.Observe(3000);
  h.Observe(10'000'000);
  std::string text = RenderMetricsPrometheus(m);
  EXPECT_NE(text.find("# TYPE fdyno_requests_total counter\n"
                      "fdyno_requests_total{operation=\"GetItem\"} 3\n"
                      "fdyno_requests_total{operation=\"PutItem\"} 1\n"),
            std::string::npos)
      << text;
  // Prefixed, and a counter gets "_total".
  EXPECT_NE(text.find("# TYPE fdyno_kv_conflicts_total counter\nfdyno_kv_conflicts_total 2\n"),
            std::string::npos);
  EXPECT_NE(text.find("# TYPE fdyno_in_flight_requests gauge\nfdyno_in_flight_requests 5\n"),
            std::string::npos);
  EXPECT_NE(text.find("fdyno_weird_name_total{v=\"a\\\"b\\\\c\\nd\"} 1\n"), std::string::npos)
      << text;
  EXPECT_NE(
      text.find("fdyno_request_duration_seconds_bucket{operation=\"GetItem\",le=\"0.0001\"} 1\n"),
      std::string::npos)
      << text;
  EXPECT_NE(
      text.find("fdyno_request_duration_seconds_bucket{operation=\"GetItem\",le=\"0.005\"} 2\n"),
      std::string::npos);
  EXPECT_NE(
      text.find("fdyno_request_duration_seconds_bucket{operation=\"GetItem\",le=\"+Inf\"} 3\n"),
      std::string::npos);
  EXPECT_NE(text.find("fdyno_request_duration_seconds_count{operation=\"GetItem\"} 3\n"),
            std::string::npos);
  EXPECT_NE(text.find("fdyno_request_duration_seconds_sum{operation=\"GetItem\"} 10.00305\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.back(), '\n');
}

TEST(MetricsRenderTest, HelpCollectorsAndPlainHistograms) {
  Metrics m;
  m.Describe("kv_conflicts", "Commits that failed on a conflict.\nRetried.");
  m.GetCounter("kv_conflicts").Add(1);
  Gauge& bytes = m.GetGauge("fdyno_kv_memtable_bytes");
  int collected = 0;
  uint64_t id = m.AddCollector([&] { bytes.Set(++collected * 1000); });
  Histogram& batch =
      m.GetHistogram("fdyno_kv_commit_batch_transactions", {}, Histogram::PowersOfTwoUpTo(8));
  batch.Observe(3);
  std::string text = RenderMetricsPrometheus(m);
  EXPECT_NE(text.find("# HELP fdyno_kv_conflicts_total Commits that failed on a conflict.\\n"
                      "Retried.\n# TYPE fdyno_kv_conflicts_total counter\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("fdyno_kv_memtable_bytes 1000\n"), std::string::npos) << text;
  EXPECT_NE(text.find("fdyno_kv_commit_batch_transactions_bucket{le=\"2\"} 0\n"
                      "fdyno_kv_commit_batch_transactions_bucket{le=\"4\"} 1\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("fdyno_kv_commit_batch_transactions_sum 3\n"), std::string::npos);
  m.RemoveCollector(id);
  RenderMetricsPrometheus(m);
  EXPECT_EQ(collected, 1);
}

TEST(MetricsRenderTest, LatencyBucketsReachTheGivenMaximum) {
  EXPECT_EQ(Histogram::LatencyBoundsUpToUs(30'000'000).back(), 30'000'000);
  EXPECT_EQ(Histogram::DefaultLatencyBoundsUs().front(), 100);
  EXPECT_EQ(Histogram::DefaultLatencyBoundsUs().back(), 5'000'000);
  std::vector<int64_t> day = Histogram::LatencyBoundsUpToUs(86'400'000'000);
  EXPECT_TRUE(std::is_sorted(day.begin(), day.end()));
  EXPECT_EQ(day.back(), 86'400'000'000);
}

TEST(MetricsRenderTest, Json) {
  Metrics m;
  m.GetCounter("c", {{"k", "v"}}).Add(7);
  m.GetGauge("g").Add(-1);
  m.GetHistogram("h_seconds").Observe(200);
  std::string json = RenderMetricsJson(m);
  rapidjson::Document d;
  d.Parse(json.c_str());
  ASSERT_FALSE(d.HasParseError()) << json;
  EXPECT_EQ(d["counters"][0]["name"].GetString(), std::string("c"));
  EXPECT_EQ(d["counters"][0]["labels"]["k"].GetString(), std::string("v"));
  EXPECT_EQ(d["counters"][0]["value"].GetInt64(), 7);
  EXPECT_EQ(d["gauges"][0]["value"].GetInt64(), -1);
  const auto& h = d["histograms"][0];
  EXPECT_EQ(h["count"].GetInt64(), 1);
  EXPECT_EQ(h["sum_us"].GetInt64(), 200);
  EXPECT_EQ(h["buckets"][0]["count"].GetInt64(), 0);
  EXPECT_EQ(h["buckets"][1]["le_us"].GetInt64(), 250);
  EXPECT_EQ(h["buckets"][1]["count"].GetInt64(), 1);
  EXPECT_EQ(h["buckets"][h["buckets"].Size() - 1]["le_us"].GetString(), std::string("+Inf"));
}

}  // namespace
}  // namespace fdyno::http
