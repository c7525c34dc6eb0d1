// bfloat16 emulation: round a float/double value or matrix to the nearest bfloat16 number.
//
// Muon's Newton–Schulz iteration (KellerJordan/Muon) runs in bf16 on the GPU; the toys reproduce
// that on the CPU by rounding every intermediate of the iteration to bf16 (see update_muon.hpp).
//
// bfloat16 = 1 sign bit, 8 exponent bits (the float32 range), 7 stored mantissa bits (8 significant
// bits). Rounding is to nearest, ties to even (the rule torch's float→bf16 cast uses); overflow goes
// to ±inf, NaN stays NaN, values below the smallest normal (2⁻¹²⁶) round onto the bf16 subnormal
// grid 2⁻¹³³·ℤ. The computation is done directly in double (no double→float→bf16 chain, which
// could round twice), so the result is the correctly rounded bf16 value for float and double inputs.
#pragma once

#include <cfenv>
#include <cmath>
#include <limits>

#include "core/types.hpp"

namespace gaugelab::core {

/// Largest finite bfloat16 value, (2 − 2⁻⁷)·2¹²⁷.
inline constexpr double kBf16Max = 3.3895313892515355e38;

/// x rounded to the nearest bfloat16 number (ties to even), returned in double.
inline double round_to_bf16(double x) {
  if (!std::isfinite(x) || x == 0.0) return x;  // ±inf, NaN and ±0 are bf16 values already
  const double ax = std::fabs(x);
  double r;
  if (ax < 0x1.0p-126) {
    // Subnormal range: fixed quantum 2⁻¹³³. x·2¹³³ is exact (power-of-two scaling) and < 2⁷.
    r = std::ldexp(std::nearbyint(std::ldexp(ax, 133)), -133);
  } else {
    int e = 0;
    const double f = std::frexp(ax, &e);  // ax = f·2^e, f ∈ [0.5, 1)
    // Keep 8 significant bits: f·2⁸ ∈ [128, 256), rounded to an integer (ties to even under the
    // default rounding mode, which nearbyint honours and which the core never changes).
    r = std::ldexp(std::nearbyint(std::ldexp(f, 8)), e - 8);
    if (r > kBf16Max) r = std::numeric_limits<double>::infinity();
  }
  return std::signbit(x) ? -r : r;
}

/// Every entry of m rounded to bfloat16 (ties to even), kept in the scalar type T.
template <class T>
Mat<T> round_to_bf16(const Mat<T>& m) {
  return m.unaryExpr([](T v) { return static_cast<T>(round_to_bf16(static_cast<double>(v))); });
}

// Compiled once for float and double in core/update_rules_instances.cpp; the extern declarations keep every
// includer from instantiating these templates again (compile time).
#define GAUGELAB_CORE_UPDATE_BF16_INSTANCES(EXTERN, T) \
  EXTERN template Mat<T> round_to_bf16<T>(const Mat<T>&);
GAUGELAB_CORE_UPDATE_BF16_INSTANCES(extern, float)
GAUGELAB_CORE_UPDATE_BF16_INSTANCES(extern, double)

}  // namespace gaugelab::core
