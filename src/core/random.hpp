// Seeded random draws used by the core, the harness and the tests.
//
// One generator type everywhere (std::mt19937_64) so a seed printed in a log reproduces a draw
// on any platform; the Gaussian uses Box–Muller on top of it rather than std::normal_distribution,
// whose output is implementation-defined.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

#include "core/types.hpp"

namespace gaugelab::core {

using Rng = std::mt19937_64;

// --- seed hashing: the one place every tier derives seeds from seeds ---

/// splitmix64 (Steele, Lea & Flood 2014): the state x advanced by the golden-ratio increment, then the
/// finaliser; a bijection of uint64.
constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/// Output number index + 1 of the splitmix64 stream started at `seed`: splitmix64(seed + φ·index).
/// The harness's cells, gauges and batches draw their seeds this way.
constexpr std::uint64_t splitmix_at(std::uint64_t seed, std::uint64_t index) {
  return splitmix64(seed + 0x9E3779B97F4A7C15ULL * index);
}

/// A seed for item `index` of what `seed` seeds, both hashed (no two nearby (seed, index) pairs
/// correlate): the trainer's data order and its per-step RNG.
constexpr std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t index) {
  return splitmix64(splitmix64(seed) ^ splitmix64(index + 0x632be59bd9b4e019ULL));
}

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
