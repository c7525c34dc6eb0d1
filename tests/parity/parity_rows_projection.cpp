// The tensor gradient projection (gpt2/model/head_projection.hpp) against the core's reference
// (core/gauge_lie.hpp: head_horizontal_projection, Remark 51; head_horizontal_projection_approx, Alg. 2)
// on the same inputs, head by head, with and without biases; the exact result is also orthogonal to
// every orbit tangent. Moved here from tests/gpt2/test_head_projection.cpp (which keeps the refusals
// and the projected optimizer step).
#include <algorithm>
#include <cmath>

#include <ATen/ops/randn.h>

#include "core/gauge_lie.hpp"
#include "gpt2/model/head_projection.hpp"
#include "tests/gpt2/projection_layer.hpp"
#include "tests/parity/parity_support.hpp"
#include "support/unity_tu.hpp"

namespace gaugelab::parity {

namespace GAUGELAB_TU {  // this file's helpers: each file of a unity batch has its own (support/unity_tu.hpp)
namespace {

// float64 throughout on matrices of O(1) entries and size ≤ 33: both implementations agree to ~1e-13;
// a wrong block, sign or transpose shows at O(1).
constexpr double kTol = 1e-10;

at::Tensor on(const at::Tensor& t, c10::Device device) { return t.defined() ? t.to(device) : at::Tensor(); }

double max_block_diff(const core::AttentionHead<double>& a, const core::AttentionHead<double>& b, bool bias) {
  double m = std::max({(a.W_q - b.W_q).cwiseAbs().maxCoeff(), (a.W_k - b.W_k).cwiseAbs().maxCoeff(),
                       (a.W_v - b.W_v).cwiseAbs().maxCoeff(), (a.W_o - b.W_o).cwiseAbs().maxCoeff()});
  if (bias)
    m = std::max({m, (a.b_q - b.b_q).cwiseAbs().maxCoeff(), (a.b_k - b.b_k).cwiseAbs().maxCoeff(),
                  (a.b_v - b.b_v).cwiseAbs().maxCoeff()});
  return m;
}

// Was TEST_CASE "the tensor gradient projection equals the core's, head by head" (one row per mode; the
// seeds 1..10 as there: case c, mode m (exact 0, approx 1) drew seed 1 + 2c + m).
double projection_error(gpt2::GradProjection mode, c10::Device device) {
  struct Case {
    std::int64_t d, heads;
    bool bias;
  };
  const Case cases[] = {{8, 1, false}, {8, 2, true}, {12, 3, false}, {16, 4, true}, {32, 2, true}};
  const std::uint64_t mode_offset = mode == gpt2::GradProjection::exact ? 0 : 1;
  double err = 0;
  std::uint64_t case_index = 0;
  for (const Case& c : cases) {
    const test::LayerTensors t = test::random_layer(c.d, c.bias, 1 + 2 * case_index++ + mode_offset);
    // Copies (clone: on the CPU, to() alone would alias the inputs the reference reads).
    at::Tensor g_attn = t.g_attn.clone().to(device), g_proj = t.g_proj.clone().to(device);
    at::Tensor g_battn = c.bias ? t.g_battn.clone().to(device) : at::Tensor();
    gpt2::project_layer_gradients(t.w_attn.to(device), on(t.b_attn, device), t.w_proj.to(device), g_attn, g_battn, g_proj,
                                  c.heads, mode);
    for (std::int64_t i = 0; i < c.heads; ++i) {
      const auto h = test::core_head(t.w_attn, t.b_attn, t.w_proj, i, c.heads);
      const auto g = test::core_head(t.g_attn, t.g_battn, t.g_proj, i, c.heads);
      const auto want = mode == gpt2::GradProjection::exact ? core::head_horizontal_projection(h, g)
                                                            : core::head_horizontal_projection_approx(h, g);
      const auto got = test::core_head(g_attn, g_battn, g_proj, i, c.heads);
      err = std::max(err, max_block_diff(got, want, c.bias));
      if (mode == gpt2::GradProjection::exact) {  // orthogonal to the orbit tangent of every basis element
        const std::int64_t dh = c.d / c.heads;
        for (std::int64_t a = 0; a < dh * dh; ++a)
          for (int sector = 0; sector < 2; ++sector) {
            core::HeadAlgebra<double> e{core::Mat<double>::Zero(dh, dh), core::Mat<double>::Zero(dh, dh)};
            (sector == 0 ? e.X : e.Y)(a / dh, a % dh) = 1;
            err = std::max(err, std::abs(core::head_inner(core::head_orbit_tangent(h, e), got)));
          }
      }
    }
  }
  return err;
}

}  // namespace
}  // namespace GAUGELAB_TU

std::vector<ParityRow> projection_rows() {
  using namespace GAUGELAB_TU;
  const char* shapes = "(d, H, bias) in (8,1,no) (8,2,yes) (12,3,no) (16,4,yes) (32,2,yes); c_attn [3d, d], c_proj [d, d]";
  const char* why =
      "float64 throughout on matrices of O(1) entries and size <= 33: both implementations agree to ~1e-13; "
      "a wrong block, sign or transpose shows at O(1)";
  return {
      {"gpt2::project_layer_gradients (exact)",
       "core::head_horizontal_projection per head, and orthogonality to every core::head_orbit_tangent", shapes,
       "float64 vs float64", kTol, why,
       [](c10::Device dev) { return projection_error(gpt2::GradProjection::exact, dev); }},
      {"gpt2::project_layer_gradients (approx)", "core::head_horizontal_projection_approx per head", shapes,
       "float64 vs float64", kTol, why,
       [](c10::Device dev) { return projection_error(gpt2::GradProjection::approx, dev); }},
  };
}

}  // namespace gaugelab::parity
