// The Lie-algebra view (core/gauge_lie.hpp), at many random points in float64: orbit tangents are the
// derivative of the group action; the exact horizontal projection (seed 001 Remark 51) is orthogonal to
// every orbit tangent, idempotent, and kills vertical vectors; the gradient of a gauge-invariant
// function is already horizontal (Prop. 38); at a critical point the Hessian's nullity is exactly the
// group's dimension d_k² + d_v² for a generic head (Prop. 9's count, "at least" being attained) while
// the quotient Hessian (restricted to the horizontal space) is non-singular; Alg. 2's approximation is
// exact on vertical vectors and, in general, not orthogonal.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // Eigen's AVX-512 GEMM packing (see test_gauge_attention)

#include <catch2/catch.hpp>

#include <functional>

#include "core/gauge_lie.hpp"
#include "support/sampling.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab;
using core::AttentionHead;
using core::HeadAlgebra;
using core::HeadDirection;
using core::Index;
using core::Mat;

namespace {

constexpr int kPoints = 40;  // random heads (or pairs) per property

struct Shape {
  Index d, dk, dv;
};
Shape shape_of(int i) { return {4 + i % 3, 1 + i % 3, 1 + (i / 3) % 3}; }

HeadAlgebra<double> random_algebra(core::Rng& rng, Index dk, Index dv) {
  return {test::gaussian<double>(rng, dk, dk), test::gaussian<double>(rng, dv, dv)};
}

HeadDirection<double> random_direction(core::Rng& rng, const AttentionHead<double>& h) {
  return test::random_head<double>(rng, h.d_model(), h.d_k(), h.d_v());
}

double norm(const HeadDirection<double>& a) { return std::sqrt(core::head_inner(a, a)); }

// The head's parameters as one vector and back (W_q, b_q, W_k, b_k, W_v, b_v, W_o; column-major blocks).
std::vector<Mat<double>*> blocks(AttentionHead<double>& h) { return {&h.W_q, &h.W_k, &h.W_v, &h.W_o}; }

core::Vec<double> flatten(const AttentionHead<double>& h0) {
  AttentionHead<double> h = h0;
  std::vector<double> v;
  for (Mat<double>* m : blocks(h)) v.insert(v.end(), m->data(), m->data() + m->size());
  for (const auto* b : {&h.b_q, &h.b_k, &h.b_v}) v.insert(v.end(), b->data(), b->data() + b->size());
  return Eigen::Map<core::Vec<double>>(v.data(), static_cast<Index>(v.size()));
}

AttentionHead<double> unflatten(const AttentionHead<double>& like, const core::Vec<double>& v) {
  AttentionHead<double> h = like;
  Index at = 0;
  for (Mat<double>* m : blocks(h)) {
    std::copy(v.data() + at, v.data() + at + m->size(), m->data());
    at += m->size();
  }
  for (auto* b : {&h.b_q, &h.b_k, &h.b_v}) {
    std::copy(v.data() + at, v.data() + at + b->size(), b->data());
    at += b->size();
  }
  return h;
}

// The head's function on fixed inputs: its logits and its output, one vector.
core::Vec<double> function_of(const AttentionHead<double>& h, const Mat<double>& x) {
  const Mat<double> l = core::head_logits(h, x), o = core::head_output(h, x);
  core::Vec<double> f(l.size() + o.size());
  f << Eigen::Map<const core::Vec<double>>(l.data(), l.size()), Eigen::Map<const core::Vec<double>>(o.data(), o.size());
  return f;
}

// Central-difference Jacobian [outputs, params] of fn at theta.
Mat<double> jacobian(const std::function<core::Vec<double>(const core::Vec<double>&)>& fn, const core::Vec<double>& theta,
                     double eps) {
  const core::Vec<double> f0 = fn(theta);
  Mat<double> j(f0.size(), theta.size());
  for (Index p = 0; p < theta.size(); ++p) {
    core::Vec<double> a = theta, b = theta;
    a(p) += eps;
    b(p) -= eps;
    j.col(p) = (fn(a) - fn(b)) / (2 * eps);
  }
  return j;
}

}  // namespace

TEST_CASE("lie: the Sylvester solve satisfies A X + X B = C, and gives the minimum-norm solution when singular",
          "[core][lie]") {
  core::Rng rng(11);
  for (int i = 0; i < kPoints; ++i) {
    const Index n = 1 + i % 5, m = 1 + (i / 5) % 4;
    const Mat<double> fa = test::gaussian<double>(rng, n + 2, n), fb = test::gaussian<double>(rng, m + 1, m);
    const Mat<double> a = fa.transpose() * fa, b = fb.transpose() * fb, c = test::gaussian<double>(rng, n, m);
    const Mat<double> x = core::solve_sylvester_psd(a, b, c);
    CHECK((a * x + x * b - c).norm() <= 1e-10 * (1 + c.norm()));
  }
  // A = B = 0 (a zero factor): no equation to satisfy, the minimum-norm X is 0.
  const Mat<double> z = Mat<double>::Zero(2, 2);
  CHECK(core::solve_sylvester_psd(z, z, test::gaussian<double>(rng, 2, 2)).norm() == 0.0);
}

TEST_CASE("lie: a head's orbit tangent is the derivative of the group action", "[core][lie]") {
  core::Rng rng(12);
  const double eps = 1e-5;
  for (int i = 0; i < kPoints; ++i) {
    const Shape s = shape_of(i);
    const AttentionHead<double> h = test::random_head<double>(rng, s.d, s.dk, s.dv);
    const HeadAlgebra<double> e = random_algebra(rng, s.dk, s.dv);
    const Mat<double> ik = Mat<double>::Identity(s.dk, s.dk), iv = Mat<double>::Identity(s.dv, s.dv);
    const AttentionHead<double> plus = core::apply_head_gauge(h, Mat<double>(ik + eps * e.X), Mat<double>(iv + eps * e.Y));
    const AttentionHead<double> minus = core::apply_head_gauge(h, Mat<double>(ik - eps * e.X), Mat<double>(iv - eps * e.Y));
    const core::Vec<double> fd = (flatten(plus) - flatten(minus)) / (2 * eps);
    const core::Vec<double> t = flatten(core::head_orbit_tangent(h, e));
    INFO("point " << i << ": |fd - t| = " << (fd - t).norm() << ", |t| = " << t.norm());
    CHECK((fd - t).norm() <= 1e-7 * (1 + t.norm()));  // O(eps²) truncation, round-off 1e-16/eps
  }
}

TEST_CASE("lie: the exact horizontal projection is orthogonal to every orbit tangent, idempotent, 0 on tangents",
          "[core][lie]") {
  core::Rng rng(13);
  for (int i = 0; i < kPoints; ++i) {
    const Shape s = shape_of(i);
    const AttentionHead<double> h = test::random_head<double>(rng, s.d, s.dk, s.dv);
    const HeadDirection<double> g = random_direction(rng, h);
    const HeadDirection<double> p = core::head_horizontal_projection(h, g);
    for (Index a = 0; a < s.dk; ++a)  // a basis of gl(d_k) ⊕ gl(d_v)
      for (Index b = 0; b < s.dk; ++b) {
        HeadAlgebra<double> e{Mat<double>::Zero(s.dk, s.dk), Mat<double>::Zero(s.dv, s.dv)};
        e.X(a, b) = 1;
        const HeadDirection<double> t = core::head_orbit_tangent(h, e);
        CHECK(std::abs(core::head_inner(p, t)) <= 1e-11 * norm(g) * norm(t));
      }
    for (Index a = 0; a < s.dv; ++a)
      for (Index b = 0; b < s.dv; ++b) {
        HeadAlgebra<double> e{Mat<double>::Zero(s.dk, s.dk), Mat<double>::Zero(s.dv, s.dv)};
        e.Y(a, b) = 1;
        const HeadDirection<double> t = core::head_orbit_tangent(h, e);
        CHECK(std::abs(core::head_inner(p, t)) <= 1e-11 * norm(g) * norm(t));
      }
    CHECK(norm(core::head_difference(core::head_horizontal_projection(h, p), p)) <= 1e-11 * norm(g));
    const HeadDirection<double> t = core::head_orbit_tangent(h, random_algebra(rng, s.dk, s.dv));
    CHECK(norm(core::head_horizontal_projection(h, t)) <= 1e-10 * norm(t));
    // the projection removes only the vertical part: the rest of g is kept (|p| <= |g|, Pythagoras)
    CHECK(std::abs(norm(g) * norm(g) - norm(p) * norm(p) - std::pow(norm(core::head_difference(g, p)), 2)) <=
          1e-10 * norm(g) * norm(g));
  }
}

TEST_CASE("lie: the factor gauge's projection is orthogonal to its orbit and keeps the represented motion",
          "[core][lie]") {
  core::Rng rng(14);
  for (int i = 0; i < kPoints; ++i) {
    const Index m = 3 + i % 3, n = 2 + i % 4, r = 1 + i % 3;
    const core::FactorPair<double> pr = test::random_factor_pair<double>(rng, m, n, r);
    const core::FactorPair<double> g = test::random_factor_pair<double>(rng, m, n, r);
    const core::FactorPair<double> p = core::factor_horizontal_projection(pr, g);
    for (Index a = 0; a < r; ++a)
      for (Index b = 0; b < r; ++b) {
        Mat<double> x = Mat<double>::Zero(r, r);
        x(a, b) = 1;
        const core::FactorPair<double> t = core::factor_orbit_tangent(pr, x);
        const double ip = (p.A.array() * t.A.array()).sum() + (p.B.array() * t.B.array()).sum();
        CHECK(std::abs(ip) <= 1e-11 * (g.A.norm() + g.B.norm()) * (t.A.norm() + t.B.norm()));
      }
    // first-order motion of M = A Bᵀ: δM = δA Bᵀ + A δBᵀ; a vertical part moves nothing, so δM is kept
    const Mat<double> dm_g = g.A * pr.B.transpose() + pr.A * g.B.transpose();
    const Mat<double> dm_p = p.A * pr.B.transpose() + pr.A * p.B.transpose();
    CHECK((dm_g - dm_p).norm() <= 1e-10 * (1 + dm_g.norm()));
  }
}

TEST_CASE("lie: the gradient of a gauge-invariant function is horizontal (Prop. 38)", "[core][lie]") {
  core::Rng rng(15);
  for (int i = 0; i < 10; ++i) {
    const Shape s = shape_of(i);
    const AttentionHead<double> h = test::random_head<double>(rng, s.d, s.dk, s.dv);
    const Mat<double> x = test::gaussian<double>(rng, 5, s.d);
    const core::Vec<double> w = test::gaussian_vec<double>(rng, 25 + 5 * s.d);  // [logits 5 × 5 + output 5 × d]
    auto loss = [&](const core::Vec<double>& th) {  // a fixed linear functional of (logits, output)
      core::Vec<double> v(1);
      v(0) = w.dot(function_of(unflatten(h, th), x));
      return v;
    };
    const core::Vec<double> grad = jacobian(loss, flatten(h), 1e-6).row(0).transpose();
    const HeadDirection<double> g = unflatten(h, grad);
    const HeadDirection<double> p = core::head_horizontal_projection(h, g);
    INFO("point " << i << ": |g| = " << norm(g) << ", |g - P g| = " << norm(core::head_difference(g, p)));
    CHECK(norm(core::head_difference(g, p)) <= 1e-6 * norm(g));  // finite differences: ~1e-9 relative
  }
}

TEST_CASE("lie: at a critical point the Hessian's nullity is the group's dimension, the quotient Hessian is not singular",
          "[core][lie]") {
  // L(θ) = ½‖F(θ) − F(θ*)‖², F = (logits, output) on fixed inputs: θ* is a minimum and ∇²L(θ*) = JᵀJ,
  // so its null space is J's. J comes from central differences (step 1e-6: entries good to ~1e-10),
  // so singular values below 1e-7·σ_max count as zero, and the count is trusted only with a gap above
  // that floor. Heads with d_k = 1 are left out: their smallest genuine singular values reach 6e-7·σ_max
  // (exact autograd Jacobians of the same function), which differences cannot tell from 0; over 800
  // random heads with d_k ∈ {2, 3} the smallest was 1.9e-6·σ_max.
  core::Rng rng(16);
  for (int i = 0; i < 8; ++i) {
    const Shape s{4, 2 + i % 2, 1 + (i / 2) % 2};
    const AttentionHead<double> h = test::random_head<double>(rng, s.d, s.dk, s.dv);
    const Mat<double> x = test::gaussian<double>(rng, 6, s.d);
    const core::Vec<double> theta = flatten(h);
    const Index n = theta.size(), group_dim = s.dk * s.dk + s.dv * s.dv;
    const Mat<double> j = jacobian([&](const core::Vec<double>& th) { return function_of(unflatten(h, th), x); }, theta, 1e-6);
    const core::Vec<double> sv = Eigen::JacobiSVD<Mat<double>>(j).singularValues();  // descending, n of them
    const double floor = 1e-7 * sv(0);
    INFO("point " << i << ": d_k " << s.dk << ", d_v " << s.dv << ", " << n << " parameters; smallest singular values "
                  << sv.tail(group_dim + 2).transpose());
    CHECK((sv.array() < floor).count() == group_dim);
    CHECK(sv(n - group_dim - 1) > 10 * floor);  // the gap that makes the count meaningful
    const Mat<double> hess = j.transpose() * j;  // [n, n]
    // the vertical space at θ*: the tangents of a basis of the algebra, [n, group_dim]
    Mat<double> vert(n, group_dim);
    Index c = 0;
    for (int sector = 0; sector < 2; ++sector) {
      const Index r = sector == 0 ? s.dk : s.dv;
      for (Index a = 0; a < r; ++a)
        for (Index b = 0; b < r; ++b) {
          HeadAlgebra<double> e{Mat<double>::Zero(s.dk, s.dk), Mat<double>::Zero(s.dv, s.dv)};
          (sector == 0 ? e.X : e.Y)(a, b) = 1;
          vert.col(c++) = flatten(core::head_orbit_tangent(h, e));
        }
    }
    CHECK((j * vert).norm() <= floor * vert.norm());  // the null directions are the algebra's
    // an orthonormal basis of the horizontal space: the last n − group_dim columns of Q in vert = Q R
    const Mat<double> q = Eigen::HouseholderQR<Mat<double>>(vert).householderQ();
    const Mat<double> hor = q.rightCols(n - group_dim);
    const core::Vec<double> qev = Eigen::SelfAdjointEigenSolver<Mat<double>>(hor.transpose() * hess * hor).eigenvalues();
    INFO("quotient Hessian's eigenvalues from " << qev.minCoeff() << " to " << qev.maxCoeff());
    CHECK(qev.minCoeff() > 100 * floor * floor);  // above the Hessian's noise floor (σ² scale)
  }
}

TEST_CASE("lie: Alg. 2's approximate projection is exact on vertical vectors, and in general not orthogonal",
          "[core][lie]") {
  core::Rng rng(17);
  double worst_ratio = 0;
  for (int i = 0; i < kPoints; ++i) {
    const Shape s = shape_of(i);
    const AttentionHead<double> h = test::random_head<double>(rng, s.d, s.dk, s.dv);
    const HeadDirection<double> t = core::head_orbit_tangent(h, random_algebra(rng, s.dk, s.dv));
    CHECK(norm(core::head_horizontal_projection_approx(h, t)) <= 1e-9 * norm(t));
    const HeadDirection<double> g = random_direction(rng, h);
    const HeadDirection<double> exact = core::head_horizontal_projection(h, g);
    const HeadDirection<double> approx = core::head_horizontal_projection_approx(h, g);
    worst_ratio = std::max(worst_ratio, norm(core::head_difference(approx, exact)) / norm(exact));
  }
  // the approximation is a real one: on random directions it differs from the exact projection
  CHECK(worst_ratio > 1e-3);
}

TEST_CASE("lie: ReLU rescaling: tangents are the action's derivative, the projection is orthogonal to them, the "
          "gradient is horizontal and a gradient step keeps each neuron's balance to second order",
          "[core][lie]") {
  core::Rng rng(18);
  for (int i = 0; i < kPoints; ++i) {
    const Index d = 2 + i % 3, hidden = 1 + i % 5, m = 1 + i % 2;
    const core::ReluNet<double> n = test::random_relu_net<double>(rng, d, hidden, m);
    const core::Vec<double> a = test::gaussian_vec<double>(rng, hidden);
    const double eps = 1e-5;
    const core::ReluNet<double> plus = core::rescale_neurons(n, core::Vec<double>((eps * a).array().exp()));
    const core::ReluNet<double> minus = core::rescale_neurons(n, core::Vec<double>((-eps * a).array().exp()));
    const core::ReluNet<double> t = core::relu_orbit_tangent(n, a);
    CHECK(((plus.W1 - minus.W1) / (2 * eps) - t.W1).norm() <= 1e-7 * (1 + t.W1.norm()));
    CHECK(((plus.b1 - minus.b1) / (2 * eps) - t.b1).norm() <= 1e-7 * (1 + t.b1.norm()));
    CHECK(((plus.W2 - minus.W2) / (2 * eps) - t.W2).norm() <= 1e-7 * (1 + t.W2.norm()));

    const core::ReluNet<double> g = test::random_relu_net<double>(rng, d, hidden, m);
    const core::ReluNet<double> p = core::relu_horizontal_projection(n, g);
    for (Index k = 0; k < hidden; ++k) {
      const core::ReluNet<double> tk = core::relu_orbit_tangent(n, core::Vec<double>(core::Vec<double>::Unit(hidden, k)));
      const double ip = (p.W1.array() * tk.W1.array()).sum() + p.b1.dot(tk.b1) + (p.W2.array() * tk.W2.array()).sum();
      CHECK(std::abs(ip) <= 1e-12 * (1 + g.W1.norm() + g.W2.norm() + g.b1.norm()));
    }

    // the gradient of Σ w ⊙ f(X), by central differences over (W1, b1, W2)
    const Mat<double> x = test::gaussian<double>(rng, 7, d), w = test::gaussian<double>(rng, 7, m);
    auto loss = [&](const core::ReluNet<double>& net) { return (w.array() * core::relu_forward(net, x).array()).sum(); };
    core::ReluNet<double> grad = n;
    const double h = 1e-6;
    for (Mat<double>* blk : {&grad.W1, &grad.W2})
      for (Index e = 0; e < blk->size(); ++e) {
        core::ReluNet<double> up = n, down = n;
        Mat<double>& bu = blk == &grad.W1 ? up.W1 : up.W2;
        Mat<double>& bd = blk == &grad.W1 ? down.W1 : down.W2;
        bu.data()[e] += h;
        bd.data()[e] -= h;
        blk->data()[e] = (loss(up) - loss(down)) / (2 * h);
      }
    for (Index e = 0; e < hidden; ++e) {
      core::ReluNet<double> up = n, down = n;
      up.b1(e) += h;
      down.b1(e) -= h;
      grad.b1(e) = (loss(up) - loss(down)) / (2 * h);
    }
    grad.b2.setZero();
    const core::ReluNet<double> gp = core::relu_horizontal_projection(n, grad);
    const double gnorm = std::sqrt(grad.W1.squaredNorm() + grad.b1.squaredNorm() + grad.W2.squaredNorm());
    CHECK(std::sqrt((gp.W1 - grad.W1).squaredNorm() + (gp.b1 - grad.b1).squaredNorm() + (gp.W2 - grad.W2).squaredNorm()) <=
          1e-6 * (1 + gnorm));
    const double lr = 1e-3;
    const core::ReluNet<double> stepped{n.W1 - lr * grad.W1, n.b1 - lr * grad.b1, n.W2 - lr * grad.W2, n.b2};
    const core::Vec<double> moved = core::relu_balance(stepped) - core::relu_balance(n);
    CHECK(moved.cwiseAbs().maxCoeff() <= 2 * lr * lr * gnorm * gnorm + 1e-9);  // the O(lr) term vanishes
  }
}

}  // namespace GAUGELAB_TU
