// The spread metrics of `diag heads`, evaluated through r×r Grams so a [d+1, d+1] product is never
// formed (O(d·r²) per evaluation instead of O(d²·r)).
//
// All motions are measured in the reference coordinates: an increment U taken at the representative
// (A S, B S⁻ᵀ) is pulled back to V_A = U_A S⁻¹, V_B = U_B Sᵀ (solves, not inverses), which leaves its
// represented motion unchanged: U_A (B S⁻ᵀ)ᵀ = V_A Bᵀ and (A S) U_Bᵀ = A V_Bᵀ. Post-step factors are
// A' = α·A + β·V (α = ρ and β = lr for a shrink-plus-increment; α = s·ρ, β = s·lr with the Hyperball
// retraction factor s = R/‖ρA_S + lr·U_A‖_F).
//
// Every matrix whose Frobenius norm is needed is P·Qᵀ with P, Q combinations of three blocks per
// factor — the reference factor A, the reference increment U and the difference D = V − U, which is
// formed explicitly so that equal steps cancel before any rounding — and ‖PQᵀ‖² = Σ (PᵀP) ⊙ (QᵀQ)
// follows from the 3×3 block Grams of {A, U, D}. The A and U blocks are computed once per reference
// step; each gauge adds DᵀD, DᵀA, DᵀU: 2.5 products of [d, r]ᵀ[d, r] per factor. Accuracy: the
// squared norm is a sum of terms; when the terms cancel (increments that differ mostly along the
// gauge orbit, D_A Bᵀ ≈ −A D_Bᵀ) the relative floor is about √u·‖D_A‖‖B‖/‖ΔM‖.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "harness/head_problem.hpp"

namespace gaugelab::harness {

/// Post-step coefficients per factor: A' = alpha·A + beta·V.
struct StepCoefs {
  std::array<double, kFactors> alpha{1, 1, 1, 1};
  std::array<double, kFactors> beta{0, 0, 0, 0};
};

/// Block Grams of one factor: g[p][q] = X_pᵀX_q [r, r] for X_0 = A, X_1 = U, X_2 = D. The A and U
/// blocks belong to a reference step and are shared by every gauge (`ref`); the D row d[q] = DᵀX_q
/// is the gauge's own (empty: D = 0).
struct FactorGrams {
  std::array<std::array<Mat<double>, 2>, 2> au;  // AᵀA, AᵀU; UᵀA, UᵀU
  const FactorGrams* ref = nullptr;              // where the A, U blocks live (nullptr: in `au`)
  std::array<Mat<double>, 3> d;                  // DᵀA, DᵀU, DᵀD (empty when D = 0)
  const Mat<double>& a_u(int p, int q) const { return (ref ? ref->au : au)[static_cast<std::size_t>(p)][static_cast<std::size_t>(q)]; }
};

/// A combination of the three blocks: block-column j of P is Σ_p c[j][p]·X_p.
using Combo = std::vector<std::array<double, 3>>;

/// PᵀP [k·r, k·r] for P = [X_0, X_1, X_2]·(c ⊗ I).
Mat<double> combo_gram(const FactorGrams& f, const Combo& c);

/// ‖P·Qᵀ‖²_F for P from factor a's blocks and Q from factor b's.
double combo_norm2(const FactorGrams& a, const Combo& ca, const FactorGrams& b, const Combo& cb);

/// Grams of every factor of a head; a reference keeps [A, U] [d, 2r] per factor for the gauges' DᵀA, DᵀU.
struct MotionGrams {
  std::array<FactorGrams, kFactors> f;
  std::array<Mat<double>, kFactors> au_cat;  // [A, U] per factor (reference only)
};

/// The A and U blocks (base AᵀA passed in, computed once per head); the D blocks are zero.
MotionGrams reference_grams(const HeadFactors& base, const HeadFactors& base_gram, const HeadFactors& inc);

/// Grams for the difference d = V − U against the reference grams `ref` (whose A, U blocks it shares).
MotionGrams difference_grams(const MotionGrams& ref, const HeadFactors& base, const HeadFactors& inc,
                             const HeadFactors& d);

/// Σ over sectors ‖U_A Bᵀ + A U_Bᵀ‖²: the reference step's first-order motion.
double first_order_norm2(const MotionGrams& m);
/// Σ over sectors ‖D_A Bᵀ + A D_Bᵀ‖²: the first-order motion difference.
double first_order_difference_norm2(const MotionGrams& m);
/// Σ over sectors ‖A'B'ᵀ − ABᵀ‖² of the reference step (A' = αA + βU).
double exact_motion_norm2(const MotionGrams& m, const StepCoefs& c);
/// Σ over sectors ‖A'_g B'_gᵀ − A'_r B'_rᵀ‖² with A'_g = α_g A + β_g(U + D), A'_r = α_r A + β_r U.
double exact_difference_norm2(const MotionGrams& m, const StepCoefs& c_g, const StepCoefs& c_r);

/// The post-step factors alpha·base + beta·inc.
HeadFactors stepped(const HeadFactors& base, const HeadFactors& inc, const StepCoefs& c);

/// Σ over factors of ‖X_i‖²_F.
double squared_norm(const HeadFactors& x);
/// Σ over factors of ‖X_i − Y_i‖²_F.
double squared_distance(const HeadFactors& x, const HeadFactors& y);

/// Median and maximum over gauges, NaN entries (failed gauges) left out; NaN when none is left.
struct Spread {
  double median = 0;
  double max = 0;
  std::int64_t count = 0;  // gauges that entered
};
Spread summarise(std::vector<double> values);

}  // namespace gaugelab::harness
