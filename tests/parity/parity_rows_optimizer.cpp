// Muon in the trainer (gpt2/train/muon.hpp) against the core (core/update_muon.hpp, the KellerJordan
// reference): NS5 on tall and wide matrices, and three steps of the update with momentum and decay.
// Moved here from tests/train/test_train_muon.cpp (which keeps the c_attn split and the routing).
#include <algorithm>
#include <utility>

#include <ATen/ops/zeros_like.h>

#include "core/update_muon.hpp"
#include "gpt2/train/muon.hpp"
#include "tests/parity/parity_support.hpp"
#include "support/unity_tu.hpp"

namespace gaugelab::parity {

namespace GAUGELAB_TU {  // this file's helpers: each file of a unity batch has its own (support/unity_tu.hpp)
namespace {

// float64 throughout: the same arithmetic in another order, a few ulps per product over 5 iterations.
constexpr double kSameIteration = 1e-12;

double rel_err(const at::Tensor& t, const core::Mat<double>& ref) { return (gpt2::to_mat(t) - ref).norm() / ref.norm(); }

// Was TEST_CASE "muon: NS5 on tall and wide matrices equals the core's iteration".
double ns5_error(c10::Device device) {
  auto gen = cpu_generator(40);
  double err = 0;
  for (const auto& [r, c] : {std::pair<std::int64_t, std::int64_t>{8, 5}, {5, 8}, {6, 6}}) {
    const at::Tensor G = at::randn({r, c}, gen, at::TensorOptions().dtype(at::kDouble));  // on the CPU
    err = std::max(err, rel_err(gpt2::newton_schulz5(G.to(device)), core::newton_schulz(gpt2::to_mat(G))));
  }
  return err;
}

// Was TEST_CASE "muon: three steps of the update equal core::muon_step (momentum, Nesterov, decay, shape scale)".
double muon_steps_error(c10::Device device) {
  auto gen = cpu_generator(47);
  const auto f64 = at::TensorOptions().dtype(at::kDouble);
  const at::Tensor W0 = at::randn({6, 4}, gen, f64);  // on the CPU
  at::Tensor W = W0.clone().to(device), buf = at::zeros_like(W);
  core::Mat<double> Wc = gpt2::to_mat(W0);
  core::RuleState<double> st;
  core::MuonOptions co;
  co.lr = 0.05;
  co.weight_decay = 0.1;
  gpt2::MuonSettings s;
  s.lr = co.lr;
  s.weight_decay = co.weight_decay;
  double err = 0;
  for (int step = 0; step < 3; ++step) {
    const at::Tensor G = at::randn({6, 4}, gen, f64);
    gpt2::muon_update(W, G.to(device), buf, s.lr, s, /*qkv=*/false);
    const core::Step<double> u = core::muon_step(co, Wc, gpt2::to_mat(G), st);
    Wc = u.rho * Wc + u.U;
    err = std::max(err, rel_err(W, Wc));
  }
  return err;
}

}  // namespace
}  // namespace GAUGELAB_TU

std::vector<ParityRow> optimizer_rows() {
  using namespace GAUGELAB_TU;
  const char* why = "float64 throughout: the same arithmetic in another order, a few ulps per product over 5 iterations";
  return {
      {"gpt2::newton_schulz5", "core::newton_schulz", "G [8, 5] (tall), [5, 8] (wide), [6, 6] (Frobenius, relative)",
       "float64 vs float64", kSameIteration, why, &ns5_error},
      {"gpt2::muon_update (3 steps)", "core::muon_step (momentum, Nesterov, decay, shape scale)",
       "W, G [6, 4], lr 0.05, weight decay 0.1 (Frobenius, relative)", "float64 vs float64", kSameIteration, why,
       &muon_steps_error},
  };
}

}  // namespace gaugelab::parity
