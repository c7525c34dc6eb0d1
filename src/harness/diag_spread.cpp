#include "harness/diag_spread.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/eigen_products.hpp"

namespace gaugelab::harness {

namespace {

/// XᵀX [r, r] by a symmetric rank update (half the work of a general product), mirrored to full.
Mat<double> self_gram(const Mat<double>& X) {
  Mat<double> g = Mat<double>::Zero(X.cols(), X.cols());
  g.selfadjointView<Eigen::Lower>().rankUpdate(X.transpose());
  return g.selfadjointView<Eigen::Lower>();
}

}  // namespace

Mat<double> combo_gram(const FactorGrams& f, const Combo& c) {
  const Index r = f.a_u(0, 0).rows(), k = static_cast<Index>(c.size());
  const bool has_d = f.d[0].size() != 0;
  Mat<double> out = Mat<double>::Zero(k * r, k * r);
  for (Index a = 0; a < k; ++a)
    for (Index b = a; b < k; ++b) {
      auto blk = out.block(a * r, b * r, r, r);
      const auto& ca = c[static_cast<std::size_t>(a)];
      const auto& cb = c[static_cast<std::size_t>(b)];
      for (int p = 0; p < 3; ++p)
        for (int q = 0; q < 3; ++q) {
          const double w = ca[static_cast<std::size_t>(p)] * cb[static_cast<std::size_t>(q)];
          if (w == 0.0) continue;
          if (p < 2 && q < 2) blk += w * f.a_u(p, q);
          else if (!has_d) continue;                                     // D = 0
          else if (p == 2) blk += w * f.d[static_cast<std::size_t>(q)];  // DᵀX_q
          else blk += w * f.d[static_cast<std::size_t>(p)].transpose();  // X_pᵀD = (DᵀX_p)ᵀ
        }
      if (b != a) out.block(b * r, a * r, r, r) = blk.transpose();
    }
  return out;
}

double combo_norm2(const FactorGrams& a, const Combo& ca, const FactorGrams& b, const Combo& cb) {
  return std::max(0.0, combo_gram(a, ca).cwiseProduct(combo_gram(b, cb)).sum());
}

MotionGrams reference_grams(const HeadFactors& base, const HeadFactors& base_gram, const HeadFactors& inc) {
  MotionGrams m;
  for (int i = 0; i < kFactors; ++i) {
    auto& g = m.f[static_cast<std::size_t>(i)].au;
    g[0][0] = base_gram[i];
    g[0][1] = base[i].transpose() * inc[i];
    g[1][0] = g[0][1].transpose();
    g[1][1] = self_gram(inc[i]);
    auto& cat = m.au_cat[static_cast<std::size_t>(i)];
    cat.resize(base[i].rows(), 2 * base[i].cols());  // [d, 2r]
    cat << base[i], inc[i];
  }
  return m;
}

MotionGrams difference_grams(const MotionGrams& ref, const HeadFactors& base, const HeadFactors& inc,
                             const HeadFactors& d) {
  MotionGrams m;
  for (int i = 0; i < kFactors; ++i) {
    auto& f = m.f[static_cast<std::size_t>(i)];
    f.ref = &ref.f[static_cast<std::size_t>(i)];
    // One wide product Dᵀ·[A, U] ([r, 2r], with the reference's stored [A, U]) and a symmetric rank
    // update for DᵀD: on this machine a [d, r]ᵀ[d, r] product ran at less than half the speed of a
    // [d, r]ᵀ[d, 2r] one.
    const Index r = base[i].cols();
    const std::size_t ii = static_cast<std::size_t>(i);
    Mat<double> g(r, 2 * r);  // [r, 2r]
    if (ref.au_cat[ii].size() != 0) {
      g.noalias() = d[i].transpose() * ref.au_cat[ii];
    } else {
      g.leftCols(r).noalias() = d[i].transpose() * base[i];
      g.rightCols(r).noalias() = d[i].transpose() * inc[i];
    }
    f.d[0] = g.leftCols(r);
    f.d[1] = g.rightCols(r);
    f.d[2] = self_gram(d[i]);
  }
  return m;
}

double first_order_norm2(const MotionGrams& m) {
  double s = 0;
  for (int k = 0; k < 2; ++k)  // [U_A, A]·[B, U_B]ᵀ
    s += combo_norm2(m.f[static_cast<std::size_t>(2 * k)], {{0, 1, 0}, {1, 0, 0}},
                     m.f[static_cast<std::size_t>(2 * k + 1)], {{1, 0, 0}, {0, 1, 0}});
  return s;
}

double first_order_difference_norm2(const MotionGrams& m) {
  double s = 0;
  for (int k = 0; k < 2; ++k)  // [D_A, A]·[B, D_B]ᵀ
    s += combo_norm2(m.f[static_cast<std::size_t>(2 * k)], {{0, 0, 1}, {1, 0, 0}},
                     m.f[static_cast<std::size_t>(2 * k + 1)], {{1, 0, 0}, {0, 0, 1}});
  return s;
}

double exact_motion_norm2(const MotionGrams& m, const StepCoefs& c) {
  double s = 0;
  for (int k = 0; k < 2; ++k) {
    const std::size_t a = static_cast<std::size_t>(2 * k), b = a + 1;
    const double aa = c.alpha[a], ba = c.beta[a], ab = c.alpha[b], bb = c.beta[b];
    // A'B'ᵀ − ABᵀ = [A, U_A]·[(α_Aα_B − 1)B + α_Aβ_B U_B, β_Aα_B B + β_Aβ_B U_B]ᵀ
    s += combo_norm2(m.f[a], {{1, 0, 0}, {0, 1, 0}}, m.f[b], {{aa * ab - 1.0, aa * bb, 0}, {ba * ab, ba * bb, 0}});
  }
  return s;
}

double exact_difference_norm2(const MotionGrams& m, const StepCoefs& cg, const StepCoefs& cr) {
  double s = 0;
  for (int k = 0; k < 2; ++k) {
    const std::size_t a = static_cast<std::size_t>(2 * k), b = a + 1;
    // (A'_g − A'_r)·B'_gᵀ + A'_r·(B'_g − B'_r)ᵀ with A'_g − A'_r = Δα·A + Δβ·U + β_g·D
    const std::array<double, 3> e_a{cg.alpha[a] - cr.alpha[a], cg.beta[a] - cr.beta[a], cg.beta[a]};
    const std::array<double, 3> e_b{cg.alpha[b] - cr.alpha[b], cg.beta[b] - cr.beta[b], cg.beta[b]};
    const std::array<double, 3> a_r{cr.alpha[a], cr.beta[a], 0};
    const std::array<double, 3> b_g{cg.alpha[b], cg.beta[b], cg.beta[b]};
    s += combo_norm2(m.f[a], {e_a, a_r}, m.f[b], {b_g, e_b});
  }
  return s;
}

HeadFactors stepped(const HeadFactors& base, const HeadFactors& inc, const StepCoefs& c) {
  HeadFactors out;
  for (int i = 0; i < kFactors; ++i)
    out[i] = c.alpha[static_cast<std::size_t>(i)] * base[i] + c.beta[static_cast<std::size_t>(i)] * inc[i];
  return out;
}

double squared_norm(const HeadFactors& x) {
  double s = 0;
  for (int i = 0; i < kFactors; ++i) s += x[i].squaredNorm();
  return s;
}

double squared_distance(const HeadFactors& x, const HeadFactors& y) {
  double s = 0;
  for (int i = 0; i < kFactors; ++i) s += (x[i] - y[i]).squaredNorm();
  return s;
}

Spread summarise(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }), v.end());
  Spread s;
  s.count = static_cast<std::int64_t>(v.size());
  if (v.empty()) {
    s.median = s.max = std::numeric_limits<double>::quiet_NaN();
    return s;
  }
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  s.max = v.back();
  return s;
}

}  // namespace gaugelab::harness
