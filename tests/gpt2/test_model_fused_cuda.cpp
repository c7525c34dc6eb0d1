// The whole model with our CUDA kernels (--ln-kernel, --lrm-kernel, --lm-head-kernel fused) against the same model
// on ATen's ops, on a card in bf16 autocast: the parity table tests each kernel alone; this row tests them together,
// as the model calls them (every block's residual add + LayerNorm, ln_f, the multiplied maps' W_eff, the LM head's
// cross-entropy over several chunks). CUDA only: skipped without a card.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <ATen/Context.h>
#include <ATen/ops/randint.h>

#include "gpt2/model/cuda_side.hpp"
#include "gpt2/model/kernel_path.hpp"
#include "gpt2/model/lm_head_loss.hpp"
#include "gpt2/model/model.hpp"
#include "gpt2/model/runtime.hpp"
#include "gpt2_test_helpers.hpp"
#include "gpt2_catch.hpp"  // last: see there
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab::gpt2;
using gaugelab::test::max_rel_diff;

namespace {

// Both paths form the same bf16 operands for every matmul (W_eff is bit for bit ATen's; the fused LayerNorm's y
// and ATen's float32 layer_norm cast to bf16 differ only where float32 sums in another order flip a bf16 rounding):
// the loss moves by far less than 1e-3 relative, which a wrong kernel (a row, a column, a scale) exceeds by orders.
constexpr double kLossTol = 1e-3;
// Each parameter's gradient, max-abs error relative to its largest entry: the backward's float32 reductions in
// another order and a few bf16 roundings flipped by them (2^-8 of an entry) on the way down the blocks.
constexpr double kGradTol = 2e-2;

struct Pass {
  double loss = 0;
  std::vector<std::string> names;
  std::vector<at::Tensor> grads;  // float64 on the CPU, in named_parameters order (undefined: not reached)
};

Pass forward_backward(GPT& model, const at::Tensor& idx, const at::Tensor& targets, KernelPath path,
                      c10::Device device) {
  model.set_ln_kernel(path);
  model.set_lrm_kernel(path);
  model.set_lm_head_kernel(path);
  LmHeadWorkspace ws;
  ws.chunk_rows = 1000;  // 4 chunks of the 12 x 256 rows, the last of 72
  ws.kernel = path;
  for (auto& [name, p] : model.named_parameters()) p.mutable_grad().reset();
  at::Tensor loss;
  {
    AutocastScope autocast(device, Precision::bf16);
    // What each path runs: the fused LayerNorm hands the next matmul bf16 (ATen's layer_norm float32), the W_eff
    // kernel returns bf16 (ATen's products float32), and the LM head's kernel runs where chosen.
    const bool fused = path == KernelPath::fused;
    REQUIRE(model.hidden(idx).scalar_type() == (fused ? at::kBFloat16 : at::kFloat));
    REQUIRE(model.h[0].c_attn.matmul_weight(path).scalar_type() == (fused ? at::kBFloat16 : at::kFloat));
    REQUIRE(fused_kernel_runs(ws.kernel, device, autocast_compute_dtype(device)) == fused);
    loss = model.loss(idx, targets, &ws);
  }
  loss.backward();
  Pass p;
  p.loss = loss.item<double>();
  for (auto& [name, t] : model.named_parameters()) {
    p.names.push_back(name);
    p.grads.push_back(t.grad().defined() ? t.grad().to(at::kCPU, at::kDouble) : at::Tensor());
  }
  return p;
}

}  // namespace

TEST_CASE("GPT-2 on CUDA in bf16: the fused kernels against ATen's ops, loss and every gradient",
          "[gpt2][kernels][cuda][alone]") {
  if (!cuda_present()) {
    WARN("SKIPPED: no CUDA device (the fused kernels run only there)");
    return;
  }
  if (!cuda_kernels_built()) {
    WARN("SKIPPED: the CUDA kernels are not built (no CUDA compiler when CMake ran)");
    return;
  }
  const c10::Device device(c10::kCUDA);
  // GPT-2 124M's width and vocabulary (every kernel's production dims: d 768, 12 heads, 50304 padded columns), two
  // blocks, 256 positions; as `gaugelab train` builds it (no biases, GELU erf, multipliers on every block map, here
  // spread around 1 so that W_eff is not W̄).
  ModelConfig c = ModelConfig::preset("gpt2");
  c.n_layer = 2;
  c.block_size = 256;
  c.bias = false;
  c.gelu = Gelu::erf;
  GPT model(c, 11);
  gaugelab::test::randomize_multipliers(model, 12);
  model.to(device);
  model.train(true);
  const auto ids = at::TensorOptions().dtype(at::kLong);
  const at::Tensor idx = at::randint(c.vocab_size, {12, 256}, ids).to(device);
  const at::Tensor targets = at::randint(c.vocab_size, {12, 256}, ids).to(device);

  const Pass fused = forward_backward(model, idx, targets, KernelPath::fused, device);
  const Pass aten = forward_backward(model, idx, targets, KernelPath::aten, device);
  INFO("loss fused " << fused.loss << ", aten " << aten.loss);
  CHECK(std::abs(fused.loss - aten.loss) / std::abs(aten.loss) <= kLossTol);
  REQUIRE(fused.grads.size() == aten.grads.size());
  double worst = 0;
  std::string worst_name;
  for (std::size_t i = 0; i < fused.grads.size(); ++i) {
    INFO("parameter " << fused.names[i]);
    REQUIRE(fused.grads[i].defined() == aten.grads[i].defined());
    if (!aten.grads[i].defined()) continue;
    const double e = max_rel_diff(fused.grads[i], aten.grads[i]);
    if (e > worst) worst = e, worst_name = fused.names[i];
  }
  INFO("largest gradient difference " << worst << " (" << worst_name << ")");
  CHECK(worst <= kGradTol);
}

}  // namespace GAUGELAB_TU
