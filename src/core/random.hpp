// Seeded random draws used by the core, the harness and the tests.
//
// One generator type everywhere (std::mt19937_64) so a seed printed in a log reproduces a draw
// on any platform; the Gaussian uses Box–Muller on top of it rather than std::normal_distribution,
// whose output is implementation-defined.
#pragma once

#include <cmath>
#include <random>

#include "core/types.hpp"

namespace gaugelab::core {

using Rng = std::mt19937_64;

/// Uniform in [0, 1), 53 bits, identical across standard libraries.
inline double uniform01(Rng& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

/// Uniform in [lo, hi).
inline double uniform(Rng& rng, double lo, double hi) { return lo + (hi - lo) * uniform01(rng); }

/// Standard normal by Box–Muller (portable, unlike std::normal_distribution).
inline double normal(Rng& rng) {
  double u1 = uniform01(rng);
  while (u1 <= 0.0) u1 = uniform01(rng);
  const double u2 = uniform01(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

/// [rows, cols] matrix of i.i.d. N(0, stddev²).
template <class T>
Mat<T> randn(Rng& rng, Index rows, Index cols, double stddev = 1.0) {
  Mat<T> m(rows, cols);
  for (Index j = 0; j < cols; ++j)
    for (Index i = 0; i < rows; ++i) m(i, j) = static_cast<T>(stddev * normal(rng));
  return m;
}

/// [n] vector of i.i.d. N(0, stddev²).
template <class T>
Vec<T> randn_vec(Rng& rng, Index n, double stddev = 1.0) {
  Vec<T> v(n);
  for (Index i = 0; i < n; ++i) v(i) = static_cast<T>(stddev * normal(rng));
  return v;
}

}  // namespace gaugelab::core
