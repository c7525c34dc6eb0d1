// Optimizer-state transport (DESIGN §3, seed 003 §7) under an explicit gauge move.
//
// The true statements tested here (each with the wrong transport as a negative):
//  1. A momentum buffer of raw gradients is a covector. With covector transport, SGD-momentum
//     followed by the opposite-Gram correction gives, from the moved representative, the same
//     first-order represented motion ΔM as from the un-moved one (any invertible S; tested for
//     diagonal and general gauges). Vector or no transport does not.
//  2. A buffer of opposite-Gram-corrected gradients is a vector (corrected gradients move like
//     weights): momentum over corrected gradients with vector transport gives the same ΔM;
//     covector transport does not.
//  3. AdamW's (m, v) under a positive diagonal gauge with covector transport: the increment in the
//     moved coordinates is the same numbers as before the move (eps = 0), on either side.
//  4. The same as 1. for the value–output pair, where W_O moves by the left action T⁻¹W_O.
#include <catch2/catch.hpp>

#include <vector>

#include "core/quotient.hpp"
#include "core/transport.hpp"
#include "core/update_rules.hpp"
#include "support/update_matchers.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab::core;
using namespace gaugelab::test::update;

namespace {

constexpr int kTrials = 1000;  // random (point, gauge) pairs per property (project floor)
// Same argument as the compatibility tests: a Gram of condition ≤ κ(S)²κ(B)² is solved, plus the
// transported buffer's own solve; double round-off stays ≲ 1e-10 for κ ≤ 100.
constexpr double kTol = 1e-8;
constexpr double kMustFailBy = 1e-4;  // a failing transport must miss by 1e4 × kTol

enum class Buffer { raw_gradients, corrected_gradients };

struct Pair {
  Mat<double> A, B;
  PairState<double> st;
};

/// One momentum step of the chosen scheme at (A, B); returns the increments actually applied.
PairIncrement<double> scheme_step(Buffer kind, const MomentumOptions& o, const Mat<double>& A, const Mat<double>& B,
                                  const Mat<double>& Mstar, PairState<double>& st) {
  const PairIncrement<double> g = mloss_gradients(A, B, Mstar);
  if (kind == Buffer::raw_gradients) {
    const PairStep<double> s = step_pair<double>(o, A, B, g.U_A, g.U_B, st);
    return opposite_gram_correction(A, B, s.a.U, s.b.U);  // wrapper after the rule
  }
  const PairIncrement<double> gc = opposite_gram_correction(A, B, g);  // corrected gradients into the rule
  const PairStep<double> s = step_pair<double>(o, A, B, gc.U_A, gc.U_B, st);
  return {s.a.U, s.b.U};
}

/// ΔM of the next step from the moved representative with transported state, relative to the
/// un-moved next step, after a 3-step warm-up that fills the buffers.
double moved_vs_unmoved(Rng& rng, Buffer kind, TransportMode mode, bool diagonal_gauge, bool nesterov) {
  MomentumOptions o;
  o.lr = 0.05;
  o.momentum = 0.9;
  o.nesterov = nesterov;
  Pair p{gaussian<double>(rng, 7, 3), gaussian<double>(rng, 6, 3), {}};
  const Mat<double> Mstar = gaussian<double>(rng, 7, 6);
  for (int k = 0; k < 3; ++k) {
    const PairIncrement<double> u = scheme_step(kind, o, p.A, p.B, Mstar, p.st);
    p.A += u.U_A;
    p.B += u.U_B;
  }
  const Mat<double> S = diagonal_gauge ? sample_diagonal<double>(rng, 3, 0.5 * std::log(100.0))
                                       : sample_gl<double>(rng, 3, uniform(rng, 1.0, 100.0));
  PairState<double> st0 = p.st, st1 = p.st;
  const PairIncrement<double> u0 = scheme_step(kind, o, p.A, p.B, Mstar, st0);
  const Mat<double> dm0 = first_order_motion(p.A, p.B, u0.U_A, u0.U_B);
  const auto [As, Bs] = gauge_pair(p.A, p.B, S);
  TransportOptions to;
  to.mode = mode;
  transport_pair_state(st1.a, st1.b, S, to);
  const PairIncrement<double> u1 = scheme_step(kind, o, As, Bs, Mstar, st1);
  return rel_diff(first_order_motion(As, Bs, u1.U_A, u1.U_B), dm0);
}

}  // namespace

TEST_CASE("raw-gradient momentum buffers are covectors: covector transport keeps the corrected motion", "[transport]") {
  Rng rng(701);
  double worst_ok = 0.0, least_vec = 1e300, least_none = 1e300;
  for (int t = 0; t < kTrials; ++t) {
    const bool diag = (t % 2 == 0), nest = (t % 4 < 2);
    worst_ok = std::max(worst_ok, moved_vs_unmoved(rng, Buffer::raw_gradients, TransportMode::covector, diag, nest));
    least_vec = std::min(least_vec, moved_vs_unmoved(rng, Buffer::raw_gradients, TransportMode::vector, diag, nest));
    least_none = std::min(least_none, moved_vs_unmoved(rng, Buffer::raw_gradients, TransportMode::none, diag, nest));
  }
  INFO("covector worst " << worst_ok << "; vector least " << least_vec << "; none least " << least_none);
  CHECK(worst_ok <= kTol);
  CHECK(least_vec > kMustFailBy);
  CHECK(least_none > kMustFailBy);
}

TEST_CASE("corrected-gradient momentum buffers are vectors: vector transport keeps the motion", "[transport]") {
  Rng rng(702);
  double worst_ok = 0.0, least_cov = 1e300;
  for (int t = 0; t < kTrials; ++t) {
    const bool diag = (t % 2 == 0), nest = (t % 4 < 2);
    worst_ok = std::max(worst_ok, moved_vs_unmoved(rng, Buffer::corrected_gradients, TransportMode::vector, diag, nest));
    least_cov = std::min(least_cov, moved_vs_unmoved(rng, Buffer::corrected_gradients, TransportMode::covector, diag, nest));
  }
  INFO("vector worst " << worst_ok << "; covector least " << least_cov);
  CHECK(worst_ok <= kTol);
  CHECK(least_cov > kMustFailBy);
}

TEST_CASE("AdamW state under a positive diagonal gauge: covector transport of (m, v) keeps the increment",
          "[transport][adamw]") {
  constexpr double kAdamTol = 1e-12;  // elementwise ratios of transported moments: a few ulps
  Rng rng(703);
  double worst = 0.0, least_vec = 1e300;
  for (int t = 0; t < kTrials; ++t) {
    const GaugeSide side = (t % 2 == 0) ? GaugeSide::right : GaugeSide::left;
    AdamWOptions o;
    o.eps = 0.0;
    Mat<double> W = gaussian<double>(rng, 4, 5);
    RuleState<double> st;
    for (int k = 0; k < 3; ++k) apply_step(W, adamw_step(o, W, gaussian<double>(rng, 4, 5), st));
    const Index k = side == GaugeSide::right ? 5 : 4;
    const Mat<double> D = sample_diagonal<double>(rng, k, 2.0), Dinv = D.inverse();
    const Mat<double> G = gaussian<double>(rng, 4, 5);
    RuleState<double> s0 = st, s1 = st, s2 = st;
    const Mat<double> U0 = adamw_step(o, W, G, s0).U;
    // Right: W' = WD, G' = GD⁻¹.  Left: W' = D⁻¹W, G' = DG.
    const Mat<double> Wm = side == GaugeSide::right ? Mat<double>(W * D) : Mat<double>(Dinv * W);
    const Mat<double> Gm = side == GaugeSide::right ? Mat<double>(G * Dinv) : Mat<double>(D * G);
    TransportOptions cov, vec;
    cov.mode = TransportMode::covector;
    vec.mode = TransportMode::vector;
    transport_state(s1, D, side, cov);
    transport_state(s2, D, side, vec);
    worst = std::max(worst, rel_diff(adamw_step(o, Wm, Gm, s1).U, U0));
    least_vec = std::min(least_vec, rel_diff(adamw_step(o, Wm, Gm, s2).U, U0));
  }
  INFO("covector worst " << worst << "; vector least " << least_vec);
  CHECK(worst <= kAdamTol);
  CHECK(least_vec > kMustFailBy);
}

TEST_CASE("VO pair: covector transport with the left action on W_O keeps the corrected motion", "[transport]") {
  const Index d = 8, dh = 3;
  Rng rng(704);
  double worst = 0.0;
  for (int t = 0; t < kTrials; ++t) {
    MomentumOptions o;
    o.lr = 0.05;
    Mat<double> Wv = gaussian<double>(rng, d, dh), Wo = gaussian<double>(rng, dh, d);
    const Mat<double> Mstar = gaussian<double>(rng, d, d);
    RuleState<double> sv, so;
    const auto step = [&](const Mat<double>& v, const Mat<double>& w, RuleState<double>& a, RuleState<double>& b) {
      const Mat<double> R = v * w - Mstar;
      const Mat<double> Uv = momentum_step(o, v, Mat<double>(R * w.transpose()), a).U;
      const Mat<double> Uo = momentum_step(o, w, Mat<double>(v.transpose() * R), b).U;
      return correct_vo<double>(v, w, Uv, Uo);
    };
    for (int k = 0; k < 3; ++k) {
      const VoIncrement<double> u = step(Wv, Wo, sv, so);
      Wv += u.U_V;
      Wo += u.U_O;
    }
    const Mat<double> T = sample_gl<double>(rng, dh, uniform(rng, 1.0, 100.0)), Ti = T.inverse();
    RuleState<double> sv0 = sv, so0 = so, sv1 = sv, so1 = so;
    const VoIncrement<double> u0 = step(Wv, Wo, sv0, so0);
    TransportOptions cov;
    cov.mode = TransportMode::covector;
    transport_state(sv1, T, GaugeSide::right, cov);  // W_V → W_V T
    transport_state(so1, T, GaugeSide::left, cov);   // W_O → T⁻¹W_O
    const Mat<double> Wv1 = Wv * T, Wo1 = Ti * Wo;
    const VoIncrement<double> u1 = step(Wv1, Wo1, sv1, so1);
    const Mat<double> dm0 = u0.U_V * Wo + Wv * u0.U_O, dm1 = u1.U_V * Wo1 + Wv1 * u1.U_O;
    worst = std::max(worst, rel_diff(dm1, dm0));
  }
  INFO("worst " << worst);
  CHECK(worst <= kTol);
}

TEST_CASE("transport laws, second-moment rules and rejected combinations", "[transport]") {
  Rng rng(705);
  for (int t = 0; t < kTrials; ++t) {
    RuleState<double> st;
    st.moment1 = gaussian<double>(rng, 4, 3);
    st.moment2 = gaussian<double>(rng, 4, 3).cwiseAbs2();
    st.step = 5;
    const Mat<double> Dr = sample_diagonal<double>(rng, 3, 1.0), Dl = sample_diagonal<double>(rng, 4, 1.0);
    const Vec<double> sr = Dr.diagonal(), sl = Dl.diagonal();
    TransportOptions vec, cov, none;
    vec.mode = TransportMode::vector;
    cov.mode = TransportMode::covector;
    RuleState<double> a = st, b = st, c = st, e = st, n = st;
    transport_state(a, Dr, GaugeSide::right, vec);
    transport_state(b, Dr, GaugeSide::right, cov);
    transport_state(c, Dl, GaugeSide::left, vec);
    transport_state(e, Dl, GaugeSide::left, cov);
    transport_state(n, Dr, GaugeSide::right, none);
    REQUIRE(rel_diff(a.moment1, Mat<double>(st.moment1 * Dr)) <= 1e-15);
    REQUIRE(rel_diff(a.moment2, Mat<double>(st.moment2 * sr.cwiseAbs2().asDiagonal())) <= 1e-15);
    REQUIRE(rel_diff(b.moment1, Mat<double>(st.moment1 * sr.cwiseInverse().asDiagonal())) <= 1e-15);
    REQUIRE(rel_diff(b.moment2, Mat<double>(st.moment2 * sr.cwiseAbs2().cwiseInverse().asDiagonal())) <= 1e-15);
    REQUIRE(rel_diff(c.moment1, Mat<double>(sl.cwiseInverse().asDiagonal() * st.moment1)) <= 1e-15);
    REQUIRE(rel_diff(c.moment2, Mat<double>(sl.cwiseAbs2().cwiseInverse().asDiagonal() * st.moment2)) <= 1e-15);
    REQUIRE(rel_diff(e.moment1, Mat<double>(Dl * st.moment1)) <= 1e-15);
    REQUIRE(rel_diff(e.moment2, Mat<double>(sl.cwiseAbs2().asDiagonal() * st.moment2)) <= 1e-15);
    REQUIRE((n.moment1.array() == st.moment1.array()).all());
    REQUIRE((n.moment2.array() == st.moment2.array()).all());
    REQUIRE(a.step == 5);
    // Orthogonal gauge: S⁻ᵀ = S, so vector and covector agree (first moments only).
    RuleState<double> o1, o2;
    o1.moment1 = o2.moment1 = st.moment1;
    const Mat<double> Q = sample_orthogonal<double>(rng, 3);
    transport_state(o1, Q, GaugeSide::right, vec);
    transport_state(o2, Q, GaugeSide::right, cov);
    REQUIRE(rel_diff(o1.moment1, o2.moment1) <= 1e-14);
  }
  // Rejections.
  RuleState<double> st;
  st.moment1 = gaussian<double>(rng, 4, 3);
  st.moment2 = st.moment1.cwiseAbs2();
  TransportOptions cov;
  cov.mode = TransportMode::covector;
  const Mat<double> S = sample_gl<double>(rng, 3, 5.0);
  CHECK_THROWS_WITH(transport_state(st, S, GaugeSide::right, cov), Catch::Contains("diagonal"));
  CHECK_THROWS_AS(transport_state(st, Mat<double>(Mat<double>::Identity(4, 4)), GaugeSide::right, cov),
                  std::invalid_argument);  // wrong size for the right action
  CHECK_THROWS_AS(transport_state(st, Mat<double>(Mat<double>::Zero(3, 3)), GaugeSide::right, cov),
                  std::invalid_argument);  // singular (and diagonal) gauge
  TransportOptions keep = cov;
  keep.keep_second_moment_for_general_gauge = true;
  RuleState<double> k = st;
  transport_state(k, S, GaugeSide::right, keep);
  CHECK((k.moment2.array() == st.moment2.array()).all());
  CHECK(rel_diff(k.moment1, Mat<double>(st.moment1 * S.inverse().transpose())) <= 1e-13);
  // A momentum-only state takes any invertible gauge.
  RuleState<double> m;
  m.moment1 = st.moment1;
  CHECK_NOTHROW(transport_state(m, S, GaugeSide::right, cov));
  // Parsing.
  for (TransportMode md : {TransportMode::none, TransportMode::vector, TransportMode::covector})
    CHECK(parse_transport_mode(transport_mode_name(md)) == md);
  CHECK_THROWS_WITH(parse_transport_mode("tensor"), Catch::Contains("tensor") && Catch::Contains("none|vector|covector"));
}

}  // namespace GAUGELAB_TU
