// The model <-> core bridge of inspect (gpt2/inspect/layer_tensors.hpp, gpt2/inspect/head_loader.hpp): extracted heads
// agree with the model's own attention, the tensor twins agree with the core's group action, and the
// checkpoint head loader's errors are one line.
#include <fstream>

#include <ATen/core/grad_mode.h>
#include <ATen/ops/embedding.h>
#include <ATen/ops/layer_norm.h>
#include <ATen/ops/randint.h>

#include "core/gauge_sampling.hpp"
#include "gpt2/inspect/head_loader.hpp"
#include "gpt2/inspect/layer_tensors.hpp"
#include "gpt2/inspect/transforms.hpp"
#include "gpt2/model/interchange.hpp"
#include "inspect_helpers.hpp"
#include "tests/gpt2/gpt2_catch.hpp"  // last: see there
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab::gpt2;
namespace core = gaugelab::core;
namespace test = gaugelab::test;

namespace {

// Float64 model vs float64 core on the same matrices: only summation order differs (~1e-15 relative);
// 1e-10 leaves room for the gauge's condition number and the softmax.
constexpr double kF64Tol = 1e-10;

double rel(const core::Mat<double>& a, const core::Mat<double>& b) {
  return (a - b).cwiseAbs().maxCoeff() / b.cwiseAbs().maxCoeff();
}

at::Tensor tokens(std::int64_t rows, std::int64_t len, std::uint64_t seed) {
  auto g = at::make_generator<at::CPUGeneratorImpl>(seed);
  return at::randint(test::nano_config().vocab_size, {rows, len}, g, at::TensorOptions().dtype(at::kLong));
}

// Head h's term of layer l's attention output computed by the model's own pieces (its packed c_attn map,
// causal_attention, the effective W_O columns of the head), for inputs x [1, T, d]: [T, d] float64.
core::Mat<double> model_head_output(const GPT& m, std::int64_t l, std::int64_t h, const at::Tensor& x) {
  const Block& b = m.h[static_cast<std::size_t>(l)];
  const std::int64_t d = m.config().n_embd, H = m.config().n_head, dh = m.config().head_dim(), T = x.size(1);
  const at::Tensor qkv = b.c_attn.forward(x);  // [1, T, 3d]
  auto heads = [&](std::int64_t part) { return qkv.narrow(2, part * d, d).view({1, T, H, dh}).transpose(1, 2); };
  const at::Tensor y = causal_attention(heads(0), heads(1), heads(2), 0.0).select(1, h).squeeze(0);  // [T, dh]
  const at::Tensor wo = b.attn_proj.effective_weight().narrow(1, h * dh, dh);                        // [d, dh]
  return to_mat(y.matmul(wo.t()));
}

}  // namespace

TEST_CASE("extracted heads reproduce the model's own attention, multipliers merged", "[inspect]") {
  auto m = test::small_model(11);
  convert_parameters(*m, at::kDouble);
  at::NoGradGuard no_grad;
  const at::Tensor idx = tokens(1, 20, 3);
  const std::vector<core::Mat<double>> xs = attention_inputs(*m, idx);  // [20, d] per layer
  REQUIRE(xs.size() == 2);
  // Layer 0's input is ln_1(wte[idx] + wpe), computed here directly.
  const at::Tensor x0 = at::layer_norm(at::embedding(m->wte, idx).add(m->wpe.narrow(0, 0, 20)), {64}, m->h[0].ln_1_weight,
                                       m->h[0].ln_1_bias, m->config().layer_norm_eps);
  CHECK(rel(xs[0], to_mat(x0.squeeze(0))) <= kF64Tol);
  for (std::int64_t l = 0; l < 2; ++l) {
    const core::AttentionLayer<double> layer = attention_layer(*m, l);
    const at::Tensor x = to_tensor(xs[static_cast<std::size_t>(l)]).unsqueeze(0);
    for (std::int64_t h = 0; h < 2; ++h)
      CHECK(rel(core::head_output(core::head(layer, h), xs[static_cast<std::size_t>(l)], {true}), model_head_output(*m, l, h, x)) <=
            kF64Tol);
  }
}

TEST_CASE("the tensor twins of the layer gauge action agree with the core", "[inspect]") {
  auto m = test::small_model(12);
  convert_parameters(*m, at::kDouble);
  core::Rng rng(9);
  for (std::int64_t l = 0; l < 2; ++l) {
    const core::AttentionLayer<double> before = attention_layer(*m, l);
    core::LayerGauge<double> g = inspect::random_valid_gauge(rng, 2, 32, 32, 0.3);
    g.perm = {1, 0};
    apply_layer_gauge(*m, l, g);
    const core::AttentionLayer<double> want = core::apply_layer_gauge(before, g), got = attention_layer(*m, l);
    CHECK(rel(got.W_q, want.W_q) <= kF64Tol);
    CHECK(rel(got.W_k, want.W_k) <= kF64Tol);
    CHECK(rel(got.W_v, want.W_v) <= kF64Tol);
    CHECK(rel(got.W_o, want.W_o) <= kF64Tol);
    CHECK(rel(got.b_q, want.b_q) <= kF64Tol);
    CHECK(rel(got.b_k, want.b_k) <= kF64Tol);
    CHECK(rel(got.b_v, want.b_v) <= kF64Tol);
  }
}

TEST_CASE("snapshot and restore bring every parameter back", "[inspect]") {
  auto m = test::small_model(13);
  const std::vector<at::Tensor> saved = snapshot(*m);
  const core::AttentionLayer<double> before = attention_layer(*m, 1);
  core::Rng rng(4);
  inspect::apply_invalid(*m, inspect::InvalidFamily::asym_qk, rng, 10.0);
  CHECK(rel(attention_layer(*m, 1).W_q, before.W_q) > 1e-2);
  restore(*m, saved);
  CHECK(rel(attention_layer(*m, 1).W_q, before.W_q) == 0.0);
}

TEST_CASE("load_checkpoint_head returns the head effective matrices and bad input is one line", "[inspect]") {
  const std::string ck = test::small_checkpoint("head_loader", 14);
  auto m = read_model_dir(ck, c10::Device(c10::kCPU), ModelDirKinds::checkpoint).model;
  const core::AttentionHead<double> want = core::head(attention_layer(*m, 1), 1);
  const core::AttentionHead<double> got = load_checkpoint_head(ck, 1, 1);
  CHECK(got.W_q == want.W_q);
  CHECK(got.W_o == want.W_o);
  CHECK(got.b_v == want.b_v);
  CHECK(got.W_q.rows() == 64);
  CHECK(got.W_q.cols() == 32);
  CHECK(got.W_o.rows() == 32);

  auto one_line = [](auto&& f, const std::string& needle) {
    try {
      f();
    } catch (const std::runtime_error& e) {
      const std::string msg = e.what();
      INFO(msg);
      CHECK(msg.find('\n') == std::string::npos);
      CHECK(msg.find(needle) != std::string::npos);
      return;
    }
    FAIL("no std::runtime_error thrown");
  };
  one_line([&] { load_checkpoint_head(ck, 2, 0); }, "layer 2");
  one_line([&] { load_checkpoint_head(ck, 0, -1); }, "head -1");
  one_line([&] { load_checkpoint_head(ck + "/missing", 0, 0); }, "missing");
  const std::string bad = test::inspect_scratch("head_loader_bad");
  std::ofstream(bad + "/config.json") << "{ not json";
  one_line([&] { load_checkpoint_head(bad, 0, 0); }, "config.json");
}

TEST_CASE("load_checkpoint_head reads a Hugging Face export the same as our checkpoint", "[inspect]") {
  // Export merges the multipliers into float32 Conv1D weights: the same effective matrices up to one
  // float32 rounding of each product (2^-24 relative, with a few ulps of headroom).
  constexpr double kExportRounding = 1e-6;
  const std::string ck = test::small_checkpoint("head_loader_hf", 15);
  auto m = read_model_dir(ck, c10::Device(c10::kCPU), ModelDirKinds::checkpoint).model;
  const std::string hf = test::inspect_scratch("head_loader_hf_export");
  export_hf(*m, hf, Vocabulary{});
  for (std::int64_t h = 0; h < 2; ++h) {
    const core::AttentionHead<double> a = load_checkpoint_head(ck, 0, h), b = load_checkpoint_head(hf, 0, h);
    CHECK(rel(b.W_q, a.W_q) <= kExportRounding);
    CHECK(rel(b.W_k, a.W_k) <= kExportRounding);
    CHECK(rel(b.W_v, a.W_v) <= kExportRounding);
    CHECK(rel(b.W_o, a.W_o) <= kExportRounding);
    CHECK(rel(b.b_q, a.b_q) <= kExportRounding);
  }
}

}  // namespace GAUGELAB_TU
