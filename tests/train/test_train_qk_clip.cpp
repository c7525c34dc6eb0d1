// Condition QKclip (Kimi K2's QK-Clip, gpt2/train/qk_clip.hpp), added as one row of the conditions
// table, one hook file and this test: the clip brings every head over tau back to tau exactly and leaves
// the others bit for bit; on the multipliers it is the same function as on the weights; the signed
// maximum it bounds never exceeds the logged |logit| maximum; and a training run under it records the
// condition's key, label and title and acts (after_fix) only while some head is over tau.
#include <cmath>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/randint.h>

#include "gpt2/train/conditions.hpp"
#include "gpt2/train/gaugefix.hpp"
#include "gpt2/train/qk_clip.hpp"
#include "gpt2/train/run_dir.hpp"
#include "io/run_log_reader.hpp"
#include "tests/gpt2/gpt2_catch.hpp"
#include "tests/gpt2/gpt2_test_helpers.hpp"
#include "tests/support/process.hpp"
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab;
namespace fs = std::filesystem;

namespace {

// Logits of a model whose queries are scaled up (every head's largest logit well above 1), biases on.
std::unique_ptr<gpt2::GPT> hot_model(std::uint64_t seed) {
  gpt2::ModelConfig c = test::nano_config();
  c.bias = true;
  auto m = std::make_unique<gpt2::GPT>(c, seed);
  test::randomize_multipliers(*m, seed + 1);
  test::randomize_biases_norms(*m, seed + 2);
  at::NoGradGuard no_grad;
  for (gpt2::Block& b : m->h) {
    b.w_q().mul_(20.0);
    b.w_k().mul_(20.0);
  }
  return m;
}

// Token ids [2, 16] from a seeded generator: the same batch every run.
at::Tensor ids(std::int64_t vocab, std::uint64_t seed = 17) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  return at::randint(0, vocab, {2, 16}, gen, at::TensorOptions().dtype(at::kLong));
}

// Relative float32 rounding of a logit q·k after scaling q and k (two roundings each, one dot product).
constexpr double kRounding = 1e-5;

}  // namespace

TEST_CASE("QK-Clip: heads over tau come back to tau, the others are untouched bit for bit") {
  auto m = hot_model(3);
  const at::Tensor idx = ids(m->config().vocab_size);
  const at::Tensor s0 = m->attention_logit_max(idx, /*absolute=*/false);  // [L, H]
  const at::Tensor abs0 = m->attention_logit_max(idx, /*absolute=*/true);
  CHECK((s0 <= abs0).all().item<bool>());  // the signed maximum never exceeds the |logit| one
  // tau between the first layer's two heads: one over, one under. (The first layer's logits are exact to
  // check: a later layer's inputs change with the clip of the layers before it.)
  const double a = s0[0][0].item<double>(), b = s0[0][1].item<double>();
  REQUIRE(a != b);
  const double tau = 0.5 * (a + b);
  REQUIRE(tau > 0);
  const at::Tensor over = s0 > tau;  // [L, H]
  const std::int64_t n_over = over.sum().item<std::int64_t>();
  std::vector<at::Tensor> wq_before, wk_before;
  for (gpt2::Block& blk : m->h) {
    wq_before.push_back(blk.w_q().clone());
    wk_before.push_back(blk.w_k().clone());
  }
  CHECK(gpt2::qk_clip(*m, s0, tau, gpt2::QkClipOn::weights) == n_over);
  const at::Tensor s1 = m->attention_logit_max(idx, false);
  for (std::int64_t h = 0; h < 2; ++h) {
    INFO("first layer, head " << h);
    if (over[0][h].item<bool>()) CHECK(std::abs(s1[0][h].item<double>() - tau) <= kRounding * tau);  // peaks at tau
    else CHECK(s1[0][h].item<double>() == s0[0][h].item<double>());                                   // bit for bit
  }
  // Every layer: a clipped head's query and key rows are scaled by √(tau/S_max), the others' are untouched.
  const std::int64_t dh = m->config().head_dim();
  for (std::size_t l = 0; l < m->h.size(); ++l)
    for (std::int64_t h = 0; h < m->config().n_head; ++h) {
      const auto L = static_cast<std::int64_t>(l);
      const double f = over[L][h].item<bool>() ? std::sqrt(tau / s0[L][h].item<double>()) : 1.0;
      for (const auto& [now, then] : {std::pair{m->h[l].w_q(), wq_before[l]}, std::pair{m->h[l].w_k(), wk_before[l]}}) {
        const at::Tensor rows_now = now.narrow(0, h * dh, dh), rows_then = then.narrow(0, h * dh, dh);
        if (f == 1.0) CHECK(at::equal(rows_now, rows_then));
        else CHECK(test::max_rel_diff(rows_now, rows_then * f) < kRounding);
      }
    }
  CHECK(gpt2::qk_clip(*m, s1.clamp_max(tau), tau, gpt2::QkClipOn::weights) == 0);  // nothing over tau: nothing moves
}

TEST_CASE("QK-Clip: on the multipliers it is the same function as on the weights, and the weights stay") {
  auto a = hot_model(7), b = hot_model(7);
  const at::Tensor idx = ids(a->config().vocab_size);
  const at::Tensor s0 = a->attention_logit_max(idx, false);
  REQUIRE(s0.min().item<double>() > 0);  // (a signed maximum may be negative; not for this batch)
  const double tau = 0.5 * s0.min().item<double>();  // every head over it
  const at::Tensor w_before = b->h[0].c_attn.weight.clone();
  CHECK(gpt2::qk_clip(*a, s0, tau, gpt2::QkClipOn::weights) == s0.numel());
  CHECK(gpt2::qk_clip(*b, s0, tau, gpt2::QkClipOn::multipliers) == s0.numel());
  at::NoGradGuard no_grad;
  CHECK(test::max_rel_diff(b->logits(idx), a->logits(idx)) < kRounding);
  CHECK(at::equal(b->h[0].c_attn.weight, w_before));
  // Without row multipliers on q and k the multiplier form has nothing to scale: refused.
  gpt2::ModelConfig c = test::nano_config();
  c.lrm = gpt2::LrmPlacement::parse("none");
  gpt2::GPT plain(c, 1);
  CHECK_THROWS_AS(gpt2::qk_clip(plain, s0, tau, gpt2::QkClipOn::multipliers), std::invalid_argument);
  CHECK(gpt2::qk_clip(plain, s0, tau, gpt2::QkClipOn::weights) == s0.numel());
}

TEST_CASE("QK-Clip: the row in the conditions table") {
  const gpt2::Condition& c = gpt2::condition("QKclip");
  CHECK((c.hooks == std::vector<gpt2::StepHookKind>{gpt2::StepHookKind::qk_clip}));
  CHECK_FALSE(c.decays_qk);       // C's settings otherwise: the clip is the only control
  CHECK_FALSE(c.needs_qk_rows);   // on the weights it needs no multipliers
  CHECK(std::string(c.compared_with) == "A");
}

TEST_CASE("QK-Clip: a training run logs its condition and clips only while a head is over tau") {
  const std::string bin = std::string(GAUGELAB_BINARY_DIR) + "/gaugelab";
  const std::string root = std::string(GAUGELAB_BINARY_DIR) + "/test_train_qk_clip";
  const auto prep = test::run_command(bin + " prepare --synthetic --docs 300 --seed 1 --force --out " + root + "/data");
  REQUIRE(prep.status == 0);
  auto run = [&](const std::string& name, const std::string& tau) {
    const std::string out = root + "/" + name;
    const auto r = test::run_command(bin + " train --data " + root + "/data --out " + out +
                                     " --model nano --n-embd 32 --block-size 32 --compact-vocab --batch-size 4 "
                                     "--eval-batches 2 --threads 1 --peak-tflops 1 --log-every 1000 --max-iters 6 "
                                     "--warmup-iters 0 --force --condition QKclip --qk-clip-tau " + tau);
    INFO(r.output);
    REQUIRE(r.status == 0);
    return io::RunLogReader(gpt2::train_log_path(out));
  };
  const io::RunLogReader tight = run("tight", "1e-3");  // every head is over it at every step
  const auto summary = tight.summary();
  CHECK(std::get<std::string>(summary.at("condition")) == "QKclip");
  CHECK(std::get<std::string>(summary.at("condition_label")) == "QKclip");
  CHECK(std::get<std::string>(summary.at("condition_reference")) == "A");
  const io::SeriesData s = tight.series();
  for (const double f : s.at("after_fix")) CHECK(f == 1.0);
  const io::RunLogReader loose = run("loose", "1e6");  // no logit comes near it
  const io::SeriesData ls = loose.series();  // held: a range over a temporary's member would dangle
  for (const double f : ls.at("after_fix")) CHECK(f == 0.0);
}

}  // namespace GAUGELAB_TU
