// The update-rule table's invariance column, checked for every row (PyTorch's optimizer-info tables are the
// model: one loop over the table, so a new rule is checked the day it is added). For each rule, one step from a
// fresh state on a factor pair under the M-loss: the represented motion ΔM (seed 003 §8) is the same from every
// representative (AS, BS⁻ᵀ) with S in the row's declared family, and differs under a general gauge of
// condition number 10 (so the column could fail both ways). A coordinatewise rule (signed permutations only)
// must also move differently under a rotation.
#include <catch2/catch.hpp>

#include <numeric>
#include <string>
#include <vector>

#include "core/update_rules.hpp"
#include "support/update_matchers.hpp"
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab::core;
using gaugelab::test::update::expect_motion_invariant;
using gaugelab::test::update::gaussian;
using gaugelab::test::update::mloss_gradients;
using gaugelab::test::update::sample_gl;
using gaugelab::test::update::sample_orthogonal;

namespace {

constexpr Index kM = 7, kN = 5, kR = 4;
constexpr int kGauges = 8;
// In the family: the same arithmetic on rotated or permuted operands, float64 round-off of O(1) quantities.
constexpr double kInvariantTol = 1e-9;
// Outside it: a κ = 10 gauge moves ΔM by O(1) relative for these rules; 1e-3 is far above round-off.
constexpr double kVariesAbove = 1e-3;

Mat<double> signed_permutation(Rng& rng, Index r) {
  std::vector<Index> p(static_cast<std::size_t>(r));
  std::iota(p.begin(), p.end(), Index{0});
  for (Index i = r - 1; i > 0; --i) std::swap(p[static_cast<std::size_t>(i)], p[rng() % static_cast<std::uint64_t>(i + 1)]);
  Mat<double> S = Mat<double>::Zero(r, r);  // [r, r]
  for (Index i = 0; i < r; ++i) S(i, p[static_cast<std::size_t>(i)]) = (rng() & 1) ? 1.0 : -1.0;
  return S;
}

std::vector<Mat<double>> gauges_of(GaugeClass c, Rng& rng) {
  std::vector<Mat<double>> out;
  for (int i = 0; i < kGauges; ++i)
    out.push_back(c == GaugeClass::orthogonal ? sample_orthogonal<double>(rng, kR) : signed_permutation(rng, kR));
  return out;
}

}  // namespace

TEST_CASE("every update rule's represented motion is invariant under its declared gauges, and only those",
          "[update][table]") {
  for (const RuleRow& row : kRuleTable) {
    INFO("rule " << row.name << " (" << row.invariance << ")");
    Rng rng(2024 + static_cast<std::uint64_t>(row.kind));
    const Mat<double> A = gaussian<double>(rng, kM, kR), B = gaussian<double>(rng, kN, kR);  // [m, r], [n, r]
    const Mat<double> Mstar = gaussian<double>(rng, kM, kN);                                // [m, n]
    auto one_step = [&](const Mat<double>& a, const Mat<double>& b) {
      PairState<double> fresh;
      const PairIncrement<double> g = mloss_gradients(a, b, Mstar);
      const PairStep<double> s = step_pair(default_rule_options(row.kind), a, b, g.U_A, g.U_B, fresh);
      return PairIncrement<double>{s.a.U, s.b.U};
    };
    const auto same = expect_motion_invariant(one_step, A, B, gauges_of(row.motion_invariant_under, rng), kInvariantTol);
    INFO(same.msg);
    CHECK(same.ok);
    std::vector<Mat<double>> general;
    for (int i = 0; i < kGauges; ++i) general.push_back(sample_gl<double>(rng, kR, 10.0));
    const auto varies = expect_motion_invariant(one_step, A, B, general, kVariesAbove);
    CHECK(!varies.ok);
    CHECK(varies.worst > kVariesAbove);
    if (row.motion_invariant_under == GaugeClass::signed_permutation) {
      const auto rotated = expect_motion_invariant(one_step, A, B, gauges_of(GaugeClass::orthogonal, rng), kVariesAbove);
      CHECK(!rotated.ok);
    }
  }
}

}  // namespace GAUGELAB_TU
