// The relu toy's task pass (forward, residuals, backward sums of MSE) in O(N + H) work per step
// instead of the dense O(N·H), exact for a scalar input (d = 1).
//
// Why it is exact: with d = 1, neuron i is active on sample k iff z_ik = fma(w1_i, x_k, b1_i) > 0, and
// the correctly rounded fma is monotone in x_k, so over the samples sorted by x every neuron's active
// set is one run [lo_i, hi_i) that touches an end: [t_i, N) when w1_i > 0, [0, t_i) when w1_i < 0,
// all or nothing when w1_i = 0 (by the sign of b1_i). Between consecutive boundaries t the active set
// is constant, so f is affine there, f(x) = A·(x − x̄) + C with A = Σ_active w2_i w1_i and C = b2 +
// Σ_active w2_i·fma(w1_i, x̄, b1_i), x̄ the middle of the data (so data far from 0 does not cancel
// A·x against C); and the backward sums Σ_active r and Σ_active r·x are prefix (w1 < 0) or suffix
// (w1 > 0) sums of r and r·x at t_i, each over the neuron's own samples only. The mask is decided by the same predicate as the dense kernel's backward pass.
// A and C change by one neuron's term at each kink; they are carried as compensated sums (TwoSum), so
// a large term switched on and off again leaves no rounding behind and f has the rounding of a fresh
// sum over the active neurons (tests/toys compares the pass to the dense one, per neuron).
//
// Per step: each t_i by a galloping search from the previous step's t_i (GD moves a kink by a few
// samples at most, so ~2 predicate evaluations), the neurons ordered by t_i by insertion sort from the
// previous order, one pass over the samples in blocks of 8 (f, r, r·x and their running block sums
// from the start), one back (the running sums from the end), and one masked horizontal sum per boundary.
#pragma once

#include <Eigen/Core>
#ifdef __AVX512F__
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace gaugelab::toys {

/// First k in [0, n] with q(k) true, for q monotone on [0, n) (false ... false true ... true; k = n if
/// none), by galloping out from `guess` and then bisecting.
template <class Pred>
Eigen::Index first_true(const Pred& q, Eigen::Index n, Eigen::Index guess) {
  guess = std::clamp<Eigen::Index>(guess, 0, n);
  Eigen::Index lo, hi;  // the answer lies in [lo, hi]; q(hi) is true or hi == n
  if (guess < n && !q(guess)) {  // answer above guess
    lo = guess + 1;
    hi = lo;
    for (Eigen::Index step = 1; hi < n && !q(hi); step *= 2) {
      lo = hi + 1;
      hi = std::min(n, hi + step);
    }
  } else {  // answer at or below guess
    hi = guess;
    lo = guess;
    for (Eigen::Index step = 1; lo > 0 && q(lo - 1); step *= 2) {
      hi = lo - 1;
      lo = std::max<Eigen::Index>(0, hi - step);
    }
  }
  while (lo < hi) {
    const Eigen::Index mid = lo + (hi - lo) / 2;
    if (q(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/// Which implementation of the sample pass: AVX-512 (masks in mask registers) or portable loops.
enum class SortedPassPath { avx512, portable };

#ifdef __AVX512F__
inline constexpr SortedPassPath kDefaultSortedPath = SortedPassPath::avx512;
#else
inline constexpr SortedPassPath kDefaultSortedPath = SortedPassPath::portable;
#endif

template <int H, SortedPassPath Path = kDefaultSortedPath>
class ReluSortedPass {
 public:
  using Arr = Eigen::Array<double, H, 1>;  // [H]
  using Index = Eigen::Index;
  static constexpr int kBlock = 8;  // samples per block: one AVX-512 register of doubles

  /// Training data x, y [n]; copied, sorted by x (ties keep their order), padded to whole blocks.
  ReluSortedPass(const double* x, const double* y, Index n, Index h)
      : n_(n), blocks_((n + kBlock - 1) / kBlock), term_a_(h), term_c_(h), bound_(static_cast<size_t>(h), 0), order_(static_cast<size_t>(h)) {
    std::vector<Index> idx(static_cast<size_t>(n));
    std::iota(idx.begin(), idx.end(), Index{0});
    for (Index k = 0; k < n; ++k)  // a NaN would break the sort's ordering
      if (!std::isfinite(x[k])) throw std::invalid_argument("relu sorted pass: non-finite training x");
    std::stable_sort(idx.begin(), idx.end(), [&](Index a, Index b) { return x[a] < x[b]; });
    const size_t padded = static_cast<size_t>((blocks_ + 1) * kBlock);  // one spare zero block (see partial())
    xs_.assign(padded, 0.0);
    ys_.assign(padded, 0.0);
    ms_.assign(padded, 0.0);
    for (Index k = 0; k < n; ++k) {
      xs_[k] = x[idx[k]];
      ys_[k] = y[idx[k]];
      ms_[k] = 1.0;
    }
    for (Index k = n; k < static_cast<Index>(padded); ++k) xs_[k] = n > 0 ? xs_[n - 1] : 0.0;  // finite f on padding
    xbar_ = n > 0 ? 0.5 * (xs_[0] + xs_[n - 1]) : 0.0;
    xc_.assign(padded, 0.0);
    for (size_t k = 0; k < padded; ++k) xc_[k] = xs_[k] - xbar_;
    r_.assign(padded, 0.0);
    rx_.assign(padded, 0.0);
    vr_.assign(padded, 0.0);
    vrx_.assign(padded, 0.0);
    wr_.assign(padded, 0.0);
    wrx_.assign(padded, 0.0);
    std::iota(order_.begin(), order_.end(), 0);
  }

  struct Sums {
    double sse = 0, rsum = 0;  // Σ r², Σ r over the training samples, r = f(x) − y
  };

  /// Residuals at (w1, b1, w2 [H], b2) and, per neuron, sb_i = Σ_k r_k·1[z_ik > 0] and
  /// sx_i = Σ_k r_k·x_k·1[z_ik > 0] into `sb`, `sx` [H]. Non-finite parameters give NaN everywhere
  /// (the dense pass would propagate them; the divergence rule must see them).
  Sums run(const Arr& w1, const Arr& b1, const Arr& w2, double b2, Arr& sb, Arr& sx) {
    const Index h = w1.size();
    if (!(w1.isFinite().all() && b1.isFinite().all() && w2.isFinite().all() && std::isfinite(b2))) {
      sb.setConstant(NAN);
      sx.setConstant(NAN);
      return {NAN, NAN};
    }
    // Boundaries: t_i = first sample past neuron i's kink in the direction it switches.
    for (Index i = 0; i < h; ++i) {
      const double a = w1(i), c = b1(i);
      const size_t iu = static_cast<size_t>(i);
      if (a > 0) bound_[iu] = first_true([&](Index k) { return std::fma(a, xs_[k], c) > 0.0; }, n_, bound_[iu]);
      else if (a < 0) bound_[iu] = first_true([&](Index k) { return !(std::fma(a, xs_[k], c) > 0.0); }, n_, bound_[iu]);
      else bound_[iu] = c > 0.0 ? 0 : n_;  // constant z = b1: active everywhere or nowhere ("rising" at 0 or n)
    }
    // Active set at sample 0 and the neurons in boundary order (insertion sort: last step's order is
    // nearly right). A neuron with w1 > 0 switches on at its t_i, one with w1 < 0 off.
    // Each neuron's terms of A and C, rounded once and stored: the same value is added when it switches on
    // and subtracted when it switches off.
    for (Index i = 0; i < h; ++i) {
      term_a_(i) = w2(i) * w1(i);
      term_c_(i) = w2(i) * std::fma(w1(i), xbar_, b1(i));
    }
    Affine f;
    f.C = b2;
    for (Index i = 0; i < h; ++i)
      if (active_at(w1(i), bound_[static_cast<size_t>(i)], 0)) f.add(term_a_(i), term_c_(i));
    for (size_t j = 1; j < order_.size(); ++j) {
      const int v = order_[j];
      size_t p = j;
      for (; p > 0 && bound_[order_[p - 1]] > bound_[v]; --p) order_[p] = order_[p - 1];
      order_[p] = v;
    }
    size_t e = 0;  // next event in order_; events at 0 or n change nothing inside [0, n)
    while (e < order_.size() && bound_[order_[e]] == 0) ++e;
    Sums s = Path == SortedPassPath::avx512 ? sample_pass_avx512(w1, f, e) : sample_pass_portable(w1, f, e);
    for (Index i = 0; i < h; ++i) {
      const Index t = bound_[static_cast<size_t>(i)];
      if (w1(i) >= 0 && t == n_) {  // active nowhere: exactly 0, as in the dense pass (not rsum − rsum)
        sb(i) = sx(i) = 0.0;
        continue;
      }
      // Active on [0, t) or on [t, n): a prefix or a suffix sum, each summing only the neuron's own
      // samples (not total − prefix, whose rounding would scale with the other samples' residuals).
      const bool before = w1(i) < 0;
      sb(i) = partial(before ? vr_ : wr_, r_, t, before);
      sx(i) = partial(before ? vrx_ : wrx_, rx_, t, before);
    }
    return s;
  }

 private:
  static bool active_at(double w1, Index t, Index k) { return w1 < 0 ? k < t : k >= t; }

  // The affine piece f = A·(x − x̄) + C, A and C as compensated sums: value = hi + lo, where lo collects
  // the exact rounding error of every addition (TwoSum), so adding a term and later its negation
  // restores the previous value to ~1 ulp whatever the term's size.
  struct Affine {
    double A = 0, Alo = 0, C = 0, Clo = 0;
    static void two_sum(double& hi, double& lo, double v) {
      // v through memory: the compiler cannot fuse the product that made it into hi + v (-ffp-contract),
      // which would add the exact product while the error term below uses the rounded one.
      asm("" : "+m"(v));
      const double s = hi + v, bp = s - hi;
      lo += (hi - (s - bp)) + (v - bp);
      hi = s;
    }
    void add(double a, double c) {
      two_sum(A, Alo, a);
      two_sum(C, Clo, c);
    }
    double slope() const { return A + Alo; }
    double intercept() const { return C + Clo; }
  };

  // Applies neuron i's switch at its boundary to the affine piece: on (w1 > 0) or off (w1 < 0).
  void toggle(const Arr& w1, int i, Affine& f) const {
    if (w1(i) > 0) f.add(term_a_(i), term_c_(i));
    else f.add(-term_a_(i), -term_c_(i));
  }

  // Σ_{k<t} (before) or Σ_{k>=t} of a per-sample array `a`, from its running block sums `v` (lane l of
  // block b holds the sum of lane l over the blocks before b, or after b) and the samples of t's block
  // on the same side of t.
  double partial(const std::vector<double>& v, const std::vector<double>& a, Index t, bool before) const {
    const Index b = t / kBlock, l = t % kBlock;
    const size_t o = static_cast<size_t>(b * kBlock);
#ifdef __AVX512F__
    if constexpr (Path == SortedPassPath::avx512) {
      const unsigned low = (1u << l) - 1u;
      const __mmask8 side = static_cast<__mmask8>(before ? low : ~low);
      return _mm512_reduce_add_pd(_mm512_mask_add_pd(_mm512_loadu_pd(&v[o]), side, _mm512_loadu_pd(&v[o]),
                                                     _mm512_loadu_pd(&a[o])));
    }
#endif
    double s = 0.0;
    for (int q = 0; q < kBlock; ++q) s += v[o + q];
    for (Index q = before ? 0 : l; q < (before ? l : kBlock); ++q) s += a[o + static_cast<size_t>(q)];
    return s;
  }

  // The pass over the samples with the affine piece (A, C) of sample 0 and the first event e: writes
  // r, r·x and their running block sums from both ends, returns Σ r² and Σ r.
  Sums sample_pass_portable(const Arr& w1, Affine& aff, size_t e) {
    double vr[kBlock] = {}, vrx[kBlock] = {}, sse[kBlock] = {};
    double A = aff.slope(), C = aff.intercept();
    for (Index b = 0; b < blocks_; ++b) {
      const size_t o = static_cast<size_t>(b * kBlock);
      const double *x = &xs_[o], *xc = &xc_[o];
      double f[kBlock];
      for (int l = 0; l < kBlock; ++l) f[l] = std::fma(A, xc[l], C);
      for (; e < order_.size() && bound_[order_[e]] < std::min<Index>(n_, (b + 1) * kBlock); ++e) {
        const int i = order_[e];
        toggle(w1, i, aff);
        A = aff.slope();
        C = aff.intercept();
        for (Index l = bound_[i] - b * kBlock; l < kBlock; ++l) f[l] = std::fma(A, xc[l], C);
      }
      for (int l = 0; l < kBlock; ++l) {
        vr_[o + l] = vr[l];
        vrx_[o + l] = vrx[l];
        const double r = (f[l] - ys_[o + l]) * ms_[o + l];
        r_[o + l] = r;
        rx_[o + l] = r * x[l];
        vr[l] += r;
        vrx[l] += r * x[l];
        sse[l] += r * r;
      }
    }
    const size_t o = static_cast<size_t>(blocks_ * kBlock);
    Sums s;
    for (int l = 0; l < kBlock; ++l) {
      vr_[o + l] = vr[l];
      vrx_[o + l] = vrx[l];
      s.sse += sse[l];
      s.rsum += vr[l];
    }
    // Running sums from the end (for the neurons active on [t, n)).
    double wr[kBlock] = {}, wrx[kBlock] = {};
    for (Index b = blocks_ - 1; b >= 0; --b) {
      const size_t ob = static_cast<size_t>(b * kBlock);
      for (int l = 0; l < kBlock; ++l) {
        wr_[ob + l] = wr[l];
        wrx_[ob + l] = wrx[l];
        wr[l] += r_[ob + l];
        wrx[l] += rx_[ob + l];
      }
    }
    return s;
  }

  Sums sample_pass_avx512(const Arr& w1, Affine& aff, size_t e) {
#ifdef __AVX512F__
    if constexpr (Path == SortedPassPath::avx512) {
      __m512d vr = _mm512_setzero_pd(), vrx = vr, sse = vr;
      __m512d va = _mm512_set1_pd(aff.slope()), vc = _mm512_set1_pd(aff.intercept());
      for (Index b = 0; b < blocks_; ++b) {
        const size_t o = static_cast<size_t>(b * kBlock);
        const __m512d x = _mm512_loadu_pd(&xs_[o]), xc = _mm512_loadu_pd(&xc_[o]);
        __m512d f = _mm512_fmadd_pd(va, xc, vc);
        for (; e < order_.size() && bound_[order_[e]] < std::min<Index>(n_, (b + 1) * kBlock); ++e) {
          const int i = order_[e];
          toggle(w1, i, aff);
          va = _mm512_set1_pd(aff.slope());
          vc = _mm512_set1_pd(aff.intercept());
          const __mmask8 from = static_cast<__mmask8>(0xFFu << (bound_[i] - b * kBlock));  // lanes >= t
          f = _mm512_mask_mov_pd(f, from, _mm512_fmadd_pd(va, xc, vc));
        }
        _mm512_storeu_pd(&vr_[o], vr);
        _mm512_storeu_pd(&vrx_[o], vrx);
        const __m512d r = _mm512_mul_pd(_mm512_sub_pd(f, _mm512_loadu_pd(&ys_[o])), _mm512_loadu_pd(&ms_[o]));
        const __m512d rx = _mm512_mul_pd(r, x);
        _mm512_storeu_pd(&r_[o], r);
        _mm512_storeu_pd(&rx_[o], rx);
        vr = _mm512_add_pd(vr, r);
        vrx = _mm512_add_pd(vrx, rx);
        sse = _mm512_fmadd_pd(r, r, sse);
      }
      const size_t o = static_cast<size_t>(blocks_ * kBlock);
      _mm512_storeu_pd(&vr_[o], vr);
      _mm512_storeu_pd(&vrx_[o], vrx);
      // Running sums from the end (for the neurons active on [t, n)).
      __m512d wr = _mm512_setzero_pd(), wrx = wr;
      for (Index b = blocks_ - 1; b >= 0; --b) {
        const size_t ob = static_cast<size_t>(b * kBlock);
        _mm512_storeu_pd(&wr_[ob], wr);
        _mm512_storeu_pd(&wrx_[ob], wrx);
        wr = _mm512_add_pd(wr, _mm512_loadu_pd(&r_[ob]));
        wrx = _mm512_add_pd(wrx, _mm512_loadu_pd(&rx_[ob]));
      }
      return {_mm512_reduce_add_pd(sse), _mm512_reduce_add_pd(vr)};
    }
#endif
    return sample_pass_portable(w1, aff, e);
  }

  Index n_, blocks_;
  std::vector<double> xs_, ys_, ms_;  // [(blocks+1)·8] sorted x, its y, 1 for a real sample / 0 for padding
  std::vector<double> xc_;            // [(blocks+1)·8] x − x̄, the forward's abscissa
  double xbar_ = 0;                   // the middle of the training x
  std::vector<double> r_, rx_;        // [(blocks+1)·8] residuals r = f − y and r·x of the current step
  std::vector<double> vr_, vrx_;      // [(blocks+1)·8] running block sums of r and r·x from the start (see partial())
  std::vector<double> wr_, wrx_;      // [(blocks+1)·8] the same from the end
  Arr term_a_, term_c_;               // [H] w2_i·w1_i and w2_i·fma(w1_i, x̄, b1_i) of the current step
  std::vector<Index> bound_;          // [H] each neuron's boundary t_i, the next step's search start
  std::vector<int> order_;            // [H] neurons by t_i, the next step's sort start
};

}  // namespace gaugelab::toys
