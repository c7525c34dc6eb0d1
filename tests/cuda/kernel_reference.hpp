// The float64 references of the three CUDA kernels (gpt2/model/cuda/*_kernel.hpp), written from each header's
// contract and nothing else: no partition, no reduction order, no float32 rounding. Plain C++ (no CUDA, no
// LibTorch): the kernel check (tests/cuda/) compares the kernels with these, and tests/cuda_reference/ checks
// these against facts that do not come from the same formulas (moments, finite differences).
// Every input is given as double: the caller widens the kernels' float32 and bf16 inputs exactly.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace gaugelab::kcheck::ref {

/// bf16 bits widened to float (exact: bf16 is float32's top half).
inline float bf16_to_float(std::uint16_t b) {
  const std::uint32_t u = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

/// float rounded to bf16 bits, to nearest with ties to even (as __float2bfloat16); NaN stays NaN.
inline std::uint16_t float_to_bf16(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x0040u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}

// ---- residual add + LayerNorm (residual_layer_norm_kernel.hpp) ----

/// Forward over s [rows, cols] (already x + branch, or x): mean [rows], rstd = 1/√(var + eps) with var the
/// biased variance [rows], y = (s − mean)·rstd·γ + β [rows, cols]; beta null means no bias.
inline void layer_norm_forward(const double* s, const double* gamma, const double* beta, std::int64_t rows,
                               std::int64_t cols, double eps, double* y, double* mean, double* rstd) {
  for (std::int64_t i = 0; i < rows; ++i) {
    const double* si = s + i * cols;
    double mu = 0;
    for (std::int64_t c = 0; c < cols; ++c) mu += si[c];
    mu /= static_cast<double>(cols);
    double var = 0;
    for (std::int64_t c = 0; c < cols; ++c) var += (si[c] - mu) * (si[c] - mu);
    var /= static_cast<double>(cols);
    const double rs = 1.0 / std::sqrt(var + eps);
    for (std::int64_t c = 0; c < cols; ++c)
      y[i * cols + c] = (si[c] - mu) * rs * gamma[c] + (beta != nullptr ? beta[c] : 0.0);
    mean[i] = mu;
    rstd[i] = rs;
  }
}

/// Backward of the forward above for the gradient dy of y and ds of s from the stream's later uses (null: none),
/// at the given mean and rstd (the kernel takes the forward's):
///   dx = ds + (dŷ − mean(dŷ) − ŷ·mean(dŷ·ŷ))·rstd,  dŷ = dy·γ, ŷ = (s − mean)·rstd   [rows, cols]
///   dgamma += Σ_rows dy·ŷ, dbeta += Σ_rows dy (unless null)                         [cols], accumulated
inline void layer_norm_backward(const double* s, const double* mean, const double* rstd, const double* dy,
                                const double* ds, const double* gamma, std::int64_t rows, std::int64_t cols,
                                double* dx, double* dgamma, double* dbeta) {
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::int64_t off = i * cols;
    double a = 0, b = 0;
    for (std::int64_t c = 0; c < cols; ++c) {
      const double xhat = (s[off + c] - mean[i]) * rstd[i], dn = dy[off + c] * gamma[c];
      a += dn;
      b += dn * xhat;
      dgamma[c] += dy[off + c] * xhat;
      if (dbeta != nullptr) dbeta[c] += dy[off + c];
    }
    a /= static_cast<double>(cols);
    b /= static_cast<double>(cols);
    for (std::int64_t c = 0; c < cols; ++c) {
      const double xhat = (s[off + c] - mean[i]) * rstd[i], dn = dy[off + c] * gamma[c];
      dx[off + c] = (dn - a - xhat * b) * rstd[i] + (ds != nullptr ? ds[off + c] : 0.0);
    }
  }
}

// ---- W_eff = diag(r)·W̄·diag(c_g) (lrm_weight_kernel.hpp) ----

/// Group of row i: out/groups consecutive rows each.
inline std::int64_t lrm_group(std::int64_t i, std::int64_t out, std::int64_t groups) { return i / (out / groups); }

/// Rows [i0, i1) of W_eff[i, j] = r[i]·W[i, j]·c[g(i), j] over W [out, in]; r [out] or null (1), c [groups, in] or
/// null (1). e is the whole [out, in] output.
inline void lrm_weight_forward(const double* w, const double* r, const double* c, std::int64_t out, std::int64_t in,
                               std::int64_t groups, std::int64_t i0, std::int64_t i1, double* e) {
  for (std::int64_t i = i0; i < i1; ++i) {
    const double ri = r != nullptr ? r[i] : 1.0;
    const double* cg = c != nullptr ? c + lrm_group(i, out, groups) * in : nullptr;
    for (std::int64_t j = 0; j < in; ++j) e[i * in + j] = ri * w[i * in + j] * (cg != nullptr ? cg[j] : 1.0);
  }
}

/// Rows [i0, i1) of the backward for G = dL/dW_eff [out, in]:
///   dw[i, j] = G[i, j]·c[g(i), j]·r[i]                 (whole [out, in] array, rows i0..i1 written)
///   dr[i]    = Σ_j G[i, j]·c[g(i), j]·W[i, j]           (if r and dr)
///   dc[g, j] += Σ_{i in [i0, i1), g(i) = g} G[i, j]·W[i, j]·r[i]   (if c and dc; accumulated)
inline void lrm_weight_backward(const double* g, const double* w, const double* r, const double* c, std::int64_t out,
                                std::int64_t in, std::int64_t groups, std::int64_t i0, std::int64_t i1, double* dw,
                                double* dr, double* dc) {
  for (std::int64_t i = i0; i < i1; ++i) {
    const double ri = r != nullptr ? r[i] : 1.0;
    const std::int64_t grp = lrm_group(i, out, groups);
    const double* cg = c != nullptr ? c + grp * in : nullptr;
    double acc = 0;
    for (std::int64_t j = 0; j < in; ++j) {
      const double gv = g[i * in + j], wv = w[i * in + j], cj = cg != nullptr ? cg[j] : 1.0;
      dw[i * in + j] = gv * cj * ri;
      acc += gv * cj * wv;
      if (cg != nullptr && dc != nullptr) dc[grp * in + j] += gv * wv * ri;
    }
    if (r != nullptr && dr != nullptr) dr[i] = acc;
  }
}

// ---- the LM head's cross-entropy rows (lm_head_ce_kernel.hpp) ----

/// The row's target as the kernel reads it: an ignored target (< 0) clamped to column 0.
inline std::int64_t ce_target(std::int64_t t) { return t < 0 ? 0 : t; }

/// log Σ_{j < vocab} exp(x[j]) of one row (columns >= vocab are padding and not read).
inline double ce_row_lse(const double* x, std::int64_t vocab) {
  const double m = *std::max_element(x, x + vocab);
  double s = 0;
  for (std::int64_t j = 0; j < vocab; ++j) s += std::exp(x[j] - m);
  return m + std::log(s);
}

/// The row's loss: logsumexp(x[:vocab]) − x[target] (target clamped to >= 0), given its lse.
inline double ce_row_loss(const double* x, double lse, std::int64_t target) { return lse - x[ce_target(target)]; }

/// The gradient of scale·loss over the row's ld columns: (softmax(x[:vocab])_j − [j == target])·scale for
/// j < vocab, 0 in the padding.
inline void ce_row_grad(const double* x, double lse, std::int64_t vocab, std::int64_t ld, std::int64_t target,
                        double scale, double* grad) {
  const std::int64_t t = ce_target(target);
  for (std::int64_t j = 0; j < ld; ++j)
    grad[j] = j < vocab ? (std::exp(x[j] - lse) - (j == t ? 1.0 : 0.0)) * scale : 0.0;
}

}  // namespace gaugelab::kcheck::ref
