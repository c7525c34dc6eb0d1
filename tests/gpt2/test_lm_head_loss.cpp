// The fused LM-head cross-entropy against LibTorch's own linear + cross_entropy on the same inputs:
// loss and both gradients, with padding, ignored targets, several chunks, a scaled upstream gradient.
#include <ATen/core/Reduction.h>
#include <ATen/ops/cross_entropy_loss.h>
#include <ATen/ops/full.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>

#include "gpt2/model/lm_head_loss.hpp"
#include "gpt2/model/runtime.hpp"
#include "gpt2_test_helpers.hpp"
#include "gpt2_catch.hpp"  // last: see there
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab::gpt2;
using gaugelab::test::max_rel_diff;

namespace {
// Both sides are float32 with different summation orders (logsumexp vs log_softmax, chunked dW):
// differences of a few float32 ulps of the largest value.
constexpr double kFusedTol = 1e-5;

struct Case {
  at::Tensor x, w, t;
};
Case make_case(std::int64_t n, std::int64_t d, std::int64_t padded, std::int64_t vocab) {
  Case c;
  c.x = at::randn({n, d}).requires_grad_(true);
  c.w = at::randn({padded, d}).mul(0.3).requires_grad_(true);
  c.t = at::randint(vocab, {n}, at::TensorOptions().dtype(at::kLong));
  c.t.narrow(0, 2, 3).fill_(-1);  // ignored targets
  return c;
}
at::Tensor reference_loss(const Case& c, std::int64_t vocab) {
  const at::Tensor logits = at::linear(c.x, c.w).narrow(1, 0, vocab);
  return at::cross_entropy_loss(logits, c.t, {}, at::Reduction::Mean, -1);
}
}  // namespace

TEST_CASE("fused LM-head loss equals linear + cross_entropy, gradients included", "[gpt2][loss]") {
  const std::int64_t vocab = 300, padded = 320;
  for (std::int64_t chunk : {4096, 7}) {  // one chunk, and several with a ragged last one
    INFO("chunk rows " << chunk);
    Case c = make_case(40, 24, padded, vocab);
    LmHeadWorkspace ws;
    ws.chunk_rows = chunk;
    const at::Tensor ours = lm_head_loss(c.x, c.w, c.t, vocab, ws);
    ours.mul(3.0).backward();  // an upstream gradient other than 1
    const at::Tensor gx = c.x.grad().clone(), gw = c.w.grad().clone();
    c.x.mutable_grad().reset();
    c.w.mutable_grad().reset();
    const at::Tensor ref = reference_loss(c, vocab);
    ref.mul(3.0).backward();
    CHECK(ours.item<double>() == Approx(ref.item<double>()).epsilon(kFusedTol));
    CHECK(max_rel_diff(gx, c.x.grad()) < kFusedTol);
    CHECK(max_rel_diff(gw, c.w.grad()) < kFusedTol);
    CHECK(gw.narrow(0, vocab, padded - vocab).abs().max().item<double>() == 0.0);  // padded rows: no gradient
  }
}

TEST_CASE("fused LM-head loss: no gradient work without grad, bf16 autocast close to fp32", "[gpt2][loss][bf16]") {
  Case c = make_case(32, 16, 64, 50);
  LmHeadWorkspace ws;
  const double ref = reference_loss(c, 50).item<double>();
  {
    at::NoGradGuard no_grad;
    CHECK(lm_head_loss(c.x, c.w, c.t, 50, ws).item<double>() == Approx(ref).epsilon(kFusedTol));
  }
  double low;
  {
    AutocastScope scope(c10::Device(c10::kCPU), Precision::bf16);
    const at::Tensor l = lm_head_loss(c.x, c.w, c.t, 50, ws);
    CHECK(l.scalar_type() == at::kFloat);
    low = l.item<double>();
    l.backward();
  }
  // bf16 logits carry 2^-9 relative rounding: the loss moves by well under 1 %.
  CHECK(low == Approx(ref).epsilon(1e-2));
  CHECK(c.x.grad().scalar_type() == at::kFloat);
  CHECK(c.w.grad().scalar_type() == at::kFloat);
}

TEST_CASE("LM-head loss in bf16: dL/dW summed over many chunks in float32, not in a bf16 running sum",
          "[gpt2][loss][bf16]") {
  // 1024 equal rows in chunks of one row: 1024 equal bf16 products. A bf16 running sum stops growing near 256-512
  // of them (a product falls below half an ulp of the total), 50-75 % short; summed in float32 the total is exact
  // but for each product's one rounding (and the gradient's, before it), as for a single chunk.
  const std::int64_t n = 1024, d = 8, padded = 16, vocab = 13;
  const at::Tensor x0 = at::randn({1, d}).to(at::kBFloat16).to(at::kFloat);  // bf16-exact: autocast's cast is too
  const at::Tensor w0 = at::randn({padded, d}).mul(0.5).to(at::kBFloat16).to(at::kFloat);
  const at::Tensor t = at::full({n}, 4, at::TensorOptions().dtype(at::kLong));
  at::Tensor gw_bf16[2];
  for (const std::int64_t chunk : {std::int64_t{1}, n}) {
    const at::Tensor x = x0.expand({n, d}).clone().requires_grad_(true), w = w0.clone().requires_grad_(true);
    LmHeadWorkspace ws;
    ws.chunk_rows = chunk;
    {
      AutocastScope scope(c10::Device(c10::kCPU), Precision::bf16);
      lm_head_loss(x, w, t, vocab, ws).backward();
    }
    REQUIRE(w.grad().scalar_type() == at::kFloat);
    gw_bf16[chunk == 1 ? 0 : 1] = w.grad().to(at::kDouble);
  }
  const at::Tensor x = x0.expand({n, d}).to(at::kDouble), w = w0.to(at::kDouble).requires_grad_(true);
  at::cross_entropy_loss(at::linear(x, w).narrow(1, 0, vocab), t, {}, at::Reduction::Mean, -1).backward();
  // bf16 logits (2^-9) move the softmax by ~1 %, the gradient and each product are rounded once more (2^-9 each).
  CHECK(max_rel_diff(gw_bf16[1], w.grad()) < 2e-2);  // one chunk
  CHECK(max_rel_diff(gw_bf16[0], w.grad()) < 2e-2);  // 1024 chunks
  CHECK(max_rel_diff(gw_bf16[0], gw_bf16[1]) < 1e-2);
}

}  // namespace GAUGELAB_TU
