#include "harness/diag_cell.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>

#include "core/eigen_products.hpp"
#include "core/gauge_sampling.hpp"
#include "harness/head_source.hpp"

namespace gaugelab::harness {

namespace {

using core::Vec;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

core::AttentionHead<double> teacher_for(const core::AttentionHead<double>& head, bool biases, std::uint64_t seed) {
  RandomHeadOptions t;
  t.d_model = head.d_model();
  t.d_head = head.d_k();
  t.biases = biases;
  t.seed = core::splitmix_at(seed, 2);
  return random_head(t);
}

Mat<double> batch(std::uint64_t seed, Index tokens, Index d) {
  core::Rng rng(seed);
  return core::randn<double>(rng, tokens, d);  // [T, d], LayerNorm-like N(0, 1) entries
}

/// Batch k (0: the problem's, 1 + t: warm-up t): real rows in blocks of T when given, else N(0, 1) draws.
Mat<double> batch_k(const HeadData& data, std::uint64_t seed, std::int64_t k, Index tokens, Index d) {
  if (data.rows.rows() == 0) return batch(k == 0 ? core::splitmix_at(seed, 3) : core::splitmix_at(seed, 100 + static_cast<std::uint64_t>(k - 1)), tokens, d);
  const Index n = data.rows.rows();
  core::require(n >= tokens && data.rows.cols() == d, "HeadDiagnostic", "real inputs must be [>= T, d]");
  const Index blocks = n / tokens;
  return data.rows.middleRows((k % blocks) * tokens, tokens);
}

core::AttentionHead<double> teacher_of(const core::AttentionHead<double>& head, const DiagOptions& o, std::uint64_t seed,
                                       const HeadData& data) {
  if (!data.teacher) return teacher_for(head, o.biases, seed);
  core::AttentionHead<double> t = *data.teacher;
  core::require(t.d_model() == head.d_model() && t.d_k() == head.d_k() && t.d_v() == head.d_v(), "HeadDiagnostic",
                "the teacher head's shapes differ from the head's");
  if (!o.biases) t.b_q.setZero(), t.b_k.setZero(), t.b_v.setZero();
  return t;
}

}  // namespace

HeadFactors opposite_gram(const HeadFactors& at, const HeadFactors& u, const core::QuotientOptions& q) {
  HeadFactors out;
  for (int k = 0; k < 2; ++k) {
    auto p = core::opposite_gram_correction(at[2 * k], at[2 * k + 1], u[2 * k], u[2 * k + 1], q);
    out[2 * k] = std::move(p.U_A);
    out[2 * k + 1] = std::move(p.U_B);
  }
  return out;
}

namespace {

HeadFactors lerp(const HeadFactors& a, double wa, const HeadFactors& b, double wb) {
  HeadFactors out;
  for (int i = 0; i < kFactors; ++i) out[i] = wa * a[i] + wb * b[i];
  return out;
}

bool is_diagonal(const Mat<double>& m) {
  for (Index j = 0; j < m.cols(); ++j)
    for (Index i = 0; i < m.rows(); ++i)
      if (i != j && m(i, j) != 0.0) return false;
  return true;
}

bool is_diagonal_pair(const GaugePair& g) { return is_diagonal(g.S) && is_diagonal(g.T); }

}  // namespace

HeadFactors gauge_image(const HeadFactors& x, const GaugePair& g) {
  if (!is_diagonal_pair(g)) return gauge_factors(x, g.S, g.T);
  const Vec<double> s = g.S.diagonal(), t = g.T.diagonal();  // [r]
  HeadFactors p;
  p[kQA] = x[kQA] * s.asDiagonal();
  p[kQB] = x[kQB] * s.cwiseInverse().asDiagonal();
  p[kVA] = x[kVA] * t.asDiagonal();
  p[kVB] = x[kVB] * t.cwiseInverse().asDiagonal();
  return p;
}

namespace {

/// U pulled back from the representative (A S, B S⁻ᵀ; A T, B T⁻ᵀ) to the reference coordinates.
/// S⁻¹ and T⁻¹ [r, r] come from one LU per gauge: a [d, r]·[r, r] product ran 3× faster than the
/// triangular solves on this machine, and either adds a rounding error of order u·κ(S).
HeadFactors pull(const HeadFactors& u, const GaugePair& g, const Mat<double>& s_inv, const Mat<double>& t_inv) {
  HeadFactors v;
  if (is_diagonal_pair(g)) {  // the diagonal family: column scalings, O(d·r) instead of O(d·r²)
    v[kQA] = u[kQA] * s_inv.diagonal().asDiagonal();
    v[kQB] = u[kQB] * g.S.diagonal().asDiagonal();
    v[kVA] = u[kVA] * t_inv.diagonal().asDiagonal();
    v[kVB] = u[kVB] * g.T.diagonal().asDiagonal();
    return v;
  }
  v[kQA].noalias() = u[kQA] * s_inv;  // U·S⁻¹
  v[kQB].noalias() = u[kQB] * g.S.transpose();
  v[kVA].noalias() = u[kVA] * t_inv;  // U·T⁻¹
  v[kVB].noalias() = u[kVB] * g.T.transpose();
  return v;
}

double rel(const Mat<double>& a, const Mat<double>& ref) { return (a - ref).norm() / ref.norm(); }

}  // namespace

Mat<double> draw_gauge(const std::string& family, double kappa, Index r, core::Rng& rng) {
  if (family == "orthogonal") return core::random_orthogonal<double>(rng, r);
  if (family == "general") return core::random_gl<double>(rng, r, kappa);
  if (family == "diagonal") return core::random_diagonal_kappa<double>(rng, r, kappa);
  throw std::invalid_argument("unknown gauge family '" + family + "'");
}

struct HeadDiagnostic::Representative {
  bool identity = false;  // the reference itself: pull-backs are the identity
  GaugePair g;
  Mat<double> s_inv, t_inv;  // S⁻¹, T⁻¹ [r, r] (pull-backs U·S⁻¹)
  HeadFactors F, grad;
  const std::vector<GaugePair>* smooth = nullptr;
  std::vector<Mat<double>> s_inv_i, t_inv_i;
  std::vector<HeadFactors> F_s, grad_s;  // the smoothing images (F S_i, F T_i) and their gradients
};

struct HeadDiagnostic::Wrapped {
  HeadFactors U;  // in the representative's coordinates
  HeadFactors V;  // pulled back to the reference coordinates
};

struct HeadDiagnostic::RefStep {
  bool ok = false;
  HeadFactors U;  // unit increment (reference coordinates)
  double lr = 0, first2 = 0, exact2 = 0, loss_after = 0, inc2 = 0;
  StepCoefs coefs;
  MotionGrams grams;  // A and U blocks
};

HeadDiagnostic::HeadDiagnostic(const DiagOptions& o, const core::AttentionHead<double>& head, std::uint64_t seed,
                               const HeadData& data)
    : o_(o),
      head_(head),
      x_(batch_k(data, seed, 0, static_cast<Index>(o.tokens), head.d_model())),
      base_(factors_of(head, o.biases)),
      base_gram_(),
      problem_(parse_loss_kind(o.loss), teacher_of(head, o, seed, data), x_, o.biases, o.causal) {
  if (!o_.biases) head_.b_q.setZero(), head_.b_k.setZero(), head_.b_v.setZero();
  if (head_.d_k() != head_.d_v()) throw std::invalid_argument("HeadDiagnostic: d_k must equal d_v");
  const auto teacher = teacher_of(head, o, seed, data);
  const LossKind kind = parse_loss_kind(o.loss);
  std::vector<HeadFactors> grads;
  for (std::int64_t t = 0; t < o.warmup; ++t) {
    const HeadProblem p(kind, teacher, batch_k(data, seed, 1 + t, x_.rows(), x_.cols()), o.biases, o.causal);
    grads.push_back(p.gradient(base_));
  }
  variants_ = rule_variants(o);
  for (const auto& v : variants_) warm_.push_back(warm_states(v, base_, grads));
  full_ = {core::QuotientMode::full, o.damping, core::parse_gram_solve(o.solve)};
  diag_ = {core::QuotientMode::diagonal, o.damping, core::GramSolve::cholesky};
  loss_before_ = problem_.loss(base_);
  for (int i = 0; i < kFactors; ++i) base_gram_[i] = base_[i].transpose() * base_[i];
  for (int k = 0; k < 2; ++k)  // ‖ABᵀ‖² = tr(AᵀA·BᵀB)
    m_norm2_ += base_gram_[2 * k].cwiseProduct(base_gram_[2 * k + 1]).sum();
  logits_ref_ = core::head_logits(head_, x_);
  output_ref_ = core::head_output(head_, x_, core::AttentionOptions{o.causal});
}

double HeadDiagnostic::forward_error(const GaugePair& g) const {
  const auto h = core::apply_head_gauge(head_, g.S, g.T);
  return std::max(rel(core::head_logits(h, x_), logits_ref_),
                  rel(core::head_output(h, x_, core::AttentionOptions{o_.causal}), output_ref_));
}

HeadDiagnostic::Representative HeadDiagnostic::make_representative(const GaugePair& g,
                                                                   const std::vector<GaugePair>& smoothing) const {
  Representative r;
  r.identity = g.S.isIdentity(0.0) && g.T.isIdentity(0.0);
  r.g = g;
  r.s_inv = g.S.partialPivLu().inverse();
  r.t_inv = g.T.partialPivLu().inverse();
  r.F = gauge_image(base_, g);
  r.grad = problem_.gradient(r.F);
  r.smooth = &smoothing;
  for (const auto& s : smoothing) {
    r.s_inv_i.push_back(s.S.partialPivLu().inverse());
    r.t_inv_i.push_back(s.T.partialPivLu().inverse());
    r.F_s.push_back(gauge_image(r.F, s));
    r.grad_s.push_back(problem_.gradient(r.F_s.back()));
  }
  return r;
}

HeadFactors HeadDiagnostic::pull_back(const HeadFactors& u, const Representative& rep) const {
  return rep.identity ? u : pull(u, rep.g, rep.s_inv, rep.t_inv);
}

std::vector<std::shared_ptr<const HeadDiagnostic::Wrapped>> HeadDiagnostic::wrapped_increments(
    std::size_t v, const Representative& rep, std::vector<bool>& ok) const {
  const RuleVariant& var = variants_[v];
  HeadStates st = warm_[v];
  if (var.warm && !rep.identity) transport_states(st, rep.g.S, rep.g.T, var.mode);
  const bool smoothing = std::find(o_.wrappers.begin(), o_.wrappers.end(), "smooth") != o_.wrappers.end();
  const HeadStates st0 = smoothing && var.warm ? st : HeadStates{};
  const std::size_t W = o_.wrappers.size();
  std::vector<std::shared_ptr<const Wrapped>> out(W);
  // A rule that fails at this representative (e.g. scaledgd's (BᵀB)⁻¹ of a numerically singular Gram) fails
  // every wrapper of this variant only, never the other variants measured at the same gauge.
  HeadFactors raw;
  try {
    raw = propose_head(var, rep.F, rep.grad, st);
  } catch (const std::exception&) {
    ok.assign(W, false);
    return out;
  }
  ok.assign(W, true);
  // Each form is computed at most once and shared (never copied) by the wrappers that use it.
  std::shared_ptr<Wrapped> rw, fw, dw;
  bool raw_tried = false, full_tried = false, diag_tried = false;
  const auto make = [&](bool& tried, std::shared_ptr<Wrapped>& w, const core::QuotientOptions* q) -> bool {
    if (!tried) {
      tried = true;
      try {
        auto x = std::make_shared<Wrapped>();
        x->U = q ? opposite_gram(rep.F, raw, *q) : raw;
        x->V = pull_back(x->U, rep);
        w = std::move(x);
      } catch (const std::exception&) {  // e.g. Cholesky of a numerically singular Gram
        w.reset();
      }
    }
    return w != nullptr;
  };
  for (std::size_t w = 0; w < W; ++w) {
    const std::string& name = o_.wrappers[w];
    if (name == "none") {
      if ((ok[w] = make(raw_tried, rw, nullptr))) out[w] = rw;
    } else if (name == "full") {
      if ((ok[w] = make(full_tried, fw, &full_))) out[w] = fw;
    } else if (name == "diagonal") {
      if ((ok[w] = make(diag_tried, dw, &diag_))) out[w] = dw;
    } else if (name == "periodic") {  // linear in the increments: the pull-backs combine the same way
      const double k = static_cast<double>(o_.period);
      const bool between_diag = o_.between == "diagonal";
      ok[w] = make(full_tried, fw, &full_) && (between_diag ? make(diag_tried, dw, &diag_) : make(raw_tried, rw, nullptr));
      if (ok[w]) {
        const Wrapped& bw = between_diag ? *dw : *rw;
        auto x = std::make_shared<Wrapped>();
        x->U = lerp(fw->U, 1.0 / k, bw.U, 1.0 - 1.0 / k);
        x->V = lerp(fw->V, 1.0 / k, bw.V, 1.0 - 1.0 / k);
        out[w] = std::move(x);
      }
    } else if (name == "smooth") {
      HeadFactors acc;
      for (int i = 0; i < kFactors; ++i) acc[i] = Mat<double>::Zero(raw[i].rows(), raw[i].cols());
      const auto& sm = *rep.smooth;
      try {
        for (std::size_t i = 0; i < sm.size(); ++i) {
          HeadStates si = st0;
          if (var.warm) transport_states(si, sm[i].S, sm[i].T, var.mode);
          const HeadFactors u = pull(propose_head(var, rep.F_s[i], rep.grad_s[i], si), sm[i], rep.s_inv_i[i], rep.t_inv_i[i]);
          for (int f = 0; f < kFactors; ++f) acc[f] += u[f];
        }
      } catch (const std::exception&) {  // the rule failed at one of the averaged representatives
        ok[w] = false;
        continue;
      }
      for (int f = 0; f < kFactors; ++f) acc[f] /= static_cast<double>(sm.size());
      auto x = std::make_shared<Wrapped>();
      x->V = pull_back(acc, rep);
      x->U = std::move(acc);
      out[w] = std::move(x);
    } else {
      throw std::invalid_argument("unknown wrapper '" + name + "'");
    }
  }
  return out;
}

StepCoefs HeadDiagnostic::coefs_at(std::size_t v, const HeadFactors& at, const HeadFactors& inc, double lr) const {
  StepCoefs c;
  const bool hb = variants_[v].hyperball;
  const double rho = hb ? 1.0 : core::decay_factor(lr, o_.weight_decay);
  for (int i = 0; i < kFactors; ++i) {
    const double s = hb ? at[i].norm() / (rho * at[i] + lr * inc[i]).norm() : 1.0;  // retraction onto ‖W‖ = R
    c.alpha[static_cast<std::size_t>(i)] = s * rho;
    c.beta[static_cast<std::size_t>(i)] = s * lr;
  }
  return c;
}

CellResult HeadDiagnostic::run_cell(const CellSpec& c) const {
  const Index r = head_.d_k();
  const std::size_t V = variants_.size(), W = o_.wrappers.size(), G = static_cast<std::size_t>(o_.gauges);
  std::vector<GaugePair> smoothing;
  if (std::find(o_.wrappers.begin(), o_.wrappers.end(), "smooth") != o_.wrappers.end()) {
    core::Rng rng(core::splitmix_at(c.seed, 0));
    for (std::int64_t i = 0; i < o_.smooth; ++i) {
      Mat<double> S = draw_gauge(c.family, c.kappa, r, rng);
      Mat<double> T = draw_gauge(c.family, c.kappa, r, rng);
      smoothing.push_back({std::move(S), std::move(T)});
    }
  }
  const Mat<double> I = Mat<double>::Identity(r, r);
  const Representative ref = make_representative({I, I}, smoothing);
  std::vector<RefStep> refs(V * W);
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t v = 0; v < V; ++v) {
    std::vector<bool> ok;
    const auto incs = wrapped_increments(v, ref, ok);
    for (std::size_t w = 0; w < W; ++w) {
      RefStep& s = refs[v * W + w];
      if (!ok[w]) continue;
      try {
        s.U = incs[w]->U;
        s.grams = reference_grams(base_, base_gram_, s.U);
        s.first2 = first_order_norm2(s.grams);
        s.lr = o_.step_size * std::sqrt(m_norm2_ / s.first2);
        s.coefs = coefs_at(v, base_, s.U, s.lr);
        s.exact2 = exact_motion_norm2(s.grams, s.coefs);
        s.loss_after = problem_.loss(stepped(base_, s.U, s.coefs));
        s.inc2 = squared_norm(s.U);
        s.ok = s.first2 > 0 && std::isfinite(s.lr) && std::isfinite(s.loss_after);
      } catch (const std::exception&) {
        s.ok = false;
      }
    }
  }
  // metric[k][j][g]: k = first, exact, loss, increment; j = v·W + w.
  std::vector<std::vector<std::vector<double>>> metric(4, std::vector<std::vector<double>>(V * W, std::vector<double>(G, kNaN)));
  std::vector<double> forward(G, kNaN);
#pragma omp parallel for schedule(dynamic, 1)
  for (std::size_t g = 0; g < G; ++g) {
    try {
      core::Rng rng(core::splitmix_at(c.seed, g + 1));
      GaugePair gp;
      gp.S = draw_gauge(c.family, c.kappa, r, rng);
      gp.T = draw_gauge(c.family, c.kappa, r, rng);
      forward[g] = forward_error(gp);
      const Representative rep = make_representative(gp, smoothing);
      for (std::size_t v = 0; v < V; ++v) {
        std::vector<bool> ok;
        const auto incs = wrapped_increments(v, rep, ok);
        for (std::size_t w = 0; w < W; ++w) {
          const std::size_t j = v * W + w;
          const RefStep& s = refs[j];
          if (!ok[w] || !s.ok) continue;
          try {
            const HeadFactors& pb = incs[w]->V;
            HeadFactors d;
            for (int f = 0; f < kFactors; ++f) d[f] = pb[f] - s.U[f];
            const MotionGrams m = difference_grams(s.grams, base_, s.U, d);
            const StepCoefs cg = coefs_at(v, rep.F, incs[w]->U, s.lr);
            const double lg = problem_.loss(stepped(base_, pb, cg));
            metric[0][j][g] = std::sqrt(first_order_difference_norm2(m) / s.first2);
            metric[1][j][g] = std::sqrt(exact_difference_norm2(m, cg, s.coefs) / s.exact2);
            metric[2][j][g] = std::abs(lg - s.loss_after) / std::abs(loss_before_ - s.loss_after);
            metric[3][j][g] = std::sqrt(squared_distance(incs[w]->U, s.U) / s.inc2);
          } catch (const std::exception&) {
          }
        }
      }
    } catch (const std::exception&) {
    }
  }
  CellResult out;
  out.spec = c;
  out.forward = summarise(forward);
  for (std::size_t v = 0; v < V; ++v)
    for (std::size_t w = 0; w < W; ++w) {
      const std::size_t j = v * W + w;
      CellRow row;
      row.rule = variants_[v].rule;
      row.transport = variants_[v].transport;
      row.wrapper = o_.wrappers[w];
      row.lr = refs[j].ok ? refs[j].lr : kNaN;
      row.loss_after_ref = refs[j].ok ? refs[j].loss_after : kNaN;
      row.first = summarise(metric[0][j]);
      row.exact = summarise(metric[1][j]);
      row.loss = summarise(metric[2][j]);
      row.increment = summarise(metric[3][j]);
      row.failures = static_cast<std::int64_t>(G) - row.first.count;
      out.rows.push_back(std::move(row));
    }
  return out;
}

}  // namespace gaugelab::harness
