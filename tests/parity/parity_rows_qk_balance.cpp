// The effective Q/K imbalance and the effective-norm GaugeFix (gpt2/train/gaugefix.hpp, condition Beff)
// against the core's reference (core/qk_balance.hpp): ρ = log(n_Q/n_K) per layer and head from the raw
// parameters (W_eff = diag(r)·W̄·diag(c) formed in float64 by core::effective_weight), and the fix's g.
#include <algorithm>
#include <memory>
#include <vector>

#include <ATen/core/grad_mode.h>

#include "core/lrm_gauge.hpp"
#include "core/qk_balance.hpp"
#include "gpt2/train/gaugefix.hpp"
#include "tests/gpt2/gpt2_test_helpers.hpp"
#include "tests/parity/parity_support.hpp"
#include "support/unity_tu.hpp"

namespace gaugelab::parity {

namespace GAUGELAB_TU {  // this file's helpers: each file of a unity batch has its own (support/unity_tu.hpp)
namespace {

// float32 norms (sums of ~d²/H squares, relative ~1e-7 each) and a log: ~1e-6 absolute on O(1) values;
// a head's rows taken from the wrong block, or a missing column multiplier, err by O(1e-1).
constexpr double kNormAgreement = 1e-5;

std::unique_ptr<gpt2::GPT> skewed(std::uint64_t seed, c10::Device device) {
  auto m = std::make_unique<gpt2::GPT>(test::nano_config(), seed);
  test::randomize_multipliers(*m, seed + 1);
  test::randomize_biases_norms(*m, seed + 2);
  {
    at::NoGradGuard no_grad;
    for (gpt2::Block& b : m->h) b.c_attn.groups[0].c.mul_(2.0);  // c_Q: an imbalance the row multipliers do not see
  }
  m->to(device);
  return m;
}

// W_eff of group `g` (0: Q, 1: K) [d, d] in float64 from the raw parameters.
core::Mat<double> effective(const gpt2::Block& b, int g) {
  const gpt2::LrmLinear::Group& grp = b.c_attn.groups[static_cast<std::size_t>(g)];
  const core::Mat<double> wbar = gpt2::to_mat(g == 0 ? b.w_q() : b.w_k());
  return core::effective_weight<double>(gpt2::to_vec(grp.r), wbar, gpt2::to_vec(grp.c));
}

double log_ratio_and_fix(c10::Device device) {
  auto m = skewed(71, device);
  const std::int64_t H = m->config().n_head;
  const at::Tensor rho = gpt2::qk_effective_log_ratio(*m);  // [L, H]
  std::vector<core::Vec<double>> want_g;
  double err = 0, largest = 0;
  for (std::size_t l = 0; l < m->h.size(); ++l) {
    const core::Mat<double> wq = effective(m->h[l], 0), wk = effective(m->h[l], 1);
    const core::Vec<double> want = core::qk_effective_log_ratio(wq, wk, H);
    err = std::max(err, (gpt2::to_vec(rho[static_cast<std::int64_t>(l)]) - want).cwiseAbs().maxCoeff());
    largest = std::max(largest, want.cwiseAbs().maxCoeff());
    want_g.push_back(core::qk_balance_gauge(wq, wk, H, 1e-12));
  }
  require_side(largest > 0.3, "the imbalance is not visible: max |rho| <= 0.3");
  const at::Tensor g = gpt2::gauge_fix_effective(*m, 1e-12);  // [L, H]
  for (std::size_t l = 0; l < m->h.size(); ++l)
    err = std::max(err, (gpt2::to_vec(g[static_cast<std::int64_t>(l)]) - want_g[l]).cwiseAbs().maxCoeff());
  return err;
}

}  // namespace
}  // namespace GAUGELAB_TU

std::vector<ParityRow> qk_balance_rows() {
  using namespace GAUGELAB_TU;
  return {
      {"gpt2::qk_effective_log_ratio, gpt2::gauge_fix_effective (g)", "core::qk_effective_log_ratio, core::qk_balance_gauge",
       "nano L=2 H=2 d=64, W_eff = diag(r) W̄ diag(c) [d, d] per Q and K, rho and g [L, H] (max-abs)", "float32 vs float64",
       kNormAgreement,
       "float32 head norms (sums of d²/H squares, ~1e-7 relative each) and a log or a square root: ~1e-6 on O(1) "
       "values; rows of the wrong head or a missing column multiplier err by O(1e-1)",
       &log_ratio_and_fix},
  };
}

}  // namespace gaugelab::parity
