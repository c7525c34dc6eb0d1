// The float64 references of the CUDA kernel check (tests/cuda/kernel_reference.hpp), checked on the CPU against
// facts that do not come from their own formulas: LayerNorm's moments, central finite differences of each
// forward's loss, the CE gradient's zero row sums, W_eff as a product of full matrices. The kernel check on a
// card trusts these references; this is their verdict before any card.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "tests/cuda/kernel_reference.hpp"

namespace {

using namespace gaugelab::kcheck;

// A small fixed-seed generator (splitmix64 → uniform → roughly normal), no std::random_device.
struct Gen {
  std::uint64_t s;
  double uniform() {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1p-53;
  }
  double normal() { return uniform() + uniform() + uniform() + uniform() - 2.0; }  // mean 0, variance 1/3
  std::vector<double> vec(std::size_t n, double mean, double spread) {
    std::vector<double> v(n);
    for (double& x : v) x = mean + spread * normal();
    return v;
  }
};

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

// ---- LayerNorm ----

struct Ln {
  std::int64_t rows = 3, cols = 7;
  double eps = 0.25;  // large, so that the eps term is far above rounding in the moment checks
  std::vector<double> s, gamma, beta, dy, ds;
  explicit Ln(std::uint64_t seed) {
    Gen g{seed};
    const auto n = static_cast<std::size_t>(rows * cols), c = static_cast<std::size_t>(cols);
    s = g.vec(n, 0.0, 2.0);
    for (std::int64_t i = 0; i < rows; ++i)  // each row its own offset
      for (std::int64_t k = 0; k < cols; ++k) s[static_cast<std::size_t>(i * cols + k)] += static_cast<double>(i) - 1.0;
    gamma = g.vec(c, 1.0, 0.5);
    beta = g.vec(c, 0.0, 0.5);
    dy = g.vec(n, 0.0, 1.0);
    ds = g.vec(n, 0.0, 1.0);
  }
  // Σ dy·y + Σ ds·s, the loss whose gradient the backward gives (ds, beta may be left out).
  double loss(const std::vector<double>& sv, const std::vector<double>& gv, const std::vector<double>& bv, bool with_ds,
              bool with_beta) const {
    std::vector<double> y(sv.size()), mean(static_cast<std::size_t>(rows)), rstd(static_cast<std::size_t>(rows));
    ref::layer_norm_forward(sv.data(), gv.data(), with_beta ? bv.data() : nullptr, rows, cols, eps, y.data(),
                            mean.data(), rstd.data());
    double l = 0;
    for (std::size_t i = 0; i < y.size(); ++i) l += dy[i] * y[i] + (with_ds ? ds[i] * sv[i] : 0.0);
    return l;
  }
};

TEST_CASE("LayerNorm reference: per row the normalised part has mean 0 and variance var/(var + eps)", "[cuda_reference]") {
  const Ln t(11);
  const auto n = static_cast<std::size_t>(t.rows * t.cols);
  std::vector<double> y(n), mean(static_cast<std::size_t>(t.rows)), rstd(static_cast<std::size_t>(t.rows));
  ref::layer_norm_forward(t.s.data(), t.gamma.data(), t.beta.data(), t.rows, t.cols, t.eps, y.data(), mean.data(),
                          rstd.data());
  for (std::int64_t i = 0; i < t.rows; ++i) {
    // The row's moments by the one-pass formula E[s²] − E[s]² (not the reference's two passes).
    double m1 = 0, m2 = 0;
    for (std::int64_t c = 0; c < t.cols; ++c) {
      const double v = t.s[static_cast<std::size_t>(i * t.cols + c)];
      m1 += v / static_cast<double>(t.cols);
      m2 += v * v / static_cast<double>(t.cols);
    }
    const double var = m2 - m1 * m1;
    double zmean = 0, zsq = 0;  // z = (y − β)/γ
    for (std::int64_t c = 0; c < t.cols; ++c) {
      const auto k = static_cast<std::size_t>(c);
      const double z = (y[static_cast<std::size_t>(i * t.cols + c)] - t.beta[k]) / t.gamma[k];
      zmean += z / static_cast<double>(t.cols);
      zsq += z * z / static_cast<double>(t.cols);
    }
    CHECK(std::abs(zmean) < 1e-12);
    CHECK(zsq == Approx(var / (var + t.eps)).epsilon(1e-12));
    CHECK(mean[static_cast<std::size_t>(i)] == Approx(m1).epsilon(1e-12));
    CHECK(rstd[static_cast<std::size_t>(i)] * rstd[static_cast<std::size_t>(i)] * (var + t.eps) == Approx(1.0).epsilon(1e-12));
  }
}

TEST_CASE("LayerNorm reference: with γ = 1 each row's output has the mean of β", "[cuda_reference]") {
  const Ln t(12);
  const std::vector<double> ones(static_cast<std::size_t>(t.cols), 1.0);
  const auto n = static_cast<std::size_t>(t.rows * t.cols);
  std::vector<double> y(n), mean(static_cast<std::size_t>(t.rows)), rstd(static_cast<std::size_t>(t.rows));
  ref::layer_norm_forward(t.s.data(), ones.data(), t.beta.data(), t.rows, t.cols, 1e-5, y.data(), mean.data(),
                          rstd.data());
  double beta_mean = 0;
  for (double b : t.beta) beta_mean += b / static_cast<double>(t.cols);
  for (std::int64_t i = 0; i < t.rows; ++i) {
    double ym = 0;
    for (std::int64_t c = 0; c < t.cols; ++c) ym += y[static_cast<std::size_t>(i * t.cols + c)] / static_cast<double>(t.cols);
    CHECK(ym == Approx(beta_mean).margin(1e-12));
  }
}

TEST_CASE("LayerNorm reference: the backward equals central differences of sum dy·y + sum ds·s", "[cuda_reference]") {
  for (const bool with_ds : {true, false}) {
    for (const bool with_beta : {true, false}) {
      INFO("ds " << with_ds << ", beta " << with_beta);
      const Ln t(13);
      const auto n = static_cast<std::size_t>(t.rows * t.cols), c = static_cast<std::size_t>(t.cols);
      std::vector<double> y(n), mean(static_cast<std::size_t>(t.rows)), rstd(static_cast<std::size_t>(t.rows));
      ref::layer_norm_forward(t.s.data(), t.gamma.data(), with_beta ? t.beta.data() : nullptr, t.rows, t.cols, t.eps,
                              y.data(), mean.data(), rstd.data());
      std::vector<double> dx(n), dgamma(c, 0.0), dbeta(c, 0.0);
      ref::layer_norm_backward(t.s.data(), mean.data(), rstd.data(), t.dy.data(), with_ds ? t.ds.data() : nullptr,
                               t.gamma.data(), t.rows, t.cols, dx.data(), dgamma.data(), with_beta ? dbeta.data() : nullptr);
      constexpr double h = 1e-5;  // central differences: error ~h²·L''' ≈ 1e-10, rounding ~1e-16·|L|/h ≈ 1e-10
      // d/ds
      std::vector<double> fd(n);
      for (std::size_t k = 0; k < n; ++k) {
        std::vector<double> sp = t.s, sm = t.s;
        sp[k] += h, sm[k] -= h;
        fd[k] = (t.loss(sp, t.gamma, t.beta, with_ds, with_beta) - t.loss(sm, t.gamma, t.beta, with_ds, with_beta)) / (2 * h);
      }
      for (std::size_t k = 0; k < n; ++k) CHECK(std::abs(dx[k] - fd[k]) <= 1e-7 * max_abs(fd));
      // d/dγ and d/dβ
      std::vector<double> fg(c), fb(c);
      for (std::size_t k = 0; k < c; ++k) {
        std::vector<double> gp = t.gamma, gm = t.gamma, bp = t.beta, bm = t.beta;
        gp[k] += h, gm[k] -= h, bp[k] += h, bm[k] -= h;
        fg[k] = (t.loss(t.s, gp, t.beta, with_ds, with_beta) - t.loss(t.s, gm, t.beta, with_ds, with_beta)) / (2 * h);
        fb[k] = (t.loss(t.s, t.gamma, bp, with_ds, true) - t.loss(t.s, t.gamma, bm, with_ds, true)) / (2 * h);
      }
      for (std::size_t k = 0; k < c; ++k) {
        CHECK(std::abs(dgamma[k] - fg[k]) <= 1e-7 * max_abs(fg));
        if (with_beta) CHECK(std::abs(dbeta[k] - fb[k]) <= 1e-7 * max_abs(fb));
      }
    }
  }
}

// ---- the LM head's cross-entropy rows ----

TEST_CASE("CE reference: gradient rows sum to 0, equal central differences of scale·loss, and are 0 in the padding",
          "[cuda_reference]") {
  Gen g{21};
  constexpr std::int64_t vocab = 11, ld = 16;
  const std::int64_t targets[] = {3, 0, vocab - 1, -1};
  const double scales[] = {0.25, 0.25, 0.25, 0.0};
  for (int row = 0; row < 4; ++row) {
    INFO("row " << row);
    std::vector<double> x = g.vec(ld, 0.0, 3.0);
    for (std::int64_t j = vocab; j < ld; ++j) x[static_cast<std::size_t>(j)] = std::numeric_limits<double>::quiet_NaN();
    const std::int64_t t = targets[row];
    const double sc = scales[row];
    std::vector<double> grad(ld);
    ref::ce_row_grad(x.data(), ref::ce_row_lse(x.data(), vocab), vocab, ld, t, sc, grad.data());
    double sum = 0;
    for (double v : grad) sum += v;
    CHECK(std::abs(sum) <= 1e-15);
    for (std::int64_t j = vocab; j < ld; ++j) CHECK(grad[static_cast<std::size_t>(j)] == 0.0);
    constexpr double h = 1e-5;
    auto scaled_loss = [&](const std::vector<double>& xv) { return sc * ref::ce_row_loss(xv.data(), ref::ce_row_lse(xv.data(), vocab), t); };
    for (std::int64_t j = 0; j < vocab; ++j) {
      std::vector<double> xp = x, xm = x;
      xp[static_cast<std::size_t>(j)] += h, xm[static_cast<std::size_t>(j)] -= h;
      const double fd = (scaled_loss(xp) - scaled_loss(xm)) / (2 * h);
      CHECK(std::abs(grad[static_cast<std::size_t>(j)] - fd) <= 1e-9);
    }
  }
}

TEST_CASE("CE reference: equal logits give the loss log(vocab), and an ignored target (-1) reads column 0", "[cuda_reference]") {
  constexpr std::int64_t vocab = 50257;
  const std::vector<double> flat(vocab, 3.5);
  const double lse = ref::ce_row_lse(flat.data(), vocab);
  CHECK(ref::ce_row_loss(flat.data(), lse, 7) == Approx(std::log(static_cast<double>(vocab))).epsilon(1e-14));
  std::vector<double> x = {2.0, -1.0, 0.5};
  const double l3 = ref::ce_row_lse(x.data(), 3);
  CHECK(ref::ce_row_loss(x.data(), l3, -1) == ref::ce_row_loss(x.data(), l3, 0));
  CHECK(l3 == Approx(std::log(std::exp(2.0) + std::exp(-1.0) + std::exp(0.5))).epsilon(1e-15));
}

// ---- W_eff ----

struct Lrm {
  std::int64_t out = 6, in = 4, groups;
  std::vector<double> w, r, c, g;
  Lrm(std::int64_t groups_, std::uint64_t seed) : groups(groups_) {
    Gen gen{seed};
    const auto n = static_cast<std::size_t>(out * in);
    w = gen.vec(n, 0.0, 1.0);
    r = gen.vec(static_cast<std::size_t>(out), 1.0, 0.5);
    c = gen.vec(static_cast<std::size_t>(groups * in), 1.0, 0.5);
    g = gen.vec(n, 0.0, 1.0);
  }
  std::vector<double> effective(const std::vector<double>& wv, const std::vector<double>& rv, const std::vector<double>& cv,
                                bool has_r, bool has_c) const {
    std::vector<double> e(static_cast<std::size_t>(out * in));
    ref::lrm_weight_forward(wv.data(), has_r ? rv.data() : nullptr, has_c ? cv.data() : nullptr, out, in, groups, 0, out,
                            e.data());
    return e;
  }
  double loss(const std::vector<double>& wv, const std::vector<double>& rv, const std::vector<double>& cv, bool has_r,
              bool has_c) const {  // Σ G·W_eff
    const std::vector<double> e = effective(wv, rv, cv, has_r, has_c);
    double l = 0;
    for (std::size_t k = 0; k < e.size(); ++k) l += g[k] * e[k];
    return l;
  }
};

TEST_CASE("W_eff reference: each group's rows are diag(r)·W·diag(c_g) as full matrix products", "[cuda_reference]") {
  for (const std::int64_t groups : {1, 3}) {
    const Lrm t(groups, 31);
    const std::vector<double> e = t.effective(t.w, t.r, t.c, true, true);
    const std::int64_t rpg = t.out / groups;
    for (std::int64_t grp = 0; grp < groups; ++grp) {
      // D_r [rpg, rpg] · W_g [rpg, in] · D_c [in, in], every product summed in full.
      std::vector<double> dr(static_cast<std::size_t>(rpg * rpg), 0.0), dc(static_cast<std::size_t>(t.in * t.in), 0.0);
      for (std::int64_t i = 0; i < rpg; ++i) dr[static_cast<std::size_t>(i * rpg + i)] = t.r[static_cast<std::size_t>(grp * rpg + i)];
      for (std::int64_t j = 0; j < t.in; ++j) dc[static_cast<std::size_t>(j * t.in + j)] = t.c[static_cast<std::size_t>(grp * t.in + j)];
      for (std::int64_t i = 0; i < rpg; ++i)
        for (std::int64_t j = 0; j < t.in; ++j) {
          double v = 0;
          for (std::int64_t a = 0; a < rpg; ++a)
            for (std::int64_t b = 0; b < t.in; ++b)
              v += dr[static_cast<std::size_t>(i * rpg + a)] * t.w[static_cast<std::size_t>((grp * rpg + a) * t.in + b)] *
                   dc[static_cast<std::size_t>(b * t.in + j)];
          CHECK(e[static_cast<std::size_t>((grp * rpg + i) * t.in + j)] == Approx(v).epsilon(1e-14));
        }
    }
  }
  const Lrm t(3, 32);  // without multipliers W_eff is W̄
  CHECK(t.effective(t.w, t.r, t.c, false, false) == t.w);
}

TEST_CASE("W_eff reference: the backward equals central differences of sum G·W_eff in W, r and c", "[cuda_reference]") {
  for (const std::int64_t groups : {1, 3}) {
    for (const bool has_r : {true, false}) {
      for (const bool has_c : {true, false}) {
        INFO("groups " << groups << ", r " << has_r << ", c " << has_c);
        const Lrm t(groups, 33);
        const auto n = static_cast<std::size_t>(t.out * t.in);
        std::vector<double> dw(n), dr(static_cast<std::size_t>(t.out), 0.0), dc(t.c.size(), 0.0);
        ref::lrm_weight_backward(t.g.data(), t.w.data(), has_r ? t.r.data() : nullptr, has_c ? t.c.data() : nullptr,
                                 t.out, t.in, groups, 0, t.out, dw.data(), dr.data(), dc.data());
        constexpr double h = 1e-4;  // the loss is linear in each variable: central differences exact to rounding
        auto fd = [&](const std::vector<double>& base, std::size_t k, int which) {
          std::vector<double> p = base, m = base;
          p[k] += h, m[k] -= h;
          auto l = [&](const std::vector<double>& v) {
            return t.loss(which == 0 ? v : t.w, which == 1 ? v : t.r, which == 2 ? v : t.c, has_r, has_c);
          };
          return (l(p) - l(m)) / (2 * h);
        };
        for (std::size_t k = 0; k < n; ++k) CHECK(dw[k] == Approx(fd(t.w, k, 0)).margin(1e-9));
        if (has_r)
          for (std::size_t k = 0; k < t.r.size(); ++k) CHECK(dr[k] == Approx(fd(t.r, k, 1)).margin(1e-9));
        if (has_c)
          for (std::size_t k = 0; k < t.c.size(); ++k) CHECK(dc[k] == Approx(fd(t.c, k, 2)).margin(1e-9));
      }
    }
  }
}

// ---- bf16 ----

TEST_CASE("bf16 conversions: round to nearest even, exact widening, NaN and infinity kept", "[cuda_reference]") {
  CHECK(ref::bf16_to_float(ref::float_to_bf16(1.0f + 0x1p-8f)) == 1.0f);                   // a tie: to even (down)
  CHECK(ref::bf16_to_float(ref::float_to_bf16(1.0f + 3 * 0x1p-8f)) == 1.0f + 0x1p-6f);     // a tie: to even (up)
  CHECK(ref::bf16_to_float(ref::float_to_bf16(1.0f + 0x1p-8f + 0x1p-20f)) == 1.0f + 0x1p-7f);  // above the tie
  CHECK(ref::bf16_to_float(ref::float_to_bf16(-2.5f)) == -2.5f);                           // exact values stay
  CHECK(std::isnan(ref::bf16_to_float(ref::float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  CHECK(ref::bf16_to_float(ref::float_to_bf16(std::numeric_limits<float>::infinity())) ==
        std::numeric_limits<float>::infinity());
  CHECK(ref::float_to_bf16(3.0e38f) == 0x7f62);                                      // 0x7f61b1e6: rounds up
  CHECK(ref::float_to_bf16(std::numeric_limits<float>::max()) == 0x7f80);  // past the last bf16's half-ulp: infinity
  // Within u16 = 2^-8 of itself for any normal value.
  Gen g{41};
  for (int k = 0; k < 1000; ++k) {
    const float v = static_cast<float>(std::ldexp(g.uniform() + 0.5, static_cast<int>(g.uniform() * 40) - 20));
    CHECK(std::abs(ref::bf16_to_float(ref::float_to_bf16(v)) - v) <= 0x1p-8 * v);
  }
}

}  // namespace
