// Quotient wrappers (DESIGN §3, seed 003 §3 and §7): act on the raw increments (U_A, U_B) of any
// update rule so that the represented motion depends on M = ABᵀ rather than on the representative.
//
//   opposite-Gram correction  ΔA = U_A(BᵀB + λI)⁻¹,  ΔB = U_B(AᵀA + λI)⁻¹      (seed 003 §3)
//   head-wise QK              Ũ_Q = U_Q(W_KᵀW_K + λI)⁻¹,  Ũ_K = U_K(W_QᵀW_Q + λI)⁻¹
//   head-wise VO              Ũ_V = U_V(W_O W_Oᵀ + λI)⁻¹,  Ũ_O = (W_VᵀW_V + λI)⁻¹U_O
//   diagonal approximation    Grams replaced by their diagonals                 (seed 003 §7)
//   periodic full correction  full on steps t ≡ 0 (mod k), `between` otherwise   (seed 003 §7)
//   random gauge smoothing    quotient_smoothing.hpp                              (seed 003 §7)
//
// Why it works: under (A, B) → (AS, BS⁻ᵀ) the GD increments move as U_A → U_A·S⁻ᵀ (covector) while
// BᵀB → S⁻¹BᵀBS⁻ᵀ, so U_A(BᵀB)⁻¹ → U_A(BᵀB)⁻¹·S: for undamped (λ = 0) full-rank GD the corrected
// increment is quotient-compatible (seed 003 §3, "Compatible Increment") and ΔM is representative-
// independent. For other rules it is a wrapper that removes the direct opposite-factor scale
// dependence; exact equivariance then depends on how the raw increment transforms. The diagonal
// form is exact for diagonal gauges S only (then diag(S⁻¹HS⁻ᵀ) = S⁻¹diag(H)S⁻¹). λ > 0 breaks exact
// compatibility in exchange for a bounded correction when a factor is nearly rank-deficient.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "core/quotient_motion.hpp"
#include "core/quotient_smoothing.hpp"
#include "core/quotient_solve.hpp"

namespace gaugelab::core {

enum class QuotientMode { none, diagonal, full };

/// Parses "none|diagonal|full"; throws std::invalid_argument naming the value.
inline QuotientMode parse_quotient_mode(std::string_view s) {
  if (s == "none") return QuotientMode::none;
  if (s == "diagonal") return QuotientMode::diagonal;
  if (s == "full") return QuotientMode::full;
  throw std::invalid_argument("unknown quotient mode '" + std::string(s) + "' (expected none|diagonal|full)");
}

inline std::string_view quotient_mode_name(QuotientMode m) {
  switch (m) {
    case QuotientMode::none: return "none";
    case QuotientMode::diagonal: return "diagonal";
    case QuotientMode::full: return "full";
  }
  return "?";
}

struct QuotientOptions {
  QuotientMode mode = QuotientMode::full;  // which correction to apply
  double damping = 0.0;                    // λ >= 0 added to each Gram (0: exact compatibility, needs full rank)
  GramSolve solve = GramSolve::cholesky;   // full mode: Cholesky of the formed Gram or QR of the factor
};

/// U·(FᵀF + λI)⁻¹ (or its diagonal form, or U itself) according to o.mode.
template <class T>
Mat<T> opposite_gram_apply(const Mat<T>& U /*[k, r]*/, const Mat<T>& F /*[p, r]*/, const QuotientOptions& o) {
  switch (o.mode) {
    case QuotientMode::none: return U;
    case QuotientMode::diagonal: return right_diag_gram_solve(U, F, o.damping);
    case QuotientMode::full: return right_gram_solve(U, F, o.damping, o.solve);
  }
  throw std::invalid_argument("opposite_gram_apply: bad QuotientMode");
}

/// Opposite-Gram correction of a factor pair's increments: ΔA = U_A(BᵀB+λI)⁻¹, ΔB = U_B(AᵀA+λI)⁻¹.
template <class T>
PairIncrement<T> opposite_gram_correction(const Mat<T>& A /*[m, r]*/, const Mat<T>& B /*[n, r]*/,
                                          const Mat<T>& U_A /*[m, r]*/, const Mat<T>& U_B /*[n, r]*/,
                                          const QuotientOptions& o = {}) {
  quotient_detail::require_pair_shapes(A, B, U_A, U_B, "opposite_gram_correction");
  return {opposite_gram_apply(U_A, B, o), opposite_gram_apply(U_B, A, o)};
}

/// Same, on a PairIncrement.
template <class T>
PairIncrement<T> opposite_gram_correction(const Mat<T>& A /*[m, r]*/, const Mat<T>& B /*[n, r]*/,
                                          const PairIncrement<T>& U, const QuotientOptions& o = {}) {
  return opposite_gram_correction(A, B, U.U_A, U.U_B, o);
}

/// Corrected increments of one attention head's query–key pair.
template <class T>
struct QkIncrement {
  Mat<T> U_Q;  // [d, dh]
  Mat<T> U_K;  // [d, dh]
};

/// Corrected increments of one attention head's value–output pair.
template <class T>
struct VoIncrement {
  Mat<T> U_V;  // [d, dh]
  Mat<T> U_O;  // [dh, d]
};

/// Head-wise QK form: Ũ_Q = U_Q(W_KᵀW_K + λI)⁻¹, Ũ_K = U_K(W_QᵀW_Q + λI)⁻¹ (M_QK = W_Q·W_Kᵀ).
template <class T>
QkIncrement<T> correct_qk(const Mat<T>& W_Q /*[d, dh]*/, const Mat<T>& W_K /*[d, dh]*/, const Mat<T>& U_Q /*[d, dh]*/,
                          const Mat<T>& U_K /*[d, dh]*/, const QuotientOptions& o = {}) {
  PairIncrement<T> p = opposite_gram_correction(W_Q, W_K, U_Q, U_K, o);
  return {std::move(p.U_A), std::move(p.U_B)};
}

/// Head-wise VO form: Ũ_V = U_V(W_O W_Oᵀ + λI)⁻¹, Ũ_O = (W_VᵀW_V + λI)⁻¹U_O (M_VO = W_V·W_O; the
/// factor pair is A = W_V, B = W_Oᵀ, so the gauge acts as (W_V T, T⁻¹W_O)).
template <class T>
VoIncrement<T> correct_vo(const Mat<T>& W_V /*[d, dh]*/, const Mat<T>& W_O /*[dh, d]*/, const Mat<T>& U_V /*[d, dh]*/,
                          const Mat<T>& U_O /*[dh, d]*/, const QuotientOptions& o = {}) {
  const Mat<T> B = W_O.transpose();     // [d, dh]
  const Mat<T> U_B = U_O.transpose();   // [d, dh]
  PairIncrement<T> p = opposite_gram_correction(W_V, B, U_V, U_B, o);
  return {std::move(p.U_A), p.U_B.transpose()};
}

struct PeriodicQuotientOptions {
  QuotientOptions full{};                         // damping and solve of the full correction (mode forced to full)
  long long every = 1;                            // k >= 1: full correction on steps t ≡ 0 (mod k), t from 0
  QuotientMode between = QuotientMode::diagonal;  // on the other steps: diagonal (seed 003 §7 ladder) or none
};

/// Stateful schedule of the periodic full correction (seed 003 §7, "Periodic full correction").
/// next() returns the QuotientOptions for the current step and advances; pass them to any of the
/// correction functions above (pair, QK or VO form).
class PeriodicQuotient {
 public:
  explicit PeriodicQuotient(PeriodicQuotientOptions o = {}) : o_(o) {
    if (o_.every < 1) throw std::invalid_argument("PeriodicQuotient: every (k) must be >= 1, got " + std::to_string(o_.every));
  }
  /// Options used at step t (0-based).
  QuotientOptions options_for_step(long long t) const {
    QuotientOptions q = o_.full;
    q.mode = (t % o_.every == 0) ? QuotientMode::full : o_.between;
    return q;
  }
  /// Options for the current step; then the counter advances.
  QuotientOptions next() { return options_for_step(step_++); }
  long long step() const { return step_; }
  /// Sets the counter (resuming a run from a checkpoint).
  void set_step(long long t) {
    if (t < 0) throw std::invalid_argument("PeriodicQuotient: step must be >= 0");
    step_ = t;
  }

 private:
  PeriodicQuotientOptions o_;
  long long step_ = 0;
};

// Compiled once for float and double in core/quotient_instances.cpp; the extern declarations keep every
// includer from instantiating these templates again (compile time).
#define GAUGELAB_CORE_QUOTIENT_INSTANCES(EXTERN, T) \
  EXTERN template Mat<T> opposite_gram_apply<T>(const Mat<T>&, const Mat<T>&, const QuotientOptions&); \
  EXTERN template PairIncrement<T> opposite_gram_correction<T>(const Mat<T>&, const Mat<T>&, const Mat<T>&, const Mat<T>&, \
      const QuotientOptions&); \
  EXTERN template PairIncrement<T> opposite_gram_correction<T>(const Mat<T>&, const Mat<T>&, const PairIncrement<T>&, const QuotientOptions&); \
  EXTERN template QkIncrement<T> correct_qk<T>(const Mat<T>&, const Mat<T>&, const Mat<T>&, const Mat<T>&, const QuotientOptions&); \
  EXTERN template VoIncrement<T> correct_vo<T>(const Mat<T>&, const Mat<T>&, const Mat<T>&, const Mat<T>&, const QuotientOptions&);
GAUGELAB_CORE_QUOTIENT_INSTANCES(extern, float)
GAUGELAB_CORE_QUOTIENT_INSTANCES(extern, double)

}  // namespace gaugelab::core
