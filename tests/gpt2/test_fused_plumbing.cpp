// The autograd plumbing around our CUDA kernels, on the CPU: the Functions of model/residual_layer_norm.cpp and
// model/lrm_weight_bf16.cpp run with the kernels' host transcriptions (tests/cuda/host_kernels.hpp, the kernel
// check's dry run: the same raw-pointer signatures as model/cuda/*_kernel.hpp), so what wraps the kernels (absent
// branch, bias, r or c; the flags and placeholders; the gradients' count, dtype and shape; saved tensors; an unused
// output) is exercised without a card, against ATen's ops and autograd. The kernels themselves are the parity
// table's and the kernel check's, on the card.
#include <cstdint>
#include <string>

#include <ATen/ops/layer_norm.h>
#include <ATen/ops/randn.h>

#include "gpt2/model/kernel_launch.hpp"
#include "gpt2/model/lrm_weight_bf16.hpp"
#include "gpt2/model/residual_layer_norm.hpp"
#include "gpt2/ops/lrm_weight.hpp"
#include "tests/cuda/host_kernels.hpp"
#include "tests/gpt2/gpt2_catch.hpp"
#include "tests/gpt2/gpt2_test_helpers.hpp"
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab;

namespace {

using gaugelab::kcheck::host::lrm_weight_backward;
using gaugelab::kcheck::host::lrm_weight_forward;
using gaugelab::kcheck::host::lrm_weight_scratch_floats;
using gaugelab::kcheck::host::residual_layer_norm_backward;
using gaugelab::kcheck::host::residual_layer_norm_forward;
using gaugelab::kcheck::host::residual_layer_norm_scratch_floats;

// CUDA's error codes the cases below return, by their cudaError_t names (the test build sees no CUDA header: the
// CUDA half names them, gpt2/model/cuda_side.hpp).
constexpr int kCudaErrorInvalidConfiguration = 9;
constexpr int kCudaErrorLaunchOutOfResources = 701;

// A backward that fails as a launch with a bad configuration does (cudaErrorInvalidConfiguration).
int ln_backward_fails(const float*, const float*, const float*, const void*, const float*, const float*, float*, void*,
                      float*, float*, float*, std::int64_t, std::int64_t, void*) {
  return kCudaErrorInvalidConfiguration;
}

const gpt2::AddLayerNormKernels kHostLn{&residual_layer_norm_forward, &residual_layer_norm_scratch_floats,
                                       &residual_layer_norm_backward};
const gpt2::LrmWeightKernels kHostLrm{&lrm_weight_forward, &lrm_weight_scratch_floats, &lrm_weight_backward};

double rel(const at::Tensor& a, const at::Tensor& b) { return test::max_rel_diff(a.to(at::kDouble), b.to(at::kDouble)); }

}  // namespace

TEST_CASE("fused add + LayerNorm's autograd plumbing, with host kernels: every variant against ATen", "[gpt2][kernels]") {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(71);
  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  const std::int64_t B = 3, T = 5, d = 24;
  for (const bool with_branch : {true, false}) {
    for (const bool with_bias : {true, false}) {
      for (const bool use_sum : {true, false}) {  // ln_f's sum is used by nothing: no gradient reaches it
        INFO("branch " << with_branch << ", bias " << with_bias << ", sum used " << use_sum);
        const at::Tensor x0 = at::randn({B, T, d}, gen, f32);
        const at::Tensor br0 = with_branch ? at::randn({B, T, d}, gen, f32).to(at::kBFloat16) : at::Tensor();
        const at::Tensor g0 = at::randn({d}, gen, f32).mul(0.2).add(1.0);
        const at::Tensor b0 = with_bias ? at::randn({d}, gen, f32).mul(0.1) : at::Tensor();
        const at::Tensor R = at::randn({B, T, d}, gen, f32).to(at::kBFloat16).to(at::kFloat);
        const at::Tensor S = at::randn({B, T, d}, gen, f32);
        auto leaves = [&] {
          auto leaf = [](const at::Tensor& t) { return t.defined() ? t.clone().requires_grad_(true) : t; };
          return std::vector<at::Tensor>{leaf(x0), leaf(br0), leaf(g0), leaf(b0)};
        };
        auto loss_of = [&](const gpt2::AddNorm& o) {
          at::Tensor l = o.y.to(at::kFloat).mul(R).sum();
          if (use_sum && with_branch) l = l.add(o.sum.mul(S).sum());
          return l;
        };
        const std::vector<at::Tensor> ours = leaves(), ref = leaves();
        const gpt2::AddNorm o = gpt2::add_layer_norm_with(ours[0], ours[1], ours[2], ours[3], 1e-5, kHostLn);
        const gpt2::AddNorm a = gpt2::add_layer_norm(ref[0], ref[1], ref[2], ref[3], 1e-5, gpt2::KernelPath::aten);
        CHECK(o.y.scalar_type() == at::kBFloat16);
        CHECK(o.y.sizes() == x0.sizes());
        CHECK(o.sum.sizes() == x0.sizes());
        CHECK(rel(o.sum, a.sum) == 0.0);    // the same float32 add
        CHECK(rel(o.y, a.y) <= 4e-3);       // y rounded to bf16 once
        loss_of(o).backward();
        loss_of(a).backward();
        CHECK(rel(ours[0].grad(), ref[0].grad()) <= 1e-5);
        CHECK(ours[0].grad().scalar_type() == at::kFloat);
        if (with_branch) {
          REQUIRE(ours[1].grad().defined());
          CHECK(ours[1].grad().scalar_type() == at::kBFloat16);
          CHECK(rel(ours[1].grad(), ref[1].grad()) <= 8e-3);
        }
        CHECK(rel(ours[2].grad(), ref[2].grad()) <= 1e-5);
        if (with_bias) CHECK(rel(ours[3].grad(), ref[3].grad()) <= 1e-5);
      }
    }
  }
}

TEST_CASE("fused add + LayerNorm's autograd plumbing, with host kernels: y unused, only the stream's gradient passes",
          "[gpt2][kernels]") {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(73);
  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  const at::Tensor x = at::randn({4, 16}, gen, f32).requires_grad_(true);
  const at::Tensor br = at::randn({4, 16}, gen, f32).to(at::kBFloat16).requires_grad_(true);
  const at::Tensor g = at::randn({16}, gen, f32).requires_grad_(true);
  const at::Tensor S = at::randn({4, 16}, gen, f32);
  const gpt2::AddNorm o = gpt2::add_layer_norm_with(x, br, g, at::Tensor(), 1e-5, kHostLn);
  o.sum.mul(S).sum().backward();
  REQUIRE(x.grad().defined());
  CHECK(rel(x.grad(), S) == 0.0);
  REQUIRE(br.grad().defined());
  CHECK(br.grad().scalar_type() == at::kBFloat16);
  CHECK(rel(br.grad(), S.to(at::kBFloat16)) == 0.0);
  CHECK(!g.grad().defined());  // γ does not reach the loss
}

TEST_CASE("fused W_eff's autograd plumbing, with host kernels: r, c, both, groups, the scalar s against ATen",
          "[gpt2][kernels]") {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(72);
  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  struct Case {
    std::int64_t out, in, groups;
    bool row, col, scalar;
  };
  for (const Case& k : {Case{12, 7, 1, true, true, false}, Case{12, 7, 3, true, true, false},
                        Case{12, 7, 1, true, false, false}, Case{12, 7, 1, false, true, false},
                        Case{12, 7, 3, false, true, true}}) {
    INFO("out " << k.out << " in " << k.in << " groups " << k.groups << " r " << k.row << " c " << k.col << " s "
                << k.scalar);
    const at::Tensor w0 = at::randn({k.out, k.in}, gen, f32);
    const at::Tensor r0 = k.scalar ? at::randn({1}, gen, f32).exp() : (k.row ? at::randn({k.out}, gen, f32).exp() : at::Tensor());
    const at::Tensor c0 = k.col ? (k.groups > 1 ? at::randn({k.groups, k.in}, gen, f32) : at::randn({k.in}, gen, f32)).exp()
                                : at::Tensor();
    const at::Tensor G = at::randn({k.out, k.in}, gen, f32).to(at::kBFloat16).to(at::kFloat);
    auto leaf = [](const at::Tensor& t) { return t.defined() ? t.clone().requires_grad_(true) : t; };
    const at::Tensor wo = leaf(w0), ro = leaf(r0), co = leaf(c0), wa = leaf(w0), ra = leaf(r0), ca = leaf(c0);
    auto row = [&](const at::Tensor& r) { return k.scalar ? r.expand({k.out}) : r; };
    const at::Tensor e = gpt2::lrm_effective_weight_with(wo, row(ro), co, kHostLrm);
    const at::Tensor ea = gpt2::lrm_effective_weight(wa, row(ra), ca);
    CHECK(e.scalar_type() == at::kBFloat16);
    CHECK(rel(e, ea.to(at::kBFloat16)) == 0.0);  // the same products in the same order, rounded once
    e.to(at::kFloat).mul(G).sum().backward();
    ea.mul(G).sum().backward();
    CHECK(rel(wo.grad(), wa.grad()) <= 1e-6);
    if (ro.defined()) CHECK(rel(ro.grad(), ra.grad()) <= 1e-5);
    if (co.defined()) CHECK(rel(co.grad(), ca.grad()) <= 1e-5);
  }
}

TEST_CASE("a failed kernel launch is one line naming the kernel, its shape and CUDA's error by name", "[gpt2][kernels]") {
  gpt2::check_launch(0, "k", {{"rows", 1}});  // success: nothing thrown
  std::string msg;
  try {
    gpt2::check_launch(kCudaErrorLaunchOutOfResources, "some kernel (k)", {{"out", 2304}, {"in", 768}});
  } catch (const std::runtime_error& e) {
    msg = e.what();
  }
  INFO(msg);
  CHECK(msg.rfind("some kernel (k) [out 2304, in 768] failed: cudaErrorLaunchOutOfResources (", 0) == 0);
  CHECK(msg.find("too many resources requested for launch, CUDA error 701)") != std::string::npos);  // CUDA's text
  CHECK(msg.find('\n') == std::string::npos);

  // Through the autograd Function: the backward's failure names the backward kernel and the rows x cols it had.
  const gpt2::AddLayerNormKernels failing{&residual_layer_norm_forward, &residual_layer_norm_scratch_floats,
                                          &ln_backward_fails};
  const at::Tensor x = at::ones({3, 5, 8}, at::TensorOptions().dtype(at::kFloat)).requires_grad_(true);
  const at::Tensor g = at::ones({8}, at::TensorOptions().dtype(at::kFloat));
  const gpt2::AddNorm o = gpt2::add_layer_norm_with(x, at::Tensor(), g, at::Tensor(), 1e-5, failing);
  msg.clear();
  try {
    o.y.to(at::kFloat).sum().backward();
  } catch (const std::exception& e) {  // autograd may wrap it (c10::Error): the kernel's line is in its text
    msg = e.what();
  }
  INFO(msg);
  CHECK(msg.find("add_layer_norm: the fused backward kernel (residual_layer_norm_backward) [rows 15, cols 8] failed: "
                 "cudaErrorInvalidConfiguration") != std::string::npos);
}

}  // namespace GAUGELAB_TU
