// The relu toy's full-batch GD step (seed 004 eq. 10 with d = m = 1), templated on the hidden width.
// The task pass (MSE's residuals and backward sums) is the sorted O(N + H) one of
// toys/relu_sorted_pass.hpp by default, or the dense O(N·H) one below (Setup::sorted = false).
// ReluKernel<20> (the paper's H) keeps every parameter, gradient and per-sample buffer in fixed-size
// Eigen arrays: the step is unrolled and vectorised over the 20 neurons, on the stack, no allocation.
// ReluKernel<Eigen::Dynamic> runs the same code for any other H on arrays sized once in the
// constructor (assignments into them never reallocate), so no width pays an allocation per step.
// Formulas: the task gradient is back-propagation of mean((f − y)²); the penalty gradient is seed 004
// (A11)-(A12) with n1 = |w1_i|, n2 = |w2_i| (d = m = 1), equal to core::soft_gauge_penalty_gradient
// (tests/toys checks both against the core).
#pragma once

#include <Eigen/Core>
#ifdef __AVX512F__
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "toys/relu_sorted_pass.hpp"

namespace gaugelab::toys {
struct MaskedResidual;
}  // namespace gaugelab::toys

namespace Eigen::internal {
template <>
struct functor_traits<gaugelab::toys::MaskedResidual> {
  enum { Cost = 2, PacketAccess = 1 };
};
}  // namespace Eigen::internal

namespace gaugelab::toys {

/// Loss pieces at the current parameters: train MSE, G(θ) (eq. 9, computed only when lambda > 0
/// inside the step), total = mse + lambda * G.
struct ReluLoss {
  double mse = 0, penalty = 0, total = 0;
};

/// r · 1[z > 0] as an Eigen functor with a packet path (a compare and a bitwise and): Eigen 3.4's
/// select() is scalar-only, and this mask is the inner loop of the backward pass (the portable
/// path; AVX-512 builds use mask registers directly, see ReluKernel::backward_group).
struct MaskedResidual {
  double operator()(double z, double r) const { return z > 0.0 ? r : 0.0; }
  template <typename Packet>
  Packet packetOp(const Packet& z, const Packet& r) const {
    using namespace Eigen::internal;
    return pand(pcmp_lt(pzero(z), z), r);
  }
};

/// Width-independent face of the kernel (one virtual call per step; the work inside is O(N·H)).
class ReluKernelBase {
 public:
  virtual ~ReluKernelBase() = default;
  virtual ReluLoss evaluate() = 0;  // loss and gradient at the current parameters
  virtual void descend() = 0;       // θ ← θ − lr·∇ with the gradient of the last evaluate()
  virtual double val_mse() const = 0;
  virtual double penalty() const = 0;    // G(θ), eq. 9
  virtual double max_abs_v() const = 0;  // max_i |v_i|, v_i = log(n1_i + ε) − log(n2_i + ε)
  /// Seed 004 eq. (20) at the current parameters with the gradient of the last evaluate(), per neuron,
  /// into caller buffers [H] each, without allocating: v_i, κ_i, v̇_i = −∇v_i·g (the core's
  /// gauge_coordinate_rates) and c_i = w1_i² + b1_i² − w2_i² (the core's relu_balance); tests/toys checks both.
  virtual void gauge_dynamics(double* v, double* kappa, double* dv_dt, double* balance) const = 0;
  /// Parameters / gradient, flat in the order w1[H], b1[H], w2[H], b2.
  virtual std::vector<double> params() const = 0;
  virtual std::vector<double> grad() const = 0;
};

// GCC 12 reports its own _mm512_undefined_pd() inside AVX-512 reductions as uninitialised (a false
// positive, the lanes are overwritten); silenced for this kernel only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"

template <int H>
class ReluKernel final : public ReluKernelBase {
 public:
  using Arr = Eigen::Array<double, H, 1>;  // [H]
  static constexpr int kBlock = 8;         // samples per block: one AVX-512 register of doubles
  using Blk = Eigen::Array<double, kBlock, 1>;         // [kBlock]
  using Data = Eigen::Array<double, kBlock, Eigen::Dynamic>;  // [kBlock, blocks]

  struct Setup {
    const double *x_train, *y_train;  // [n_train]
    const double *x_val, *y_val;      // [n_val]
    Eigen::Index n_train, n_val;
    double lr, lambda, eps;
    bool sorted = true;  // the O(N + H) sorted task pass (toys/relu_sorted_pass.hpp); false: the dense O(N·H) one
  };

  /// `w1, b1, w2` [H] and b2: the initial net. The data pointers must outlive the kernel.
  ReluKernel(const Setup& s, const double* w1, const double* b1, const double* w2, double b2, Eigen::Index h)
      : s_(s), w1_(h), b1_(h), w2_(h), gw1_(h), gb1_(h), gw2_(h), n1_(h), n2_(h), v_(h), sb_(h), sx_(h), b2_(b2) {
    if (s.sorted) sorted_.emplace(s.x_train, s.y_train, s.n_train, h);
    for (Eigen::Index i = 0; i < h; ++i) {
      w1_(i) = w1[i];
      b1_(i) = b1[i];
      w2_(i) = w2[i];
    }
    // Training data in blocks of kBlock samples, the last block padded with mask 0.
    const Eigen::Index blocks = (s.n_train + kBlock - 1) / kBlock;
    xb_.setZero(kBlock, blocks);
    yb_.setZero(kBlock, blocks);
    mb_.setZero(kBlock, blocks);
    for (Eigen::Index k = 0; k < s.n_train; ++k) {
      xb_(k % kBlock, k / kBlock) = s.x_train[k];
      yb_(k % kBlock, k / kBlock) = s.y_train[k];
      mb_(k % kBlock, k / kBlock) = 1.0;
    }
    rb_.setZero(kBlock, blocks);
  }

  ReluLoss evaluate() override {
    // The task pass: residuals and the per-neuron backward sums sb = Σ r·1[z>0], sx = Σ r·1[z>0]·x,
    // stored as unscaled gradients by store_group_sums().
    TaskSums t;
    if (sorted_) {
      const auto s = sorted_->run(w1_, b1_, w2_, b2_, sb_, sx_);
      for (Eigen::Index i = 0; i < w1_.size(); ++i) store_group_sums(i, sb_(i), sx_(i));
      t = {s.sse, s.rsum};
    } else {
      t = dense_pass();
    }
    const Eigen::Index h = w1_.size();
    // d(mean r²)/dθ = (2/N) Σ r ∂f/∂θ, with ∂f/∂w1_i = w2_i 1[z>0] x, ∂f/∂b1_i = w2_i 1[z>0].
    const double scale = 2.0 / static_cast<double>(s_.n_train);
    gw2_ *= scale;
    gb1_ *= scale;
    gw1_ *= scale;
    gb2_ = scale * t.rsum;
    ReluLoss l;
    l.mse = t.sse / static_cast<double>(s_.n_train);
    if (s_.lambda > 0) {
      // (A11)-(A12): ∇_{w1_i} G = (2/H) v_i w1_i / (n1 (n1 + ε)), ∇_{w2_i} G = −(2/H) v_i w2_i / (n2 (n2 + ε));
      // a zero norm has no direction and contributes nothing (as in the core).
      const double c = s_.lambda * 2.0 / static_cast<double>(h);
      n1_ = w1_.abs();
      n2_ = w2_.abs();
      fill_v(v_);
      l.penalty = v_.square().mean();
      gw1_ += (n1_ > 0.0).select(c * v_ * w1_ / (n1_ * (n1_ + s_.eps)), 0.0);
      gw2_ -= (n2_ > 0.0).select(c * v_ * w2_ / (n2_ * (n2_ + s_.eps)), 0.0);
    }
    l.total = l.mse + s_.lambda * l.penalty;
    return l;
  }

  void descend() override {
    w1_ -= s_.lr * gw1_;
    b1_ -= s_.lr * gb1_;
    w2_ -= s_.lr * gw2_;
    b2_ -= s_.lr * gb2_;
  }

  double val_mse() const override {
    double sse = 0;
    for (Eigen::Index s = 0; s < s_.n_val; ++s) {
      const double r = b2_ + (w2_ * (w1_ * s_.x_val[s] + b1_).max(0.0)).sum() - s_.y_val[s];
      sse += r * r;
    }
    return sse / static_cast<double>(s_.n_val);
  }

  double penalty() const override {
    Arr v(w1_.size());
    fill_v(v);
    return v.square().mean();
  }
  double max_abs_v() const override {
    Arr v(w1_.size());
    fill_v(v);
    return v.abs().maxCoeff();
  }

  void gauge_dynamics(double* v, double* kappa, double* dv_dt, double* balance) const override {
    const Eigen::Index h = w1_.size();
    Eigen::Map<Arr> mv(v, h), mk(kappa, h), md(dv_dt, h), mb(balance, h);
    fill_v(mv);
    const double eps = s_.eps, pre = 2.0 * s_.lambda / static_cast<double>(h);
    for (Eigen::Index i = 0; i < h; ++i) {
      const double n1 = std::fabs(w1_(i)), n2 = std::fabs(w2_(i));
      mk(i) = pre * (1.0 / ((n1 + eps) * (n1 + eps)) + 1.0 / ((n2 + eps) * (n2 + eps)));
      double dv_dot_g = 0.0;  // ∇v_i·g; a zero norm has no direction (as in the core)
      if (n1 > 0.0) dv_dot_g += w1_(i) * gw1_(i) / (n1 * (n1 + eps));
      if (n2 > 0.0) dv_dot_g -= w2_(i) * gw2_(i) / (n2 * (n2 + eps));
      md(i) = -dv_dot_g;
    }
    mb = w1_.square() + b1_.square() - w2_.square();
  }

  std::vector<double> params() const override { return flat(w1_, b1_, w2_, b2_); }
  std::vector<double> grad() const override { return flat(gw1_, gb1_, gw2_, gb2_); }

 private:
  using TaskSums = typename ReluSortedPass<H>::Sums;  // Σ r², Σ r: what either task pass returns

  // The dense task pass, O(N·H): every neuron on every sample (--kernel dense; the reference the
  // sorted pass is checked against, and the FMA-peak figure of bench/toys_relu).
  TaskSums dense_pass() {
    // Pass 1 (forward), samples in blocks of kBlock (one SIMD register of doubles), the neuron loop
    // unrolled for fixed H: residuals r = f(x) − y of every sample (0 on padding).
    const Eigen::Index h = w1_.size();
    Blk sse = Blk::Zero(), rsum = Blk::Zero();
    for (Eigen::Index b = 0; b < xb_.cols(); ++b) {
      const auto x = xb_.col(b);
      // Four partial sums over the neurons, so consecutive multiply-adds do not wait on each other.
      Blk p0 = Blk::Constant(b2_), p1 = Blk::Zero(), p2 = Blk::Zero(), p3 = Blk::Zero();
      Eigen::Index i = 0;
      for (; i + 4 <= h; i += 4) {
        p0 += w2_(i) * (w1_(i) * x + b1_(i)).max(0.0);
        p1 += w2_(i + 1) * (w1_(i + 1) * x + b1_(i + 1)).max(0.0);
        p2 += w2_(i + 2) * (w1_(i + 2) * x + b1_(i + 2)).max(0.0);
        p3 += w2_(i + 3) * (w1_(i + 3) * x + b1_(i + 3)).max(0.0);
      }
      if constexpr (H == Eigen::Dynamic || H % 4 != 0)
        for (; i < h; ++i) p0 += w2_(i) * (w1_(i) * x + b1_(i)).max(0.0);
      const Blk r = ((p0 + p1) + (p2 + p3) - yb_.col(b)) * mb_.col(b);
      rb_.col(b) = r;
      sse += r.square();
      rsum += r;
    }
    // Pass 2 (backward), kGroup neurons at a time over all blocks (their sums in registers, and
    // independent of each other so the adds overlap): sb = Σ r·1[z>0], sx = Σ r·1[z>0]·x. The
    // w2 gradient Σ r·max(z, 0) is w1·sx + b1·sb (z = w1·x + b1 where it is positive), one sum fewer.
    Eigen::Index i = 0;
    for (; i + kGroup <= h; i += kGroup) backward_group<kGroup>(i);
    if constexpr (H == Eigen::Dynamic || H % kGroup != 0)
      for (; i < h; ++i) backward_group<1>(i);
    return {sse.sum(), rsum.sum()};
  }

  static constexpr int kGroup = 4;  // neurons per backward group (8 accumulators + 8 constants in registers)

  // The backward sums of neurons i0 .. i0+P-1 over every block.
  template <int P>
  void backward_group(Eigen::Index i0) {
#ifdef __AVX512F__
    // AVX-512: the mask stays in a mask register and drives a masked add and a masked fma
    // (4 instructions per neuron and block instead of 5). Same sums, same order as below.
    static_assert(kBlock == 8, "one __m512d per block");
    __m512d vsb[P], vsx[P], vw1[P], vb1[P];
    for (int p = 0; p < P; ++p) {
      vsb[p] = vsx[p] = _mm512_setzero_pd();
      vw1[p] = _mm512_set1_pd(w1_(i0 + p));
      vb1[p] = _mm512_set1_pd(b1_(i0 + p));
    }
    const __m512d zero = _mm512_setzero_pd();
    for (Eigen::Index b = 0; b < xb_.cols(); ++b) {
      const __m512d x = _mm512_loadu_pd(xb_.col(b).data()), r = _mm512_loadu_pd(rb_.col(b).data());
      for (int p = 0; p < P; ++p) {
        const __mmask8 on = _mm512_cmp_pd_mask(_mm512_fmadd_pd(vw1[p], x, vb1[p]), zero, _CMP_GT_OQ);  // z > 0
        vsb[p] = _mm512_mask_add_pd(vsb[p], on, vsb[p], r);
        vsx[p] = _mm512_mask3_fmadd_pd(r, x, vsx[p], on);
      }
    }
    for (int p = 0; p < P; ++p) store_group_sums(i0 + p, _mm512_reduce_add_pd(vsb[p]), _mm512_reduce_add_pd(vsx[p]));
#else
    Blk sb[P], sx[P];
    double w1[P], b1[P];
    for (int p = 0; p < P; ++p) {
      sb[p].setZero();
      sx[p].setZero();
      w1[p] = w1_(i0 + p);
      b1[p] = b1_(i0 + p);
    }
    for (Eigen::Index b = 0; b < xb_.cols(); ++b) {
      const Blk x = xb_.col(b), r = rb_.col(b);
      for (int p = 0; p < P; ++p) {
        const Blk z = w1[p] * x + b1[p];
        const Blk rm = z.binaryExpr(r, MaskedResidual());  // r · 1[z > 0]
        sb[p] += rm;
        sx[p] += rm * x;
      }
    }
    for (int p = 0; p < P; ++p) store_group_sums(i0 + p, sb[p].sum(), sx[p].sum());
#endif
  }

  // Gradients of neuron i from sb = Σ r·1[z>0] and sx = Σ r·1[z>0]·x (before the 2/N scale).
  void store_group_sums(Eigen::Index i, double sb, double sx) {
    gw2_(i) = w1_(i) * sx + b1_(i) * sb;
    gb1_(i) = w2_(i) * sb;
    gw1_(i) = w2_(i) * sx;
  }

  // v_i = log(n1_i + ε) − log(n2_i + ε) into `v` [H]. Vectorised for the fixed width; a plain loop
  // for the dynamic one, whose out-of-line vectorised log GCC 12 flags with the false positive above.
  template <class Out>
  void fill_v(Out& v) const {
    if constexpr (H == Eigen::Dynamic) {
      for (Eigen::Index i = 0; i < w1_.size(); ++i)
        v(i) = std::log(std::fabs(w1_(i)) + s_.eps) - std::log(std::fabs(w2_(i)) + s_.eps);
    } else {
      v = (w1_.abs() + s_.eps).log() - (w2_.abs() + s_.eps).log();
    }
  }

  static std::vector<double> flat(const Arr& a, const Arr& b, const Arr& c, double d) {
    std::vector<double> out;
    out.reserve(static_cast<std::size_t>(3 * a.size() + 1));
    for (const Arr* p : {&a, &b, &c}) out.insert(out.end(), p->data(), p->data() + p->size());
    out.push_back(d);
    return out;
  }

  Setup s_;
  Arr w1_, b1_, w2_;     // [H] parameters
  Arr gw1_, gb1_, gw2_;  // [H] gradients
  Arr n1_, n2_, v_;      // [H] penalty scratch: |w1_i|, |w2_i|, v_i
  Arr sb_, sx_;          // [H] the sorted pass's backward sums
  double b2_ = 0, gb2_ = 0;
  Data xb_, yb_, mb_;    // [kBlock, blocks] training x, y, and 1 for a real sample / 0 for padding
  Data rb_;              // [kBlock, blocks] residuals of the current step
  std::optional<ReluSortedPass<H>> sorted_;  // the sorted task pass, when Setup::sorted
};

#pragma GCC diagnostic pop

}  // namespace gaugelab::toys
