// GPT-2 model: multiplier counts, parameter groups, initialisation, forward pass properties,
// the multiplier merge, bf16 autocast.
#include <cmath>
#include <set>

#include <ATen/core/grad_mode.h>
#include <ATen/Context.h>
#include <ATen/ops/randint.h>

#include "gpt2/model/cuda_side.hpp"
#include "gpt2/model/model.hpp"
#include "gpt2/model/runtime.hpp"
#include "gpt2_test_helpers.hpp"
#include "gpt2_catch.hpp"  // last: see there
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab::gpt2;
using gaugelab::test::max_rel_diff;
using gaugelab::test::nano_config;
using gaugelab::test::randomize_multipliers;

TEST_CASE("default placement gives GPT-2 124M its 165,888 multipliers", "[gpt2][lrm]") {
  const ModelConfig c = ModelConfig::preset("gpt2");
  CHECK(c.multiplier_count() == 165888);
  GPT model(c, 0);  // the real tensors, not just the formula
  std::int64_t mult = 0;
  for (const ParamGroup& g : model.parameter_groups())
    if (g.role == ParamRole::multiplier_qk || g.role == ParamRole::multiplier_other)
      for (const auto& t : g.params) mult += t.numel();
  CHECK(mult == 165888);
  // 124,439,808 parameters in Hugging Face's count; ours adds the 47 padded vocabulary rows.
  CHECK(model.num_parameters(false) == 124439808 + (50304 - 50257) * 768);
}

TEST_CASE("multiplier counts follow the placement for every mode", "[gpt2][lrm]") {
  for (const char* spec : {"none", "all:scalar", "all:row", "all:column", "q:row,k:row", "lm_head:column",
                           "q:scalar,v:row+column,mlp_out:column"}) {
    ModelConfig c = nano_config();
    c.lrm = LrmPlacement::parse(spec);
    GPT model(c, 1);
    CHECK(model.num_parameters(true) - model.num_parameters(false) == c.multiplier_count());
    CHECK(LrmPlacement::parse(c.lrm.spec()).spec() == c.lrm.spec());
  }
}

TEST_CASE("parameter groups split matrices, Q/K row multipliers, other multipliers, biases, embeddings", "[gpt2]") {
  GPT model(nano_config(), 0);
  std::set<std::string> qk, other, mats, emb, bn;
  for (const ParamGroup& g : model.parameter_groups()) {
    auto& dst = g.role == ParamRole::multiplier_qk      ? qk
                : g.role == ParamRole::multiplier_other ? other
                : g.role == ParamRole::matrix           ? mats
                : g.role == ParamRole::embedding        ? emb
                                                        : bn;
    dst.insert(g.names.begin(), g.names.end());
    CHECK(g.name == param_role_name(g.role));
  }
  const std::set<std::string> qk_expected = {"h.0.attn.c_attn.r_q", "h.0.attn.c_attn.r_k", "h.1.attn.c_attn.r_q",
                                             "h.1.attn.c_attn.r_k"};
  CHECK(qk == qk_expected);
  CHECK(other.count("h.0.attn.c_attn.c_q") == 1);
  CHECK(other.count("h.1.attn.c_attn.r_v") == 1);
  CHECK(other.count("h.1.mlp.c_proj.c") == 1);
  CHECK(mats.size() == 2 * 4);  // c_attn, attn.c_proj, c_fc, mlp.c_proj per layer; tied head adds none
  CHECK(emb == std::set<std::string>({"wte.weight", "wpe.weight"}));
  CHECK(bn.count("ln_f.weight") == 1);
  CHECK(bn.count("h.0.attn.c_attn.bias") == 1);
}

TEST_CASE("initialisation is nanoGPT's and deterministic in the seed", "[gpt2]") {
  ModelConfig c = ModelConfig::preset("tiny");
  GPT a(c, 7), b(c, 7), other(c, 8);
  CHECK(a.h[2].c_fc.weight.equal(b.h[2].c_fc.weight));
  CHECK(!a.h[2].c_fc.weight.equal(other.h[2].c_fc.weight));
  // Sample standard deviations of 2^18..2^20 draws: within 2 % of the target (≈ 10 standard errors).
  constexpr double kStdTol = 0.02;
  CHECK(a.h[0].c_fc.weight.std().item<double>() == Approx(0.02).epsilon(kStdTol));
  CHECK(a.h[0].mlp_proj.weight.std().item<double>() == Approx(0.02 / std::sqrt(8.0)).epsilon(kStdTol));
  CHECK(a.h[0].attn_proj.weight.std().item<double>() == Approx(0.02 / std::sqrt(8.0)).epsilon(kStdTol));
  CHECK(a.wte.narrow(0, 0, c.vocab_size).std().item<double>() == Approx(0.02).epsilon(kStdTol));
  CHECK(a.wte.narrow(0, c.vocab_size, c.padded_vocab() - c.vocab_size).abs().max().item<double>() == 0.0);
  CHECK(a.h[1].c_attn.bias.abs().max().item<double>() == 0.0);
  CHECK(a.h[1].q().r.min().item<double>() == 1.0);
  CHECK(a.h[1].q().r.max().item<double>() == 1.0);
}

TEST_CASE("forward: shapes, float32 logits, loss near ln(vocab) at init, causality", "[gpt2]") {
  GPT model(nano_config(), 3);
  at::NoGradGuard no_grad;
  const at::Tensor idx = at::randint(nano_config().vocab_size, {2, 16}, at::TensorOptions().dtype(at::kLong));
  const at::Tensor logits = model.logits(idx);
  REQUIRE(logits.sizes() == at::IntArrayRef({2, 16, nano_config().vocab_size}));
  CHECK(logits.scalar_type() == at::kFloat);
  // Init logits of unrelated tokens have std σ ≈ 0.02·‖ln_f(x)‖ ≈ 0.16, so a token's loss is ln(V) + σ²/2 − z
  // with z ~ N(0, σ²). Over 8·64 = 512 tokens the mean is within 0.013 ± 0.007 of ln(V): 0.1 is > 10 standard
  // errors away. (Over the 32 tokens of `idx` it would be 0.013 ± 0.028, and CI once drew 0.1025.)
  const auto longs = at::TensorOptions().dtype(at::kLong);
  const double loss = model.loss(at::randint(nano_config().vocab_size, {8, 64}, longs),
                                 at::randint(nano_config().vocab_size, {8, 64}, longs)).item<double>();
  CHECK(std::abs(loss - std::log(static_cast<double>(nano_config().vocab_size))) < 0.1);
  at::Tensor changed = idx.clone();
  at::Tensor token = changed.select(0, 0).select(0, 10);
  token.fill_((token.item<std::int64_t>() + 1) % nano_config().vocab_size);
  const at::Tensor l2 = model.logits(changed);
  CHECK(l2.narrow(1, 0, 10).equal(logits.narrow(1, 0, 10)));       // the past never sees the future
  CHECK(!l2.narrow(1, 10, 6).equal(logits.narrow(1, 10, 6)));
  CHECK_THROWS(model.logits(at::randint(10, {1, nano_config().block_size + 1}, at::TensorOptions().dtype(at::kLong))));
}

TEST_CASE("gradients reach weights and every multiplier", "[gpt2][lrm]") {
  ModelConfig c = nano_config();
  c.lrm = LrmPlacement::parse("all:row+column,lm_head:column");
  GPT model(c, 4);
  const at::Tensor idx = at::randint(c.vocab_size, {2, 8}, at::TensorOptions().dtype(at::kLong));
  model.loss(idx, idx).backward();
  for (auto& [name, t] : model.named_parameters()) {
    INFO(name);
    REQUIRE(t.grad().defined());
    if (name != "wte.weight" && name.rfind("wpe", 0) != 0) CHECK(t.grad().abs().max().item<double>() > 0.0);
  }
}

TEST_CASE("merging multipliers into the weights leaves the logits unchanged", "[gpt2][lrm]") {
  // Bitwise for untied maps (the merged weight is the very tensor the forward formed); the tied head's
  // column/scalar multipliers move into ln_f, a reassociation costing float32 rounding only.
  constexpr double kMergeTol = 1e-6;
  for (const char* spec : {"default", "all:scalar,lm_head:scalar", "all:row+column,lm_head:column"}) {
    ModelConfig c = nano_config();
    c.lrm = LrmPlacement::parse(spec);
    GPT model(c, 5);
    randomize_multipliers(model, 11);
    at::NoGradGuard no_grad;
    const at::Tensor idx = at::randint(c.vocab_size, {2, 12}, at::TensorOptions().dtype(at::kLong));
    const at::Tensor before = model.logits(idx);
    model.merge_multipliers();
    model.visit([](const std::string& name, at::Tensor& t, ParamRole role) {
      if (role == ParamRole::multiplier_qk || role == ParamRole::multiplier_other) {
        INFO(name);
        CHECK(t.eq(1).all().item<bool>());
      }
    });
    const at::Tensor after = model.logits(idx);
    INFO(spec);
    if (c.lrm[LrmSite::lm_head] == LrmMode::none) CHECK(after.equal(before));
    CHECK(max_rel_diff(after, before) < kMergeTol);
  }
}

TEST_CASE("bf16 autocast runs the same model within bf16 rounding", "[gpt2][bf16]") {
  GPT model(nano_config(), 6);
  randomize_multipliers(model, 12);
  at::NoGradGuard no_grad;
  const at::Tensor idx = at::randint(nano_config().vocab_size, {2, 16}, at::TensorOptions().dtype(at::kLong));
  const at::Tensor ref = model.logits(idx);
  at::Tensor low;
  {
    AutocastScope scope(model.device(), Precision::bf16);
    low = model.logits(idx);
  }
  CHECK(low.scalar_type() == at::kFloat);
  // bf16 keeps 8 mantissa bits (relative step 2^-8 ≈ 4e-3); a few layers of it stay well under 5 %.
  constexpr double kBf16Tol = 0.05;
  const double err = max_rel_diff(low, ref);
  CHECK(err < kBf16Tol);
  CHECK(err > 0.0);  // autocast really changed the arithmetic
  CHECK(max_rel_diff(model.logits(idx), ref) == 0.0);  // and the scope ended
}

TEST_CASE("dropout acts only in training mode", "[gpt2]") {
  ModelConfig c = nano_config();
  c.dropout = 0.2;
  GPT model(c, 9);
  at::NoGradGuard no_grad;
  const at::Tensor idx = at::randint(c.vocab_size, {1, 8}, at::TensorOptions().dtype(at::kLong));
  const at::Tensor e1 = model.logits(idx), e2 = model.logits(idx);
  CHECK(e1.equal(e2));
  model.train(true);
  CHECK(!model.logits(idx).equal(e1));
}

TEST_CASE("device and precision strings", "[gpt2][runtime]") {
  CHECK(parse_device("cpu").is_cpu());
  CHECK_THROWS_WITH(parse_device("tpu:3"), Catch::Contains("unknown device 'tpu:3'"));
  if (!cuda_present()) CHECK_THROWS_WITH(parse_device("cuda:0"), Catch::Contains("no CUDA device"));
  CHECK(gaugelab::core::parse_choice(precision_choices(), "bf16", "--precision") == Precision::bf16);
  CHECK_THROWS_WITH(gaugelab::core::parse_choice(precision_choices(), "fp8", "--precision"),
                    Catch::Contains("--precision must be one of fp32, bf16, got 'fp8'"));
  // The logs' words: the regime, and how it is computed (precision_words reads both tables).
  CHECK(std::string(precision_name(Precision::bf16_emulated)) == "bf16");
  CHECK(std::string(precision_name(Precision::fp32)) == "fp32");
  CHECK(std::string(precision_words(Precision::fp32).bf16_path) == "-");
  CHECK(std::string(precision_words(Precision::bf16).precision) == "bf16");
  CHECK(std::string(precision_words(Precision::bf16).bf16_path) == "native");
  CHECK(std::string(precision_words(Precision::bf16_emulated).bf16_path) == "emulated");
  CHECK(autocast_compute_dtype(c10::Device(c10::kCPU)) == at::kFloat);
  {
    AutocastScope scope(c10::Device(c10::kCPU), Precision::bf16);
    CHECK(autocast_compute_dtype(c10::Device(c10::kCPU)) == at::kBFloat16);
  }
  CHECK(autocast_compute_dtype(c10::Device(c10::kCPU)) == at::kFloat);
}

TEST_CASE("attention backend: one fused kernel alone on CUDA, refused elsewhere, sdpa and math leave every backend on",
          "[gpt2]") {
  at::Context& ctx = at::globalContext();
  for (Attention kernel : {Attention::flash, Attention::efficient, Attention::cudnn}) {
    INFO(word(kernel));
    CHECK_THROWS_WITH(select_attention_backend(kernel, c10::Device("cpu")),
                      Catch::Matchers::Contains(std::string("--attention ") + word(kernel) + " is a CUDA kernel"));
  }
  CHECK_THROWS_AS(gaugelab::core::parse_choice(attention_choices(), "fast", "--attention"), std::invalid_argument);
  for (Attention kernel : {Attention::sdpa, Attention::math}) {
    select_attention_backend(kernel, c10::Device("cpu"));
    CHECK(ctx.userEnabledFlashSDP());
    CHECK(ctx.userEnabledMemEfficientSDP());
    CHECK(ctx.userEnabledMathSDP());
  }
  CHECK(describe_attention_backend(Attention::flash) == "flash (the only SDPA backend enabled)");
}

}  // namespace GAUGELAB_TU
