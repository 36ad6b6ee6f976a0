// Renders the process metrics registry (base/metrics.h) for GET /metrics (JSON) and
// GET /metrics/prometheus (Prometheus text exposition format 0.0.4).
//
// Naming contract for what is registered: names match [a-zA-Z_:][a-zA-Z0-9_:]* (other
// characters are rendered as '_'); histograms observe microseconds and, in Prometheus text,
// are rendered in seconds, so their names should end in "_seconds".
#pragma once

#include <string>

#include "base/metrics.h"

namespace fdyno::http {

// {"counters":[{"name":..,"labels":{..},"value":N}],"gauges":[..],
//  "histograms":[{"name":..,"labels":{..},"count":N,"sum_us":N,
//                 "buckets":[{"le_us":100,"count":N},..,{"le_us":"+Inf","count":N}]}]}
std::string RenderMetricsJson(const Metrics& metrics);

// One "# TYPE" line per metric family, then its samples; histograms as _bucket/_sum/_count.
std::string RenderMetricsPrometheus(const Metrics& metrics);

// The content type of the Prometheus text format.
inline constexpr const char* kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace fdyno::http
