// Emulated bf16's rounding op (gpt2/model/bf16_round.hpp): its forward against LibTorch's cast to bf16 and back,
// value for value, on the cases where rounding is delicate; its backward rounds the incoming gradient; the model's
// linear map under emulation is a bf16 GEMM's arithmetic.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <ATen/ops/from_blob.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/scaled_dot_product_attention.h>

#include "core/update_bf16.hpp"
#include "gpt2/model/bf16_round.hpp"
#include "gpt2/model/lrm.hpp"
#include "gpt2/model/runtime.hpp"
#include "gpt2_catch.hpp"  // last: see there
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab::gpt2;

namespace {

// The cast round trip, the definition the op must match.
at::Tensor cast_round_trip(const at::Tensor& x) { return x.to(at::kBFloat16).to(at::kFloat); }

// Element for element equal, a NaN matching a NaN (the two may carry different payloads).
bool same_values(const at::Tensor& a, const at::Tensor& b) {
  const at::Tensor ac = a.contiguous(), bc = b.contiguous();
  if (ac.sizes() != bc.sizes()) return false;
  const float* pa = ac.data_ptr<float>();
  const float* pb = bc.data_ptr<float>();
  for (std::int64_t i = 0; i < ac.numel(); ++i) {
    if (std::isnan(pa[i]) && std::isnan(pb[i])) continue;
    if (std::memcmp(pa + i, pb + i, sizeof(float)) != 0) return false;
  }
  return true;
}

// Values where rounding to bf16 (8 significant bits) is delicate: exact ties both ways (to even), just above and
// below a tie, the largest finite float (rounds to infinity), infinities, NaN, signed zero, subnormals.
at::Tensor delicate_values() {
  auto bits = [](std::uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
  };
  std::vector<float> v = {
      1.0f, -1.0f, 0.0f, -0.0f, 1.00390625f /* 1 + 2^-8: a tie, rounds down to even */,
      1.01171875f /* 1 + 3·2^-8: a tie, rounds up to even */, bits(0x3F808001u) /* just above a tie */,
      bits(0x3F807FFFu) /* just below */, std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),
      std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
      std::numeric_limits<float>::quiet_NaN(), bits(0x7F800001u) /* a signalling NaN the carry would make inf */,
      bits(0xFF80FFFFu), std::numeric_limits<float>::denorm_min(), bits(0x00018000u) /* a subnormal tie */,
      bits(0x007FFFFFu) /* the largest subnormal: rounds to the smallest normal */, 3.1415927f, -2.7182817e-20f,
      6.5e4f, 1e-38f};
  return at::from_blob(v.data(), {static_cast<std::int64_t>(v.size())}, at::kFloat).clone();
}

}  // namespace

TEST_CASE("bf16 rounding equals the cast to bf16 and back, value for value", "[gpt2][bf16]") {
  const at::Tensor d = delicate_values();
  CHECK(same_values(round_to_bf16(d), cast_round_trip(d)));
  // Many ordinary values, contiguous (one pass, several parallel tasks) and a transposed view (the cast path).
  const at::Tensor x = at::randn({300, 257}).mul(10);
  CHECK(same_values(round_to_bf16(x), cast_round_trip(x)));
  CHECK(same_values(round_to_bf16(x.t()), cast_round_trip(x.t())));
  CHECK(!round_to_bf16(x).equal(x));  // it does round (randn values are not bf16 numbers)
  at::Tensor y = x.clone();
  round_to_bf16_(y);
  CHECK(same_values(y, cast_round_trip(x)));
}

TEST_CASE("bf16 rounding equals the core's reference rounding on the same values", "[gpt2][bf16]") {
  // core::round_to_bf16 (core/update_bf16.hpp) is the one definition the toys and Muon's emulation use; the tensor
  // op's bit arithmetic must give the same value for every input, the delicate ones included.
  for (const at::Tensor& x : {delicate_values(), at::randn({64, 33}).mul(10)}) {
    const at::Tensor r = round_to_bf16(x).contiguous(), xc = x.contiguous();
    const float* pr = r.data_ptr<float>();
    const float* px = xc.data_ptr<float>();
    for (std::int64_t i = 0; i < xc.numel(); ++i) {
      const double ref = gaugelab::core::round_to_bf16(static_cast<double>(px[i]));
      INFO("input " << px[i] << ", op " << pr[i] << ", core " << ref);
      if (std::isnan(ref)) {
        CHECK(std::isnan(pr[i]));
      } else {
        CHECK(static_cast<double>(pr[i]) == ref);
        CHECK(std::signbit(pr[i]) == std::signbit(ref));
      }
    }
  }
}

TEST_CASE("the rounding op rounds forward and rounds the incoming gradient backward", "[gpt2][bf16]") {
  const at::Tensor x = at::randn({5, 7}).requires_grad_(true);
  const at::Tensor g = at::randn({5, 7});  // not bf16 numbers
  const at::Tensor y = bf16_round(x);
  CHECK(same_values(y.detach(), cast_round_trip(x.detach())));
  y.backward(g);
  CHECK(same_values(x.grad(), cast_round_trip(g)));
  CHECK(!x.grad().equal(g));
  // Emulation off (no scope): emulate_bf16 is the identity and keeps the graph as it was.
  CHECK(!bf16_emulation_enabled());
  CHECK(emulate_bf16(x).is_same(x));
}

TEST_CASE("an emulated linear map is a bf16 GEMM's arithmetic forward and backward", "[gpt2][bf16]") {
  LrmLinear lin(16, 8, {{"", LrmMode::row_column}}, true);
  lin.weight.normal_(0, 0.3);
  lin.bias.normal_(0, 0.3);
  lin.groups[0].r.uniform_(0.5, 1.5);
  for (at::Tensor* t : {&lin.weight, &lin.bias, &lin.groups[0].r, &lin.groups[0].c}) t->requires_grad_(true);
  const at::Tensor x = at::randn({4, 16}).requires_grad_(true);
  const at::Tensor g = at::randn({4, 8});
  at::Tensor y;
  {
    AutocastScope scope(c10::Device(c10::kCPU), Precision::bf16_emulated);
    CHECK(bf16_emulation_enabled());
    y = lin.forward(x);
  }
  CHECK(!bf16_emulation_enabled());  // the scope restores what it found
  y.backward(g);
  // The same by hand: R(R(x)·R(W_eff)ᵀ + R(b)), dx = R(R(g)·R(W_eff)). float32 sums of bf16 products agree with the
  // op's own to float32 rounding before the final rounding, so they may differ by one bf16 ulp where a sum lies
  // within float32 round-off of a bf16 tie; at these sizes none does.
  const at::Tensor w_eff = lin.effective_weight().detach();  // [8, 16]
  const at::Tensor rb = cast_round_trip(lin.bias.detach()), rg = cast_round_trip(g);
  CHECK(same_values(y.detach(), cast_round_trip(at::linear(cast_round_trip(x.detach()), cast_round_trip(w_eff), rb))));
  CHECK(same_values(x.grad(), cast_round_trip(rg.mm(cast_round_trip(w_eff)))));
  CHECK(same_values(lin.bias.grad(), cast_round_trip(rg.sum(0))));
}

TEST_CASE("emulated attention follows the CPU bf16 attention kernel, output and gradients", "[gpt2][bf16]") {
  const std::int64_t B = 4, H = 4, T = 64, dh = 16;  // the tiny configuration's heads
  const at::Tensor q = cast_round_trip(at::randn({B, H, T, dh})), k = cast_round_trip(at::randn({B, H, T, dh}));
  const at::Tensor v = cast_round_trip(at::randn({B, H, T, dh})), dO = cast_round_trip(at::randn({B, H, T, dh}));
  // Native: bf16 operands through ATen's fused attention (the kernel autocast runs), and its backward.
  std::vector<at::Tensor> nat = {q.to(at::kBFloat16).requires_grad_(true), k.to(at::kBFloat16).requires_grad_(true),
                                 v.to(at::kBFloat16).requires_grad_(true)};
  const at::Tensor o_nat = at::scaled_dot_product_attention(nat[0], nat[1], nat[2], {}, 0.0, true);
  o_nat.backward(dO.to(at::kBFloat16));
  // Float32 (the distance emulation must shrink) and the emulation, each with its gradients.
  auto run = [&](bool emulated) {
    std::vector<at::Tensor> in = {q.clone().requires_grad_(true), k.clone().requires_grad_(true),
                                  v.clone().requires_grad_(true)};
    const at::Tensor o =
        emulated ? bf16_round(emulated_bf16_attention(bf16_round(in[0]), bf16_round(in[1]), bf16_round(in[2])))
                 : at::scaled_dot_product_attention(in[0], in[1], in[2], {}, 0.0, true);
    o.backward(dO);
    return std::vector<at::Tensor>{o.detach(), in[0].grad(), in[1].grad(), in[2].grad()};
  };
  const std::vector<at::Tensor> f32 = run(false), emu = run(true);
  const std::vector<at::Tensor> ref = {o_nat.detach().to(at::kFloat), nat[0].grad().to(at::kFloat),
                                       nat[1].grad().to(at::kFloat), nat[2].grad().to(at::kFloat)};
  // Measured on the development machine: the output 15x closer to the kernel's than float32's, dQ ~10x, dK and dV
  // ~2x (their sums run over the kernel's query blocks in another order). The bounds leave a factor ~2-3 of that.
  const double at_least[] = {5.0, 3.0, 1.5, 1.5};
  const char* names[] = {"o", "dq", "dk", "dv"};
  for (int i = 0; i < 4; ++i) {
    const double d_emu = (emu[i] - ref[i]).abs().mean().item<double>();
    const double d_f32 = (f32[i] - ref[i]).abs().mean().item<double>();
    INFO(names[i] << ": mean |emulated - native| " << d_emu << ", mean |fp32 - native| " << d_f32);
    CHECK(d_f32 > 0);
    CHECK(d_emu * at_least[i] <= d_f32);
  }
}

}  // namespace GAUGELAB_TU
