// core/qk_balance.hpp (the reference of the trainer's effective-norm GaugeFix, condition Beff) on its own:
// the head norms on a hand example, the balancing gauge makes every head's effective norms equal and leaves
// every logit q·k unchanged, and the imbalance it removes is invisible to the multipliers' RMS.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/qk_balance.hpp"
#include "core/random.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab;
using core::Index;
using core::Mat;
using core::Vec;

TEST_CASE("qk balance: head row norms and the log ratio on a hand example") {
  Mat<double> Wq = Mat<double>::Zero(4, 3), Wk = Mat<double>::Zero(4, 3);  // 2 heads of d_h 2, d_in 3
  Wq(0, 0) = 3, Wq(1, 2) = 4;  // head 0: ‖·‖ = 5
  Wq(2, 1) = 1;                // head 1: 1
  Wk(0, 1) = 5;                // head 0: 5
  Wk(3, 0) = 2;                // head 1: 2
  const Vec<double> n = core::head_row_norms(Wq, 2);
  CHECK(n(0) == Approx(5.0));
  CHECK(n(1) == Approx(1.0));
  const Vec<double> rho = core::qk_effective_log_ratio(Wq, Wk, 2);
  CHECK(rho(0) == Approx(0.0).margin(1e-15));
  CHECK(rho(1) == Approx(std::log(0.5)));
  CHECK_THROWS(core::head_row_norms(Wq, 3));  // 4 rows do not split into 3 heads
  CHECK_THROWS(core::qk_balance_gauge(Wq, Wk, 2, -1.0));
}

TEST_CASE("qk balance: the gauge equalises n_Q and n_K per head and keeps every logit") {
  core::Rng rng(7);
  const Index h = 3, dh = 4, d_in = 10, T = 5;
  Mat<double> Wq = core::randn<double>(rng, h * dh, d_in), Wk = core::randn<double>(rng, h * dh, d_in);
  Wq.middleRows(0, dh) *= 7.0;  // head 0 strongly Q-heavy
  Wk.middleRows(2 * dh, dh) *= 0.1;
  const Mat<double> X = core::randn<double>(rng, T, d_in);  // [T, d_in]
  const Vec<double> g = core::qk_balance_gauge(Wq, Wk, h, 0.0);  // [h]
  Mat<double> Wq2 = Wq, Wk2 = Wk;
  for (Index i = 0; i < h; ++i) {
    Wq2.middleRows(i * dh, dh) /= g(i);
    Wk2.middleRows(i * dh, dh) *= g(i);
  }
  CHECK(core::qk_effective_log_ratio(Wq2, Wk2, h).cwiseAbs().maxCoeff() < 1e-12);
  CHECK(core::qk_effective_log_ratio(Wq, Wk, h).cwiseAbs().maxCoeff() > 1.0);
  for (Index i = 0; i < h; ++i) {  // logits per head, before and after
    const Mat<double> before = X * Wq.middleRows(i * dh, dh).transpose() * (X * Wk.middleRows(i * dh, dh).transpose()).transpose();
    const Mat<double> after = X * Wq2.middleRows(i * dh, dh).transpose() * (X * Wk2.middleRows(i * dh, dh).transpose()).transpose();
    CHECK((after - before).cwiseAbs().maxCoeff() < 1e-12 * before.cwiseAbs().maxCoeff());
  }
}

TEST_CASE("qk balance: a column rescaling of W_Q is invisible to row multipliers yet is an imbalance") {
  // W_eff = diag(r)·W̄·diag(c): with r_Q = r_K = 1 the multipliers' drift is 0, but c_Q = 4 makes every
  // head Q-heavy by log 4.
  core::Rng rng(11);
  const Index h = 2, dh = 3, d_in = 6;
  const Mat<double> Wbar = core::randn<double>(rng, h * dh, d_in);
  const Mat<double> Wq = Wbar * 4.0, Wk = Wbar;
  const Vec<double> rho = core::qk_effective_log_ratio(Wq, Wk, h);
  for (Index i = 0; i < h; ++i) CHECK(rho(i) == Approx(std::log(4.0)));
}

}  // namespace GAUGELAB_TU
