// The float64 half of `gaugelab inspect` (seed 001 §6–§7, App. G, Tables 3–9): everything computed on
// a layer's effective attention matrices in the core's types, no LibTorch. inspect_model.hpp extracts
// those matrices from a model; inspect/run.cpp drives the tables and the log.
//
//   gauge_counts        Cor. 4 / §7.1 / §7.2 dimensions: h(d_k² + d_v²) per layer, the part the canonical
//                       slice removes, the orthogonal residual
//   projection_spectra  Table 3 (A4, A8): singular values of W_Q, W_K, W_V [d, d_k], W_O [d_v, d] per head
//   bilinear_rank       Table 4 (A7): the h forms M_i = W_Q⁽ⁱ⁾W_K⁽ⁱ⁾ᵀ stacked as an h × d² matrix, through
//                       its h × h Gram (same singular values, never d² wide)
//   slice_gauge         Table 8 / Algorithm 1: the element of (GL(d_k)^h × GL(d_v)^h) ⋊ S_h that carries a
//                       layer to its canonical representative (QR, Gram-balanced or covariance-balanced)
//   head_metrics        Table 8 metrics per head
//   lrm_head_stats      seed 000 per-head multiplier scales, and the per-coordinate imbalance GaugeFix leaves
//   distribution        Table 6 percentiles
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/attention_layer.hpp"

namespace gaugelab::gpt2::inspect {

// ---------------------------------------------------------------- counts (Cor. 4, §7.1, §7.2)

struct GaugeCounts {
  std::int64_t per_layer = 0;           // continuous gauge dimension h(d_k² + d_v²)       (Cor. 4)
  std::int64_t removed_per_layer = 0;   // fixed by the slice: h(d_k(d_k+1)/2 + d_v(d_v+1)/2)   (§7.2)
  std::int64_t residual_per_layer = 0;  // left: h(d_k(d_k−1)/2 + d_v(d_v−1)/2) = dim (O(d_k) × O(d_v))^h
  std::int64_t total = 0;               // L · per_layer                                       (§7.1)
  std::int64_t removed_total = 0;       // L · removed_per_layer
  std::int64_t residual_total = 0;      // L · residual_per_layer
};
/// Throws std::invalid_argument unless every size is >= 1.
GaugeCounts gauge_counts(std::int64_t layers, std::int64_t heads, std::int64_t d_k, std::int64_t d_v);

// ---------------------------------------------------------------- assumptions (Tables 3–4)

struct Spectrum {
  double sigma_min = 0;  // smallest singular value (of min(rows, cols))
  double sigma_max = 0;
  double kappa = 0;      // σ_max / σ_min (+inf when σ_min = 0)
  std::int64_t rank = 0;  // singular values > rel_tol · σ_max
};
/// Singular values of m [rows, cols] (Eigen BDCSVD, float64).
Spectrum spectrum(const core::Mat<double>& m, double rel_tol);

struct HeadSpectra {
  Spectrum q, k, v, o;  // W_Q, W_K, W_V [d, d_k or d_v] (A4: full column rank), W_O [d_v, d] (A8: full row rank)
};
std::vector<HeadSpectra> projection_spectra(const core::AttentionLayer<double>& layer, double rel_tol);

/// G [h, h] with G_ij = ⟨M_i, M_j⟩_F = Σ_ab (W_Q⁽ⁱ⁾ᵀW_Q⁽ʲ⁾)_ab (W_K⁽ⁱ⁾ᵀW_K⁽ʲ⁾)_ab, M_i = W_Q⁽ⁱ⁾W_K⁽ⁱ⁾ᵀ [d, d]:
/// the Gram of the stacked h × d² matrix, formed from two [h·d_k, h·d_k] products.
core::Mat<double> bilinear_gram(const core::AttentionLayer<double>& layer);

struct BilinearRank {
  std::int64_t heads = 0;
  std::int64_t rank = 0;           // singular values > rel_tol · σ_max (A7 holds when rank == heads)
  double sigma_max = 0;
  double sigma_min_nonzero = 0;    // smallest singular value above the tolerance
  double kappa = 0;                // σ_max / σ_min_nonzero
};
/// σ_i = √λ_i(G). The Gram squares the spectrum, so eigenvalues are exact to ~ε·λ_max and singular
/// values are resolved down to ~√ε·σ_max ≈ 1.5e-8·σ_max: rel_tol must stay above that (the verb uses 1e-6).
BilinearRank bilinear_rank(const core::AttentionLayer<double>& layer, double rel_tol);

// ---------------------------------------------------------------- canonical slices (Table 8)

/// Which representative of each head's orbit. Groups removed: per head the triangular (qr) or symmetric
/// positive (gram, covariance) part of GL(d_k), the triangular part of GL(d_v) — a residual O(d_k) × O(d_v)
/// stays (seed 001 Prop. 45) — and S_h by sorting heads by ‖W_K‖_F, descending. Why these: qr is the
/// seed's default (unique, stable, Algorithm 1); gram and covariance are its alternatives (§7.2, App. G.1)
/// where neither Q nor K alone carries the head's scale (core/gauge_fix_qr.hpp, core/gauge_fix_gram.hpp).
///   qr          Algorithm 1: W_Q = Q_Q R_Q, W_V = Q_V R_V (diag R > 0); gauges S = R_Q⁻¹, C = R_V⁻¹
///   gram        §7.2 / App. E.4 alternative: W_QᵀW_Q = W_KᵀW_K (SPD S, core::gram_balance_qk), V/O by QR
///   covariance  App. G.1's procedure: S_Q = S_K on the layer's inputs (core::covariance_balance_qk), V/O by QR
enum class Slice { qr, gram, covariance };
const char* slice_name(Slice s);                 // "qr", "gram", "covariance"
Slice parse_slice(const std::string& name);      // throws std::invalid_argument
std::vector<Slice> all_slices();

/// The gauge g with apply_layer_gauge(layer, g) = the canonical layer. `x` [N, d] are the layer's
/// attention inputs (used by the covariance slice only).
core::LayerGauge<double> slice_gauge(const core::AttentionLayer<double>& layer, Slice slice, const core::Mat<double>& x);

struct HeadMetrics {
  double key_norm = 0;           // ‖W_K‖_F (the ordering key)
  double v_orthonormality = 0;   // ‖W_VᵀW_V − I‖_F                      (Table 8; qr makes it 0)
  double q_orthonormality = 0;   // ‖W_QᵀW_Q − I‖_F                      (qr makes it 0)
  double qk_gram_imbalance = 0;  // ‖W_QᵀW_Q − W_KᵀW_K‖_F / ‖W_QᵀW_Q‖_F  (gram makes it 0)
  double qk_cov_imbalance = 0;   // ‖S_Q − S_K‖_F / ‖S_Q‖_F on x          (Table 8; covariance makes it 0)
  double kappa_s_q = 0;          // κ(S_Q)                                 (Table 8)
  double kappa_s_k = 0;          // κ(S_K)
};
/// The activation sample [S·T rows] split for the covariance slice: fitted on the first rows, measured
/// on the rest, so its "after" imbalance is not ≈ 0 by construction. Whole sequences when S >= 2
/// (the first ⌈S/2⌉ sequences fit), else the first half of the one sequence's positions.
struct SampleSplit {
  std::int64_t fit_rows = 0, held_rows = 0;
};
SampleSplit sample_split(std::int64_t sample_seqs, std::int64_t sample_len);

/// Per head, in the layer's head order; S_Q, S_K are the centred covariances of Q, K on x [N, d].
std::vector<HeadMetrics> head_metrics(const core::AttentionLayer<double>& layer, const core::Mat<double>& x);

// ---------------------------------------------------------------- LRM multipliers (seed 000)

struct LrmHeadStats {
  double s_q = 0, s_k = 0;     // RMS of the head's r_Q, r_K slices (core::lrm_head_scales)
  double product = 0;          // s_Q·s_K (the gauge-invariant part)
  double log_ratio = 0;        // log(s_Q/s_K): |·| is the head's drift (seed 000 eq. 3)
  double coord_max_after_fix = 0;  // after GaugeFix (core::gauge_fix): max_j |log|r_Q,j/r_K,j||
  double coord_rms_after_fix = 0;  // and its RMS over the head's coordinates
};
/// r_q, r_k, b_q, b_k [h·d_k] of one layer.
std::vector<LrmHeadStats> lrm_head_stats(const core::Vec<double>& r_q, const core::Vec<double>& r_k,
                                         const core::Vec<double>& b_q, const core::Vec<double>& b_k, std::int64_t heads);

// ---------------------------------------------------------------- model-level results (Tables 5–7, 9)

/// Relative errors of one transformed model (inspect_transforms.hpp says how each is measured).
struct TransformErrors {
  std::vector<double> score;  // [layers] attention scores Q·Kᵀ/√d_k, all heads
  std::vector<double> attn;   // [layers] attention-layer outputs
  double logit = 0;           // final logits
};

/// Seed 001 App. G.1's invalid transformations:
///   asym_qk        W_Q ← W_Q·A, W_K ← W_K·B (A, B independent)    — breaks the A⁻ᵀ pairing
///   wrong_inverse  W_Q ← W_Q·A, W_K ← W_K·A (A instead of A⁻ᵀ)
///   vo_mismatch    W_V ← W_V·C, W_O unchanged (no C⁻¹)
enum class InvalidFamily { asym_qk, wrong_inverse, vo_mismatch };
const char* family_name(InvalidFamily f);  // "asym_qk", "wrong_inverse", "vo_mismatch"
std::vector<InvalidFamily> all_families();

/// Original vs canonicalised model (Table 9).
struct Exactness {
  double mean_abs_logit_diff = 0;  // over every prompt position and vocabulary entry (teacher forcing)
  double max_abs_logit_diff = 0;
  double greedy_match = 0;         // fraction of prompts whose greedy continuation is identical
  double token_match = 0;          // fraction of greedy tokens identical position by position
};

// ---------------------------------------------------------------- distributions (Table 6)

struct Distribution {
  std::int64_t n = 0;
  double min = 0, median = 0, p90 = 0, p95 = 0, p99 = 0, max = 0, mean = 0;
};
/// Percentiles by linear interpolation between order statistics (numpy's default); NaN-free input required.
Distribution distribution(std::vector<double> values);

/// ‖b − a‖_F / (‖a‖_F + ε_fp32) (seed 001 App. G: ε_mach^FP32 = 2⁻²³ in the denominator), accumulated in double.
template <class T>
double relative_error(const core::Mat<T>& a, const core::Mat<T>& b) {
  const core::Mat<double> ad = a.template cast<double>();
  return (b.template cast<double>() - ad).norm() / (ad.norm() + 0x1.0p-23);
}

}  // namespace gaugelab::gpt2::inspect
