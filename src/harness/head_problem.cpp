#include "harness/head_problem.hpp"

#include <cmath>
#include <stdexcept>
#include <utility>

#include "core/eigen_products.hpp"
#include "core/factor_gauge.hpp"
#include "core/gauge_linalg.hpp"

namespace gaugelab::harness {

namespace {

Mat<double> stack_bias(const Mat<double>& W /*[d, r]*/, const core::RowVec<double>& b /*[r]*/, bool biases) {
  if (!biases) return W;
  Mat<double> out(W.rows() + 1, W.cols());  // [d+1, r]
  out.topRows(W.rows()) = W;
  out.row(W.rows()) = b;
  return out;
}

/// Row-wise softmax of `logits` [T, T]; with `causal` only j <= i (the rest get probability 0).
Mat<double> attention_probs(const Mat<double>& logits, bool causal) {
  Mat<double> p = Mat<double>::Zero(logits.rows(), logits.cols());
  for (Index i = 0; i < logits.rows(); ++i) {
    const Index n = causal ? i + 1 : logits.cols();
    const double mx = logits.row(i).head(n).maxCoeff();
    double sum = 0;
    for (Index j = 0; j < n; ++j) sum += (p(i, j) = std::exp(logits(i, j) - mx));
    p.row(i).head(n) /= sum;
  }
  return p;
}

/// The head's output on X̃ [T, d(+1)]: softmax(X̃A_Q(X̃B_Q)ᵀ/√r)·X̃A_V·B_Vᵀ [T, d] (B_V = W_oᵀ).
Mat<double> attention_output(const Mat<double>& x, const HeadFactors& p, bool causal) {
  const double sr = std::sqrt(static_cast<double>(p[kQA].cols()));
  const Mat<double> probs = attention_probs((x * p[kQA]) * (x * p[kQB]).transpose() / sr, causal);  // [T, T]
  return probs * (x * p[kVA]) * p[kVB].transpose();
}

/// tr(X·Y) for square X, Y of one size.
double trace_product(const Mat<double>& X, const Mat<double>& Y) { return X.cwiseProduct(Y.transpose()).sum(); }

}  // namespace

HeadFactors factors_of(const core::AttentionHead<double>& h, bool biases) {
  core::require_head(h, "factors_of");
  HeadFactors p;
  p[kQA] = stack_bias(h.W_q, h.b_q, biases);
  p[kQB] = stack_bias(h.W_k, h.b_k, biases);
  p[kVA] = stack_bias(h.W_v, h.b_v, biases);
  p[kVB] = h.W_o.transpose();
  return p;
}

HeadFactors gauge_factors(const HeadFactors& x, const Mat<double>& S, const Mat<double>& T) {
  // Each sector is a factor pair under core's factor gauge (A, B) ↦ (A·S, B·S⁻ᵀ).
  auto qk = core::apply_gauge(core::FactorPair<double>{x[kQA], x[kQB]}, S);
  auto vo = core::apply_gauge(core::FactorPair<double>{x[kVA], x[kVB]}, T);
  HeadFactors p;
  p[kQA] = std::move(qk.A);
  p[kQB] = std::move(qk.B);
  p[kVA] = std::move(vo.A);
  p[kVB] = std::move(vo.B);
  return p;
}

LossKind parse_loss_kind(const std::string& s) {
  if (s == "data") return LossKind::data;
  if (s == "attention") return LossKind::attention;
  if (s == "matrix") return LossKind::matrix;
  throw std::invalid_argument("unknown loss '" + s + "' (expected data|attention|matrix)");
}

HeadProblem::HeadProblem(LossKind kind, const core::AttentionHead<double>& teacher, const Mat<double>& x, bool biases,
                         bool causal)
    : kind_(kind), causal_(causal) {
  core::require(x.cols() == teacher.d_model(), "HeadProblem", "batch X must be [T, d_model]");
  x_ = biases ? Mat<double>(x.rows(), x.cols() + 1) : x;
  if (biases) {
    x_.leftCols(x.cols()) = x;
    x_.col(x.cols()).setOnes();
  }
  star_ = factors_of(teacher, biases);
  const Index t = x_.rows();
  const double r = static_cast<double>(teacher.d_k());
  logit_star_ = (x_ * star_[kQA]) * (x_ * star_[kQB]).transpose() / std::sqrt(r);  // [T, T]
  out_star_ = kind_ == LossKind::attention ? attention_output(x_, star_, causal_)   // [T, d]
                                            : (x_ * star_[kVA]) * star_[kVB].transpose();
  logit_count_ = causal_ ? static_cast<double>(t * (t + 1) / 2) : static_cast<double>(t * t);
  for (int s = 0; s < 2; ++s)
    star_norm2_[static_cast<std::size_t>(s)] = trace_product(star_[2 * s].transpose() * star_[2 * s],
                                                             star_[2 * s + 1].transpose() * star_[2 * s + 1]);
}

double HeadProblem::loss(const HeadFactors& p) const {
  double l = 0;
  if (kind_ == LossKind::matrix) {
    for (int s = 0; s < 2; ++s) {
      const Mat<double>&A = p[2 * s], &B = p[2 * s + 1], &As = star_[2 * s], &Bs = star_[2 * s + 1];
      const double n2 = trace_product(A.transpose() * A, B.transpose() * B) -
                        2.0 * trace_product(A.transpose() * As, Bs.transpose() * B) +
                        star_norm2_[static_cast<std::size_t>(s)];
      l += 0.5 * n2 / static_cast<double>(A.rows() * B.rows());
    }
    return l;
  }
  if (kind_ == LossKind::attention) {
    const Mat<double> e = attention_output(x_, p, causal_) - out_star_;  // [T, d]
    return 0.5 * e.squaredNorm() / static_cast<double>(e.size());
  }
  const double r = static_cast<double>(p[kQA].cols());
  Mat<double> diff = (x_ * p[kQA]) * (x_ * p[kQB]).transpose() / std::sqrt(r) - logit_star_;  // [T, T]
  if (causal_) diff = diff.triangularView<Eigen::Lower>();
  l += 0.5 * diff.squaredNorm() / logit_count_;
  const Mat<double> e = (x_ * p[kVA]) * p[kVB].transpose() - out_star_;  // [T, d]
  l += 0.5 * e.squaredNorm() / static_cast<double>(e.size());
  return l;
}

HeadFactors HeadProblem::gradient(const HeadFactors& p, double* loss_out) const {
  HeadFactors g;
  double l = 0;
  if (kind_ == LossKind::matrix) {
    for (int s = 0; s < 2; ++s) {
      const Mat<double>&A = p[2 * s], &B = p[2 * s + 1], &As = star_[2 * s], &Bs = star_[2 * s + 1];
      const double numel = static_cast<double>(A.rows() * B.rows());
      const Mat<double> ha = A.transpose() * A, hb = B.transpose() * B;  // [r, r]
      const Mat<double> bsb = Bs.transpose() * B, asa = As.transpose() * A;  // B*ᵀB, A*ᵀA [r, r]
      g[2 * s] = (A * hb - As * bsb) / numel;
      g[2 * s + 1] = (B * ha - Bs * asa) / numel;
      l += 0.5 * (trace_product(ha, hb) - 2.0 * trace_product(asa.transpose(), bsb) +
                  star_norm2_[static_cast<std::size_t>(s)]) / numel;
    }
  } else if (kind_ == LossKind::attention) {
    // Back-propagation through out = P·V·B_Vᵀ, P = softmax(S), S = q·kᵀ/√r (masked entries: P = 0, no gradient).
    const double sr = std::sqrt(static_cast<double>(p[kQA].cols()));
    const Mat<double> q = x_ * p[kQA], k = x_ * p[kQB], v = x_ * p[kVA];  // [T, r]
    const Mat<double> P = attention_probs(q * k.transpose() / sr, causal_);  // [T, T]
    const Mat<double> h = P * v;                                             // [T, r]
    const Mat<double> e = h * p[kVB].transpose() - out_star_;                // [T, d]
    l = 0.5 * e.squaredNorm() / static_cast<double>(e.size());
    const Mat<double> d_out = e / static_cast<double>(e.size());             // ∂ℓ/∂out [T, d]
    g[kVB] = d_out.transpose() * h;                                          // [d, r]
    const Mat<double> d_h = d_out * p[kVB];                                  // [T, r]
    g[kVA] = x_.transpose() * (P.transpose() * d_h);
    const Mat<double> d_p = d_h * v.transpose();                             // [T, T]
    const Eigen::VectorXd row_dot = P.cwiseProduct(d_p).rowwise().sum();     // [T]
    const Mat<double> d_s = P.cwiseProduct(d_p.colwise() - row_dot) / sr;    // softmax backward, then 1/√r
    g[kQA] = x_.transpose() * (d_s * k);
    g[kQB] = x_.transpose() * (d_s.transpose() * q);
  } else {
    const double sr = std::sqrt(static_cast<double>(p[kQA].cols()));
    const Mat<double> q = x_ * p[kQA], k = x_ * p[kQB];  // [T, r]
    Mat<double> diff = q * k.transpose() / sr - logit_star_;  // [T, T]
    if (causal_) diff = diff.triangularView<Eigen::Lower>();
    l += 0.5 * diff.squaredNorm() / logit_count_;
    const Mat<double> R = diff / (logit_count_ * sr);  // ∂ℓ/∂(QKᵀ)
    g[kQA] = x_.transpose() * (R * k);
    g[kQB] = x_.transpose() * (R.transpose() * q);
    const Mat<double> v = x_ * p[kVA];                    // [T, r]
    const Mat<double> e = v * p[kVB].transpose() - out_star_;  // [T, d]
    l += 0.5 * e.squaredNorm() / static_cast<double>(e.size());
    const Mat<double> Ry = e / static_cast<double>(e.size());
    g[kVA] = x_.transpose() * (Ry * p[kVB]);
    g[kVB] = Ry.transpose() * v;
  }
  if (loss_out) *loss_out = l;
  return g;
}

}  // namespace gaugelab::harness
