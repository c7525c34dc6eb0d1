// The loss `diag heads` steps on, written on the head's represented objects only.
//
// One head is two factor pairs (seed 003 §1), with each bias folded into its weight as an extra row so
// the gauge acts on one block (Q = X̃·[W_q; b_q] with X̃ = [X, 1]):
//   QK:  A = [W_q; b_q] [d+1, r],  B = [W_k; b_k] [d+1, r],  M_QK = A·Bᵀ   gauge (A S, B S⁻ᵀ)
//   VO:  A = [W_v; b_v] [d+1, r],  B = W_oᵀ       [d, r],    M_VO = A·Bᵀ   gauge (A T, B T⁻ᵀ)
// (without biases the extra row and the column of ones are dropped).
// Losses (both depend on (M_QK, M_VO) alone, so every representative has the same loss):
//   data    ½·mean over the counted entries of (X̃ M_QK X̃ᵀ/√r − L*)²  +  ½·mean of (X̃ M_VO − Y*)²
//           on a fixed batch X [T, d] ~ N(0, 1) (LayerNorm-like inputs); L*, Y* are the logits and the
//           value–output map of a teacher head on the same batch; with `causal` only entries j ≤ i count.
//   attention  ½·mean of (softmax(X̃ M_QK X̃ᵀ/√r)·X̃ M_VO − Y*)² [T, d]: the head's own output, the value path
//           through the attention (causal softmax over j ≤ i with `causal`), Y* the teacher head's output on
//           the batch — the true loss of one head, where `data` is a surrogate regressing the two maps apart.
//   matrix  ½‖M_QK − M*_QK‖²_F/numel + ½‖M_VO − M*_VO‖²_F/numel against the teacher's products,
//           evaluated through r×r Grams (never forming the [d+1, d+1] products).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "core/attention_head.hpp"
#include "core/types.hpp"

namespace gaugelab::harness {

using core::Index;
using core::Mat;

/// Indices of the four factors; sector s ∈ {0: QK, 1: VO} owns factors 2s (A) and 2s+1 (B).
enum FactorIndex : int { kQA = 0, kQB = 1, kVA = 2, kVB = 3 };
inline constexpr int kFactors = 4;

/// The two factor pairs of a head (or increments/gradients shaped like them).
struct HeadFactors {
  std::array<Mat<double>, kFactors> f;  // QA [d(+1), r], QB [d(+1), r], VA [d(+1), r], VB [d, r]
  Mat<double>& operator[](int i) { return f[static_cast<std::size_t>(i)]; }
  const Mat<double>& operator[](int i) const { return f[static_cast<std::size_t>(i)]; }
};

/// Factors of `h`; with `biases` the bias rows are appended to W_q, W_k, W_v.
HeadFactors factors_of(const core::AttentionHead<double>& h, bool biases);

/// Gauge image (QA·S, QB·S⁻ᵀ, VA·T, VB·T⁻ᵀ) for S, T [r, r] (solves, never an explicit inverse).
HeadFactors gauge_factors(const HeadFactors& x, const Mat<double>& S, const Mat<double>& T);

enum class LossKind { data, attention, matrix };
LossKind parse_loss_kind(const std::string& s);  // "data|attention|matrix"; std::invalid_argument otherwise

class HeadProblem {
 public:
  /// `x` [T, d] is the batch (unused by the matrix loss); `teacher` gives the targets.
  HeadProblem(LossKind kind, const core::AttentionHead<double>& teacher, const Mat<double>& x, bool biases,
              bool causal);

  double loss(const HeadFactors& p) const;
  /// ∇ of loss() with respect to every factor (each shaped like its factor); *loss_out gets the loss.
  HeadFactors gradient(const HeadFactors& p, double* loss_out = nullptr) const;

  /// X̃ [T, d(+1)] (data loss).
  const Mat<double>& input() const { return x_; }

 private:
  LossKind kind_;
  bool causal_;
  Mat<double> x_;           // [T, d(+1)]
  Mat<double> logit_star_;  // [T, T]
  Mat<double> out_star_;    // [T, d]: the teacher's value-output map (data) or its attention output (attention)
  double logit_count_ = 1;  // entries of the logits that count
  HeadFactors star_;        // teacher factors (matrix loss)
  std::array<double, 2> star_norm2_{};  // ‖M*‖² per sector
};

}  // namespace gaugelab::harness
