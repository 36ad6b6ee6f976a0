// The distance functions of vector indexes (DynamoDB's VectorDistanceFunction), over float32
// vectors, accumulated in double so that no float32 input overflows or loses the order of
// close candidates:
//   COSINE       1 - a.b / (|a| |b|), in [0, 2] (0: same direction). A zero vector has no
//                direction: its distance to anything is 1 (docs/compatibility.md).
//   EUCLIDEAN    sqrt(sum (a_i - b_i)^2)
//   DOT_PRODUCT  a.b (higher is more similar)
// The score is what SearchVectors reports; the rank orders candidates, lower first, for every
// function (the negated score for DOT_PRODUCT). Pure functions; thread-safe.
#pragma once

#include <cstddef>

#include "store/catalog.h"

namespace fdyno::store {

double DotProduct(const float* a, const float* b, size_t n);
double SquaredNorm(const float* a, size_t n);
double Euclidean(const float* a, const float* b, size_t n);
// REQUIRES: query_norm == sqrt(SquaredNorm(query, n)).
double Cosine(const float* query, double query_norm, const float* b, size_t n);

// The score of `b` against `query` by `f`. REQUIRES: query_norm as for Cosine.
double VectorScore(DistanceFunction f, const float* query, double query_norm, const float* b,
                   size_t n);

// Lower ranks first.
inline double RankOf(DistanceFunction f, double score) {
  return f == DistanceFunction::kDotProduct ? -score : score;
}

}  // namespace fdyno::store
