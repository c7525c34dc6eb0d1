// Condition E's tensor correction (gpt2/train/quotient_update.hpp) against the core (core/quotient.hpp
// correct_qk / correct_vo) on the same inputs: a random increment of every attention weight, corrected
// per head, with full and diagonal Grams, without multipliers and with them (then in the effective
// matrices, where the gauge acts; see quotient_update.hpp), and condition Erms's rescaling (one factor per head
// and pair, on the stored increments) with and without multipliers. Moved here from
// tests/train/test_train_quotient.cpp.
#include <algorithm>
#include <cmath>
#include <vector>

#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/ones_like.h>

#include "core/quotient.hpp"
#include "gpt2/train/quotient_update.hpp"
#include "tests/gpt2/gpt2_test_helpers.hpp"
#include "tests/parity/parity_support.hpp"
#include "support/unity_tu.hpp"

namespace gaugelab::parity {

namespace GAUGELAB_TU {  // this file's helpers: each file of a unity batch has its own (support/unity_tu.hpp)
namespace {

// float32 tensors against a float64 reference: a dh x dh solve (dh = 32) of a Gram with condition
// number ~10 (random init plus λ) loses ~1 digit; relative 1e-4 is a few hundred float32 ulps.
constexpr double kFloatSolve = 1e-4;

double rel(const core::Mat<double>& a, const core::Mat<double>& b) { return (a - b).norm() / b.norm(); }

// Effective c_attn rows [3d, d] and attention projection [d, d] for given stored weights.
at::Tensor eff(const gpt2::LrmLinear& l, const at::Tensor& w) {
  gpt2::LrmLinear copy = l;
  copy.weight = w;
  return copy.effective_weight();
}

// Was check_against_core(multipliers, full) of the three "condition E: ... equals core ..." TEST_CASEs.
double correction_error(bool multipliers, bool full, c10::Device device, bool match_rms = false) {
  gpt2::ModelConfig c = test::nano_config();
  c.bias = false;
  if (!multipliers) c.lrm = gpt2::LrmPlacement::none();
  gpt2::GPT m(c, 17);
  if (multipliers) test::randomize_multipliers(m, 18);
  m.to(device);
  at::NoGradGuard no_grad;
  const gpt2::AttentionSnapshot before = gpt2::snapshot_attention(m);
  auto gen = cpu_generator(19);
  for (gpt2::Block& b : m.h) {  // an "optimizer step": random increments of the size of an Adam step
    b.c_attn.weight.add_(randn_on(b.c_attn.weight.sizes(), gen, at::kFloat, device) * 1e-3);
    b.attn_proj.weight.add_(randn_on(b.attn_proj.weight.sizes(), gen, at::kFloat, device) * 1e-3);
  }
  std::vector<at::Tensor> raw_attn, raw_proj;
  for (const gpt2::Block& b : m.h) {
    raw_attn.push_back(b.c_attn.weight.clone());
    raw_proj.push_back(b.attn_proj.weight.clone());
  }
  gpt2::QuotientUpdate q;
  q.full = full;
  q.damping = 1e-3;
  q.match_rms = match_rms;
  gpt2::correct_attention_increments(m, before, q);
  core::QuotientOptions co;
  co.mode = full ? core::QuotientMode::full : core::QuotientMode::diagonal;
  co.damping = q.damping;
  const std::int64_t d = c.n_embd, H = c.n_head, dh = c.head_dim();
  double err = 0, moved_by_rms = 0, shared_vs_alone = 0;
  for (std::size_t l = 0; l < m.h.size(); ++l) {
    const gpt2::Block& b = m.h[l];
    // Core layout: W_Q = (rows of head h)ᵀ [d, dh]; W_O = (projection columns of head h)ᵀ [dh, d].
    const core::Mat<double> A0 = gpt2::to_mat(eff(b.c_attn, before.c_attn[l])),
                            A1 = gpt2::to_mat(eff(b.c_attn, raw_attn[l])),
                            A2 = gpt2::to_mat(eff(b.c_attn, b.c_attn.weight));
    const core::Mat<double> P0 = gpt2::to_mat(eff(b.attn_proj, before.attn_proj[l])),
                            P1 = gpt2::to_mat(eff(b.attn_proj, raw_proj[l])),
                            P2 = gpt2::to_mat(eff(b.attn_proj, b.attn_proj.weight));
    // Effective over stored coordinates, element for element: r_i·c_j (the effective matrix of an all-ones W̄). The
    // rms rescaling is defined on the stored increments (the optimizer's), so the reference divides by these.
    const core::Mat<double> SA = gpt2::to_mat(eff(b.c_attn, at::ones_like(b.c_attn.weight))),
                            SP = gpt2::to_mat(eff(b.attn_proj, at::ones_like(b.attn_proj.weight)));
    auto rows = [&](const core::Mat<double>& A, int part, std::int64_t h) -> core::Mat<double> {
      return A.block(part * d + h * dh, 0, dh, d).transpose();
    };
    auto cols = [&](const core::Mat<double>& P, std::int64_t h) -> core::Mat<double> {
      return P.block(0, h * dh, d, dh).transpose();
    };
    for (std::int64_t h = 0; h < H; ++h) {
      const core::Mat<double> UQ = rows(A1, 0, h) - rows(A0, 0, h), UK = rows(A1, 1, h) - rows(A0, 1, h);
      const core::Mat<double> UV = rows(A1, 2, h) - rows(A0, 2, h), UO = cols(P1, h) - cols(P0, h);
      const auto qk = core::correct_qk<double>(rows(A0, 0, h), rows(A0, 1, h), UQ, UK, co);
      const auto vo = core::correct_vo<double>(rows(A0, 2, h), cols(P0, h), UV, UO, co);
      // Condition Erms: one factor per head for each pair, the pair's raw stored RMS over its corrected stored RMS.
      auto sq = [](const core::Mat<double>& eff_inc, const core::Mat<double>& scale) {
        return eff_inc.cwiseQuotient(scale).squaredNorm();
      };
      double f_qk = 1, f_vo = 1;
      if (match_rms) {
        const core::Mat<double> sQ = rows(SA, 0, h), sK = rows(SA, 1, h), sV = rows(SA, 2, h), sO = cols(SP, h);
        f_qk = std::sqrt((sq(UQ, sQ) + sq(UK, sK)) / (sq(qk.U_Q, sQ) + sq(qk.U_K, sK)));
        f_vo = std::sqrt((sq(UV, sV) + sq(UO, sO)) / (sq(vo.U_V, sV) + sq(vo.U_O, sO)));
        // The row must tell the shared factor from none and from one per member, or it would test nothing.
        const double f_q_alone = std::sqrt(sq(UQ, sQ) / sq(qk.U_Q, sQ));
        moved_by_rms = std::max(moved_by_rms, std::abs(f_qk - 1.0));
        shared_vs_alone = std::max(shared_vs_alone, std::abs(f_q_alone / f_qk - 1.0));
      }
      err = std::max({err, rel(rows(A2, 0, h) - rows(A0, 0, h), f_qk * qk.U_Q),
                      rel(rows(A2, 1, h) - rows(A0, 1, h), f_qk * qk.U_K),
                      rel(rows(A2, 2, h) - rows(A0, 2, h), f_vo * vo.U_V),
                      rel(cols(P2, h) - cols(P0, h), f_vo * vo.U_O)});
    }
  }
  if (match_rms) {
    require_side(moved_by_rms > 0.1,
                 "the rescaling does not change the corrected increments: the rms row tests nothing");
    require_side(shared_vs_alone > 0.01,
                 "the Q factor alone equals the pair's: the row cannot tell a shared factor from one per block");
  }
  return err;
}

}  // namespace
}  // namespace GAUGELAB_TU

std::vector<ParityRow> quotient_rows() {
  using namespace GAUGELAB_TU;
  const char* shapes = "nano L=2 H=2 d=64 dh=32, no biases; per head W_Q W_K W_V [d, dh], W_O [dh, d] (Frobenius, relative)";
  const char* why =
      "float32 tensors against a float64 reference: a dh x dh solve (dh = 32) of a Gram with condition number ~10 "
      "(random init plus lambda) loses ~1 digit; relative 1e-4 is a few hundred float32 ulps";
  return {
      {"gpt2::correct_attention_increments (full, plain model)", "core::correct_qk / core::correct_vo (full)", shapes,
       "float32 vs float64", kFloatSolve, why, [](c10::Device dev) { return correction_error(false, true, dev); }},
      {"gpt2::correct_attention_increments (full, multipliers)",
       "core::correct_qk / core::correct_vo (full) on the effective matrices", shapes, "float32 vs float64", kFloatSolve,
       why, [](c10::Device dev) { return correction_error(true, true, dev); }},
      {"gpt2::correct_attention_increments (diagonal, multipliers)",
       "core::correct_qk / core::correct_vo (diagonal) on the effective matrices", shapes, "float32 vs float64",
       kFloatSolve, why, [](c10::Device dev) { return correction_error(true, false, dev); }},
      {"gpt2::correct_attention_increments (full, plain model, rms)",
       "core::correct_qk / core::correct_vo (full), each head's Q/K and V/O pair scaled by one factor to the pair's "
       "raw RMS", shapes, "float32 vs float64", kFloatSolve, why,
       [](c10::Device dev) { return correction_error(false, true, dev, true); }},
      {"gpt2::correct_attention_increments (full, multipliers, rms; condition Erms)",
       "core::correct_qk / core::correct_vo (full) on the effective matrices, each head's Q/K and V/O pair scaled by "
       "one factor to the pair's raw RMS in the stored coordinates", shapes, "float32 vs float64", kFloatSolve, why,
       [](c10::Device dev) { return correction_error(true, true, dev, true); }},
  };
}

}  // namespace gaugelab::parity
