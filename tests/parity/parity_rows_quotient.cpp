// Condition E's tensor correction (gpt2/train/quotient_update.hpp) against the core (core/quotient.hpp
// correct_qk / correct_vo) on the same inputs: a random increment of every attention weight, corrected
// per head, with full and diagonal Grams, without multipliers and with them (then in the effective
// matrices, where the gauge acts; see quotient_update.hpp). Moved here from tests/train/test_train_quotient.cpp.
#include <algorithm>
#include <cmath>
#include <vector>

#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>

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
  double err = 0;
  for (std::size_t l = 0; l < m.h.size(); ++l) {
    const gpt2::Block& b = m.h[l];
    // Core layout: W_Q = (rows of head h)ᵀ [d, dh]; W_O = (projection columns of head h)ᵀ [dh, d].
    const core::Mat<double> A0 = gpt2::to_mat(eff(b.c_attn, before.c_attn[l])),
                            A1 = gpt2::to_mat(eff(b.c_attn, raw_attn[l])),
                            A2 = gpt2::to_mat(eff(b.c_attn, b.c_attn.weight));
    const core::Mat<double> P0 = gpt2::to_mat(eff(b.attn_proj, before.attn_proj[l])),
                            P1 = gpt2::to_mat(eff(b.attn_proj, raw_proj[l])),
                            P2 = gpt2::to_mat(eff(b.attn_proj, b.attn_proj.weight));
    // The core's corrected increments of every head, assembled per block in the model's layout: the Q, K, V
    // rows of c_attn [d, d] each and the output projection [d, d].
    core::Mat<double> CQ(d, d), CK(d, d), CV(d, d), CO(d, d);
    for (std::int64_t h = 0; h < H; ++h) {
      auto rows = [&](const core::Mat<double>& A, int part) -> core::Mat<double> {
        return A.block(part * d + h * dh, 0, dh, d).transpose();
      };
      auto cols = [&](const core::Mat<double>& P) -> core::Mat<double> { return P.block(0, h * dh, d, dh).transpose(); };
      const core::Mat<double> UQ = rows(A1, 0) - rows(A0, 0), UK = rows(A1, 1) - rows(A0, 1);
      const core::Mat<double> UV = rows(A1, 2) - rows(A0, 2), UO = cols(P1) - cols(P0);
      const auto qk = core::correct_qk<double>(rows(A0, 0), rows(A0, 1), UQ, UK, co);
      const auto vo = core::correct_vo<double>(rows(A0, 2), cols(P0), UV, UO, co);
      if (!match_rms)  // per head, as the correction is defined
        err = std::max({err, rel(rows(A2, 0) - rows(A0, 0), qk.U_Q), rel(rows(A2, 1) - rows(A0, 1), qk.U_K),
                        rel(rows(A2, 2) - rows(A0, 2), vo.U_V), rel(cols(P2) - cols(P0), vo.U_O)});
      CQ.middleRows(h * dh, dh) = qk.U_Q.transpose();
      CK.middleRows(h * dh, dh) = qk.U_K.transpose();
      CV.middleRows(h * dh, dh) = vo.U_V.transpose();
      CO.middleCols(h * dh, dh) = vo.U_O.transpose();
    }
    auto rms = [](const core::Mat<double>& x) { return x.norm() / std::sqrt(static_cast<double>(x.size())); };
    auto want = [&](const core::Mat<double>& corrected, const core::Mat<double>& raw) -> core::Mat<double> {
      return match_rms ? core::Mat<double>(corrected * (rms(raw) / rms(corrected))) : corrected;
    };  // match_rms is checked on the plain model only, where the stored and effective matrices coincide
    auto part = [&](const core::Mat<double>& A, int i) -> core::Mat<double> { return A.middleRows(i * d, d); };
    if (match_rms)  // the rescaling must matter here, or the row could not tell it from the plain correction
      require_side(std::abs(rms(CQ) / rms(part(A1, 0) - part(A0, 0)) - 1.0) > 0.1,
                   "the correction does not change the increment's RMS: the rms row tests nothing");
    if (match_rms)  // per block, as the rescaling is defined
      err = std::max({err, rel(part(A2, 0) - part(A0, 0), want(CQ, part(A1, 0) - part(A0, 0))),
                    rel(part(A2, 1) - part(A0, 1), want(CK, part(A1, 1) - part(A0, 1))),
                    rel(part(A2, 2) - part(A0, 2), want(CV, part(A1, 2) - part(A0, 2))),
                    rel(P2 - P0, want(CO, P1 - P0))});
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
      {"gpt2::correct_attention_increments (full, plain model, rms; condition Erms)",
       "core::correct_qk / core::correct_vo (full), each block scaled to its raw increment's RMS", shapes,
       "float32 vs float64", kFloatSolve, why, [](c10::Device dev) { return correction_error(false, true, dev, true); }},
  };
}

}  // namespace gaugelab::parity
