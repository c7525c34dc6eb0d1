// --cuda-graph on (train/step_graph.hpp): a step's micro-steps replayed from one captured graph must give what the
// eager micro-steps give, bit for bit: every micro-step's loss and every parameter's summed gradient, for the first
// replays after a capture, for replays on new batches, and after a recapture forced by a parameter whose storage moved.
// Tested at MicroStepGraph::run, the seam the training loop calls, without a training run. CUDA only: skipped without
// a card (where --cuda-graph on is refused in one line: tests/train/test_train_cli.cpp).
#include <cstdint>
#include <string>
#include <vector>

#include <ATen/Context.h>
#include <ATen/ops/randint.h>

#include "gpt2/model/cuda_side.hpp"
#include "gpt2/model/model.hpp"
#include "gpt2/model/runtime.hpp"
#include "gpt2/train/step_graph.hpp"
#include "tests/gpt2/gpt2_test_helpers.hpp"
#include "tests/gpt2/gpt2_catch.hpp"
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab;

namespace {

constexpr std::int64_t kAccum = 2, kB = 4, kT = 64;

// What a step's micro-steps leave: each one's loss and each parameter's .grad after the last (CPU copies).
struct StepResult {
  std::vector<at::Tensor> losses;
  std::vector<at::Tensor> grads;  // undefined where the loss does not reach the parameter
};

std::vector<at::Tensor> cpu_grads(const std::vector<at::Tensor>& params) {
  std::vector<at::Tensor> g;
  for (const at::Tensor& p : params) g.push_back(p.grad().defined() ? p.grad().to(at::kCPU) : at::Tensor());
  return g;
}

void clear_grads(const std::vector<at::Tensor>& params) {
  for (const at::Tensor& p : params) p.mutable_grad().reset();
}

// The training loop's eager micro-steps (loop.cpp): the loss under autocast, (loss / accumulation).backward().
StepResult eager_step(gpt2::GPT& model, const std::vector<at::Tensor>& params, const std::vector<at::Tensor>& batches) {
  clear_grads(params);
  StepResult r;
  for (std::int64_t m = 0; m < kAccum; ++m) {
    const at::Tensor& b = batches[static_cast<std::size_t>(m)];  // [B, T+1]
    at::Tensor loss;
    {
      gpt2::AutocastScope autocast(model.device(), gpt2::Precision::bf16);
      loss = model.loss(b.narrow(1, 0, kT), b.narrow(1, 1, kT));
    }
    (loss / static_cast<double>(kAccum)).backward();
    r.losses.push_back(loss.detach().to(at::kCPU));
  }
  r.grads = cpu_grads(params);
  return r;
}

StepResult graph_step(gpt2::MicroStepGraph& graph, const std::vector<at::Tensor>& params,
                      const std::vector<at::Tensor>& batches, std::int64_t step) {
  clear_grads(params);  // as zero_grad leaves them
  StepResult r;
  for (std::int64_t m = 0; m < kAccum; ++m) {
    const at::Tensor& b = batches[static_cast<std::size_t>(m)];
    const at::Tensor loss = graph.run(b.narrow(1, 0, kT), b.narrow(1, 1, kT), m == 0, step);
    REQUIRE(loss.defined());
    r.losses.push_back(loss.to(at::kCPU));
  }
  r.grads = cpu_grads(params);
  return r;
}

// Losses bit for bit; gradients equal entry by entry (at::equal: bit for bit but for the sign of a zero, which the
// graph's sum into zeroed buffers turns to +0 where the eager backward may hand over a -0).
void require_same(const StepResult& got, const StepResult& want, const std::vector<std::string>& names,
                  const std::string& what) {
  INFO(what);
  REQUIRE(got.losses.size() == want.losses.size());
  for (std::size_t m = 0; m < got.losses.size(); ++m) {
    INFO("micro-step " << m << ": loss " << got.losses[m].item<double>() << " vs " << want.losses[m].item<double>());
    CHECK(test::same_bits(got.losses[m], want.losses[m]));
  }
  REQUIRE(got.grads.size() == want.grads.size());
  for (std::size_t i = 0; i < got.grads.size(); ++i) {
    INFO("parameter " << names[i]);
    REQUIRE(got.grads[i].defined() == want.grads[i].defined());
    if (!want.grads[i].defined()) continue;
    CHECK(got.grads[i].scalar_type() == want.grads[i].scalar_type());
    CHECK(at::equal(got.grads[i], want.grads[i]));
  }
}

// SDPA limited to its math backend while alive (the fused attention kernels' backward may sum with atomics, so
// the eager step would not repeat bit for bit itself); the previous settings restored after.
class SdpaMathOnly {
 public:
  SdpaMathOnly()
      : flash_(ctx().userEnabledFlashSDP()), efficient_(ctx().userEnabledMemEfficientSDP()),
        math_(ctx().userEnabledMathSDP()), cudnn_(ctx().userEnabledCuDNNSDP()) {
    ctx().setSDPUseFlash(false);
    ctx().setSDPUseMemEfficient(false);
    ctx().setSDPUseCuDNN(false);
    ctx().setSDPUseMath(true);
  }
  ~SdpaMathOnly() {
    ctx().setSDPUseFlash(flash_);
    ctx().setSDPUseMemEfficient(efficient_);
    ctx().setSDPUseCuDNN(cudnn_);
    ctx().setSDPUseMath(math_);
  }
  SdpaMathOnly(const SdpaMathOnly&) = delete;
  SdpaMathOnly& operator=(const SdpaMathOnly&) = delete;

 private:
  static at::Context& ctx() { return at::globalContext(); }
  bool flash_, efficient_, math_, cudnn_;
};

}  // namespace

TEST_CASE("CUDA graph: a replayed micro-step equals the eager one bit for bit, also after a recapture",
          "[train][cuda_graph][cuda][alone]") {
  if (!gpt2::cuda_present()) {
    WARN("SKIPPED: no CUDA device (a CUDA graph replays GPU kernels)");
    return;
  }
  const c10::Device device(c10::kCUDA);
  for (const bool fused : {false, true}) {
    // ATen's ops with the plain-ops attention, then our kernels (where built) with SDPA's math backend.
    INFO((fused ? "the fused kernels, SDPA (math backend)" : "ATen's ops, the plain-ops attention"));
    const SdpaMathOnly sdpa_math;
    // GPT-2 124M's width (the kernels' production dims), two blocks, a 2000-token vocabulary; no biases, GELU erf,
    // multipliers spread around 1: as `gaugelab train` builds it, dropout 0 (what --cuda-graph on needs).
    gpt2::ModelConfig c = gpt2::ModelConfig::preset("gpt2");
    c.n_layer = 2;
    c.block_size = kT;
    c.vocab_size = 2000;
    c.bias = false;
    c.gelu = gpt2::Gelu::erf;
    gpt2::GPT model(c, 21);
    test::randomize_multipliers(model, 22);
    model.to(device);
    model.train(true);
    model.set_twice_differentiable(!fused);  // the plain-ops attention (and ATen's ops for every kernel)
    const gpt2::KernelPath path = fused ? gpt2::KernelPath::fused : gpt2::KernelPath::aten;
    model.set_ln_kernel(path);
    model.set_lrm_kernel(path);
    model.set_lm_head_kernel(path);
    std::vector<at::Tensor> params;
    std::vector<std::string> names;
    for (auto& [name, p] : model.named_parameters()) params.push_back(p), names.push_back(name);
    auto batches = [&](std::int64_t seed) {  // kAccum micro-batches [B, T+1] of token ids
      at::manual_seed(static_cast<std::uint64_t>(seed));
      std::vector<at::Tensor> b;
      for (std::int64_t m = 0; m < kAccum; ++m)
        b.push_back(at::randint(c.vocab_size, {kB, kT + 1}, at::TensorOptions().dtype(at::kLong)).to(device));
      return b;
    };
    const std::vector<at::Tensor> one = batches(31), two = batches(32);

    // The eager step must itself repeat bit for bit, or no graph could match it.
    const StepResult eager1 = eager_step(model, params, one);
    require_same(eager_step(model, params, one), eager1, names, "the eager step run twice");

    gpt2::MicroStepGraph graph(model, params, gpt2::Precision::bf16, kAccum);
    require_same(graph_step(graph, params, one, 1), eager1, names, "step 1: the capture's first replays");
    require_same(graph_step(graph, params, two, 2), eager_step(model, params, two), names,
                 "step 2: replays on other batches");
    require_same(graph_step(graph, params, one, 3), eager1, names, "step 3: the first batches again");

    // A hook that replaces a tensor: ln_1's gain in block 0 moves to new storage with new values. A replay on the
    // captured addresses would read the old storage (freed) and the old gain; the graph must capture again.
    {
      at::Tensor& gain = model.h[0].ln_1_weight;
      const void* before = gain.data_ptr();
      gain.set_data(gain.detach().mul(1.25));
      REQUIRE(gain.data_ptr() != before);
    }
    const StepResult moved = eager_step(model, params, one);
    INFO("loss before the move " << eager1.losses[0].item<double>() << ", after " << moved.losses[0].item<double>());
    REQUIRE(!at::equal(moved.losses[0], eager1.losses[0]));  // the new gain reaches the loss
    require_same(graph_step(graph, params, one, 4), moved, names, "step 4: after a recapture");
    require_same(graph_step(graph, params, two, 5), eager_step(model, params, two), names,
                 "step 5: the recaptured graph on other batches");
  }
}

}  // namespace GAUGELAB_TU
