// Muon in the trainer against the core (core/update_muon.hpp, the KellerJordan reference): the split of
// c_attn into Q, K, V, and the optimizer's routing (hidden matrices by Muon, everything else by AdamW).
// NS5 and three steps of the update against the core are rows of the parity table
// (tests/parity/parity_rows_optimizer.cpp).
#include <cmath>
#include <string>

#include <ATen/core/grad_mode.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/full_like.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/zeros_like.h>

#include "core/update_muon.hpp"
#include "gpt2/train/muon.hpp"
#include "gpt2/train/optimizer.hpp"
#include "tests/gpt2/gpt2_test_helpers.hpp"
#include "tests/gpt2/gpt2_catch.hpp"
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab;

namespace {

// float64 throughout: the same arithmetic in another order, a few ulps per product over 5 iterations.
constexpr double kSameIteration = 1e-12;

core::Mat<double> to_mat(const at::Tensor& t) {  // [rows, cols] float64
  const at::Tensor c = t.to(at::kDouble).contiguous();
  core::Mat<double> m(c.size(0), c.size(1));
  for (std::int64_t i = 0; i < c.size(0); ++i)
    for (std::int64_t j = 0; j < c.size(1); ++j) m(i, j) = c[i][j].item<double>();
  return m;
}

double rel_err(const at::Tensor& t, const core::Mat<double>& ref) { return (to_mat(t) - ref).norm() / ref.norm(); }

at::Tensor randn64(std::int64_t r, std::int64_t c) { return at::randn({r, c}, at::TensorOptions().dtype(at::kDouble)); }

}  // namespace

TEST_CASE("muon: c_attn's Q, K and V blocks are orthogonalised apart unless fused") {
  const std::int64_t d = 4;
  const at::Tensor G = randn64(3 * d, d);
  at::Tensor W = at::zeros_like(G), buf = at::zeros_like(G);
  gpt2::MuonSettings s;
  s.momentum = 0.0;  // the update is NS5 of the gradient itself
  s.weight_decay = 0.0;
  s.lr = 1.0;
  gpt2::muon_update(W, G, buf, 1.0, s, /*qkv=*/true);
  for (int part = 0; part < 3; ++part)
    CHECK(rel_err(W.narrow(0, part * d, d).neg(), core::newton_schulz(to_mat(G.narrow(0, part * d, d)))) < kSameIteration);
  s.split_qkv = false;
  at::Tensor W2 = at::zeros_like(G), buf2 = at::zeros_like(G);
  gpt2::muon_update(W2, G, buf2, 1.0, s, true);
  const core::Mat<double> fused = std::sqrt(3.0) * core::newton_schulz(to_mat(G));  // tall: √(rows/cols)
  CHECK(rel_err(W2.neg(), fused) < kSameIteration);
}

TEST_CASE("muon: the optimizer routes the hidden matrices to Muon and the rest to AdamW") {
  gpt2::GPT m(test::nano_config(), 3);
  gpt2::OptimizerSettings s;
  s.hidden_matrices = core::RuleKind::muon;
  gpt2::TrainOptimizer opt(m, s);
  bool saw_muon = false;
  for (const auto& g : opt.groups()) {
    INFO(g.name);
    CHECK((g.rule == core::RuleKind::muon) == (g.name == "matrices"));
    saw_muon |= g.rule == core::RuleKind::muon;
    for (const std::string& n : g.names)
      if (g.rule == core::RuleKind::muon) CHECK(n.find(".weight") != std::string::npos);
  }
  CHECK(saw_muon);
  // One step with constant gradients: a hidden matrix moves by exactly Muon's update.
  at::Tensor w = m.h[0].c_fc.weight;
  const at::Tensor before = w.detach().clone();
  m.visit([](const std::string&, at::Tensor& t, gpt2::ParamRole) { t.mutable_grad() = at::full_like(t, 0.01); });
  at::Tensor expect = before.clone(), buf = at::zeros_like(before);
  gpt2::muon_update(expect, at::full_like(before, 0.01), buf, 0.5 * s.muon_settings.lr, s.muon_settings, false);
  opt.step(1e-3, 0.5);
  CHECK(test::max_rel_diff(w.detach(), expect) < 1e-6);
}

}  // namespace GAUGELAB_TU
