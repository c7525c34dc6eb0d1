// GaugeFix-LRM (seed 000 §3.3, eqs. 4–6): the function-preserving Q/K multiplier projection.
//
// Group removed: the per-head scalar Q/K multiplier gauge (ℝ₊)^h, r_Q ↦ r_Q/g, r_K ↦ r_K·g
// (seed 000 §3.2). Why this representative: it is the point of the orbit where the two RMS scales
// agree, s_Q = s_K (drift eq. 3 is 0), i.e. the head's scale is shared equally by Q and K — the
// configuration that keeps both in the same numeric range under low precision (seed 000 §3.2).
// The biases of Q and K are scaled with their multipliers: logits contain q_j k_j with
// q_j = r_Q,j(·) + b_Q,j, so scaling only r would change the bias terms (seed 000 §3.3 states
// exactness for r_Q ⊙ r_K; DESIGN §3 notes the biases are needed for exactness with biases).
#pragma once

#include <cmath>
#include <utility>

#include "core/coordinates.hpp"
#include "core/lrm_gauge.hpp"

namespace gaugelab::core {

struct GaugeFixOptions {
  double eps = 1e-12;  // ε of seed 000 eq. 4 ("e.g. 10⁻¹²"), guards heads whose scales vanish
};

/// g⁽ʰ⁾ = √((s_Q⁽ʰ⁾ + ε)/(s_K⁽ʰ⁾ + ε)) [h] (seed 000 eq. 4).
template <class T>
Vec<T> gauge_fix_factors(const QkMultipliers<T>& m, const GaugeFixOptions& options = {}) {
  require_qk(m, "gauge_fix_factors");
  const HeadScales<T> s = lrm_head_scales(m);
  const T eps = static_cast<T>(options.eps);
  return ((s.s_q.array() + eps) / (s.s_k.array() + eps)).sqrt().matrix();
}

template <class T>
struct GaugeFixResult {
  QkMultipliers<T> multipliers;  // after the projection
  Vec<T> g;                      // [h] the factors used
};

/// Applies eqs. (5)–(6) with the biases: r_Q/g, b_Q/g, r_K·g, b_K·g per head.
template <class T>
GaugeFixResult<T> gauge_fix(const QkMultipliers<T>& m, const GaugeFixOptions& options = {}) {
  const Vec<T> g = gauge_fix_factors(m, options);
  return {rescale_qk_multipliers(m, g), g};
}

/// In-place form for training loops: updates m and returns g [h].
template <class T>
Vec<T> apply_gauge_fix(QkMultipliers<T>& m, const GaugeFixOptions& options = {}) {
  GaugeFixResult<T> r = gauge_fix(m, options);
  m = std::move(r.multipliers);
  return r.g;
}

// Compiled once for float and double in core/gauge_fix_instances.cpp; the extern declarations keep every
// includer from instantiating these templates again (compile time).
#define GAUGELAB_CORE_GAUGE_FIX_LRM_INSTANCES(EXTERN, T) \
  EXTERN template Vec<T> gauge_fix_factors<T>(const QkMultipliers<T>&, const GaugeFixOptions&); \
  EXTERN template GaugeFixResult<T> gauge_fix<T>(const QkMultipliers<T>&, const GaugeFixOptions&); \
  EXTERN template Vec<T> apply_gauge_fix<T>(QkMultipliers<T>&, const GaugeFixOptions&);
GAUGELAB_CORE_GAUGE_FIX_LRM_INSTANCES(extern, float)
GAUGELAB_CORE_GAUGE_FIX_LRM_INSTANCES(extern, double)

}  // namespace gaugelab::core
