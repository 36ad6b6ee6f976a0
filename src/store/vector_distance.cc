#include "store/vector_distance.h"

#include <algorithm>
#include <cmath>

namespace fdyno::store {

// Four independent accumulators: the loop pipelines (and vectorizes) without reassociating a
// single sum, so the result is the same on every build.

double DotProduct(const float* a, const float* b, size_t n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += static_cast<double>(a[i]) * b[i];
    s1 += static_cast<double>(a[i + 1]) * b[i + 1];
    s2 += static_cast<double>(a[i + 2]) * b[i + 2];
    s3 += static_cast<double>(a[i + 3]) * b[i + 3];
  }
  for (; i < n; ++i) s0 += static_cast<double>(a[i]) * b[i];
  return (s0 + s1) + (s2 + s3);
}

double SquaredNorm(const float* a, size_t n) { return DotProduct(a, a, n); }

double Euclidean(const float* a, const float* b, size_t n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  size_t i = 0;
  auto sq = [](float x, float y) {
    const double d = static_cast<double>(x) - y;
    return d * d;
  };
  for (; i + 4 <= n; i += 4) {
    s0 += sq(a[i], b[i]);
    s1 += sq(a[i + 1], b[i + 1]);
    s2 += sq(a[i + 2], b[i + 2]);
    s3 += sq(a[i + 3], b[i + 3]);
  }
  for (; i < n; ++i) s0 += sq(a[i], b[i]);
  return std::sqrt((s0 + s1) + (s2 + s3));
}

double Cosine(const float* query, double query_norm, const float* b, size_t n) {
  double d0 = 0, d1 = 0, n0 = 0, n1 = 0;
  size_t i = 0;
  for (; i + 2 <= n; i += 2) {
    d0 += static_cast<double>(query[i]) * b[i];
    d1 += static_cast<double>(query[i + 1]) * b[i + 1];
    n0 += static_cast<double>(b[i]) * b[i];
    n1 += static_cast<double>(b[i + 1]) * b[i + 1];
  }
  for (; i < n; ++i) {
    d0 += static_cast<double>(query[i]) * b[i];
    n0 += static_cast<double>(b[i]) * b[i];
  }
  const double norm = std::sqrt(n0 + n1);
  if (query_norm == 0 || norm == 0) return 1.0;
  // Rounding can carry the cosine a hair past +-1.
  return std::clamp(1.0 - (d0 + d1) / (query_norm * norm), 0.0, 2.0);
}

double VectorScore(DistanceFunction f, const float* query, double query_norm, const float* b,
                   size_t n) {
  switch (f) {
    case DistanceFunction::kCosine:
      return Cosine(query, query_norm, b, n);
    case DistanceFunction::kEuclidean:
      return Euclidean(query, b, n);
    case DistanceFunction::kDotProduct:
      return DotProduct(query, b, n);
  }
  return 0;
}

}  // namespace fdyno::store
