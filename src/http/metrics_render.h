// Renders the process metrics registry (base/metrics.h) for GET /metrics (JSON) and
// GET /metrics/prometheus (Prometheus text exposition format 0.0.4).
//
// Naming contract for what is registered: base/metrics.h. Names match [a-zA-Z_][a-zA-Z0-9_]*
// (other characters are rendered as '_'). Both renderings first run the registry's collectors.
#pragma once

#include <string>

#include "base/metrics.h"

namespace fdyno::http {

// {"counters":[{"name":..,"labels":{..},"value":N}],"gauges":[..],
//  "histograms":[{"name":..,"labels":{..},"count":N,"sum_us":N,
//                 "buckets":[{"le_us":100,"count":N},..,{"le_us":"+Inf","count":N}]}]}
// with registered names; a histogram not in seconds has "sum" and "le" instead.
std::string RenderMetricsJson(const Metrics& metrics);

// Per family "# HELP" (when described) and "# TYPE", then its samples; histograms as
// _bucket/_sum/_count. Families are exposed under ExposedName.
std::string RenderMetricsPrometheus(const Metrics& metrics);

// The Prometheus name of a registered family: "fdyno_" prefixed when missing, and for a
// counter "_total" appended when missing ("kv_conflicts" -> "fdyno_kv_conflicts_total").
std::string ExposedName(const std::string& registered, bool counter);

// The content type of the Prometheus text format.
inline constexpr const char* kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

}  // namespace fdyno::http
