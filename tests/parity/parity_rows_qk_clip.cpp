// QK-Clip on the model's tensors (gpt2/train/qk_clip.hpp, on the weights) against the core's reference
// (core/qk_clip.hpp): per layer, the Q and K row blocks of c_attn and their biases after the clip, and
// the core's clip applied to the same blocks before it, for a logit_max [L, H] with heads over tau,
// under it, and exactly at it.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ops/empty.h>
#include <ATen/ops/randn.h>

#include "core/qk_clip.hpp"
#include "gpt2/train/qk_clip.hpp"
#include "tests/gpt2/gpt2_test_helpers.hpp"
#include "tests/parity/parity_support.hpp"
#include "support/unity_tu.hpp"

namespace gaugelab::parity {

namespace GAUGELAB_TU {  // this file's helpers: each file of a unity batch has its own (support/unity_tu.hpp)
namespace {

// The tensor factor √(τ/S) is computed in float32 (a division and a square root, ~2 ulps) and multiplied
// into float32 weights (one more rounding): relative ~2e-7 per entry against float64 on the same values.
// A factor on the wrong head or a missing square root errs by O(1e-1).
constexpr double kFloatFactor = 1e-6;

// max |got − want| / max |want| over a block.
double rel(const core::Mat<double>& got, const core::Mat<double>& want) {
  return (got - want).cwiseAbs().maxCoeff() / want.cwiseAbs().maxCoeff();
}

double qk_clip_error(c10::Device device) {
  gpt2::ModelConfig c = test::nano_config();
  c.bias = true;
  auto m = std::make_unique<gpt2::GPT>(c, 61);
  test::randomize_multipliers(*m, 62);
  test::randomize_biases_norms(*m, 63);
  m->to(device);
  const std::int64_t L = c.n_layer, H = c.n_head;
  const double tau = 2.0;
  // logit_max [L, H] float32 on the CPU: head k (row-major) over tau when k % 3 == 0, under it when
  // k % 3 == 1, exactly tau when k % 3 == 2; distances exp(0.1 + |N(0, 1)|).
  auto gen = cpu_generator(64);
  const at::Tensor z = at::randn({L, H}, gen, at::TensorOptions().dtype(at::kFloat)).abs();
  at::Tensor lm = at::empty({L, H}, at::TensorOptions().dtype(at::kFloat));
  for (std::int64_t k = 0; k < L * H; ++k) {
    const double spread = std::exp(0.1 + z[k / H][k % H].item<double>());
    const double value = k % 3 == 0 ? tau * spread : k % 3 == 1 ? tau / spread : tau;
    lm[k / H][k % H].fill_(value);
  }
  std::vector<core::QkClipRows<double>> want;
  core::Index want_count = 0;
  for (std::int64_t l = 0; l < L; ++l) {
    const gpt2::Block& b = m->h[static_cast<std::size_t>(l)];
    const core::QkClipRows<double> before{gpt2::to_mat(b.w_q()), gpt2::to_mat(b.w_k()), gpt2::to_vec(b.b_q()),
                                          gpt2::to_vec(b.b_k())};
    const core::Vec<double> s_max = gpt2::to_vec(lm[l]);  // [H]
    want.push_back(core::qk_clip(before, s_max, tau));
    want_count += core::qk_clip_count(s_max, tau);
  }
  require_side(want_count > 0 && want_count < L * H, "logit_max needs heads both over and under tau");
  const std::int64_t clipped = gpt2::qk_clip(*m, lm.to(device), tau, gpt2::QkClipOn::weights);
  require_side(clipped == want_count, "gpt2::qk_clip reported " + std::to_string(clipped) + " heads clipped, the core " +
                                         std::to_string(want_count));
  double err = 0;
  for (std::int64_t l = 0; l < L; ++l) {
    const gpt2::Block& b = m->h[static_cast<std::size_t>(l)];
    const core::QkClipRows<double>& w = want[static_cast<std::size_t>(l)];
    err = std::max({err, rel(gpt2::to_mat(b.w_q()), w.W_q), rel(gpt2::to_mat(b.w_k()), w.W_k),
                    rel(gpt2::to_vec(b.b_q()), w.b_q), rel(gpt2::to_vec(b.b_k()), w.b_k)});
  }
  return err;
}

}  // namespace
}  // namespace GAUGELAB_TU

std::vector<ParityRow> qk_clip_rows() {
  using namespace GAUGELAB_TU;
  return {
      {"gpt2::qk_clip (on the weights)", "core::qk_clip (diag(f) on W_Q, W_K rows and b_Q, b_K)",
       "nano L=2 H=2 d=64 dh=32; W_Q W_K [d, d], b_Q b_K [d], logit_max [L, H], tau 2 (max-abs, relative)",
       "float32 vs float64", kFloatFactor,
       "the float32 factor sqrt(tau/S) (a division and a square root, ~2 ulps) times a float32 weight (one more "
       "rounding): relative ~2e-7 per entry; a factor on the wrong head or a missing square root errs by O(1e-1)",
       &qk_clip_error},
  };
}

}  // namespace gaugelab::parity
