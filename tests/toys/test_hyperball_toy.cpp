// hyperball (seed 003 §5): fixed radii in closed form and simulation, the seed's retraction against
// the core's step, decay in the tangent space, and Grams that stay unbalanced.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/random.hpp"
#include "toys/hyperball_toy.hpp"

using namespace gaugelab;

namespace {

// Norms after a retraction R·W/‖W‖: a norm, a division and a scaling, ~ a few ulps per step.
constexpr double kAgree = 1e-12;
// P_T(λW) = λW − (⟨λW, W⟩/‖W‖²)W cancels to round-off of ‖λW‖: a few ulps.
constexpr double kTangent = 1e-14;

}  // namespace

TEST_CASE("hyperball: norms stay at R and traces at R^2 while the Grams stay unbalanced", "[toys][hyperball]") {
  toys::HyperballToyOptions o;
  for (std::uint64_t seed : {0u, 1u, 2u}) {
    const auto run = toys::run_hyperball_toy(o, seed);
    INFO("seed " << seed);
    CHECK(run.metric("max_rel_err_norm") <= kAgree);
    CHECK(run.metric("max_rel_err_trace") <= kAgree);
    CHECK(run.metric("rel_err_retraction") <= kAgree);
    CHECK(run.metric("decay_tangent_rel") <= kTangent);
    // Equal radii at the start (the scalar gauge equalised them) ...
    CHECK(std::fabs(run.metric("radius_A") / run.metric("radius_B") - 1.0) <= kAgree);
    // ... yet the Grams are far from balanced and training does not bring them there
    // (a balanced pair has relative imbalance 0; these start at O(1) and stay there).
    CHECK(run.metric("rel_imbalance_start") > 0.5);
    CHECK(run.metric("rel_imbalance_final") > 0.5 * run.metric("rel_imbalance_start"));
    CHECK(run.metric("col_rms_log_ratio_final") > 0.1);
    CHECK(run.metric("loss_final") < 0.1 * run.metric("loss_start"));  // while the fit itself progresses
  }
}

TEST_CASE("hyperball: the seed's retraction keeps the radius and moves by eta R", "[toys][hyperball]") {
  core::Rng rng(4);
  const auto W = core::randn<double>(rng, 5, 3), G = core::randn<double>(rng, 5, 3);
  const double R = 2.5, eta = 0.1;
  const auto W1 = toys::hyperball_retraction_closed_form(W * (R / W.norm()), G, eta, R);
  CHECK(W1.norm() == Approx(R).epsilon(kAgree));
  CHECK((W1 - W * (R / W.norm())).norm() < eta * R);  // the retraction only shortens the move
}
