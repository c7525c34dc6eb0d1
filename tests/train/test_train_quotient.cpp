// Condition E's tensor correction against the core (core/quotient.hpp correct_qk / correct_vo) on the
// same inputs: a random increment of every attention weight, corrected per head, with full and
// diagonal Grams, without multipliers and with them (then in the effective matrices, where the gauge
// acts; see quotient_update.hpp).
#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/randn_like.h>

#include "core/quotient.hpp"
#include "gpt2/train/quotient_update.hpp"
#include "tests/gpt2/gpt2_test_helpers.hpp"
#include "tests/gpt2/gpt2_catch.hpp"

using namespace gaugelab;

namespace {

// float32 tensors against a float64 reference: a dh x dh solve (dh = 32) of a Gram with condition
// number ~10 (random init plus λ) loses ~1 digit; relative 1e-4 is a few hundred float32 ulps.
constexpr double kFloatSolve = 1e-4;

core::Mat<double> to_mat(const at::Tensor& t) {  // [rows, cols] float64 copy
  const at::Tensor c = t.detach().to(at::kDouble).contiguous();
  core::Mat<double> m(c.size(0), c.size(1));
  const double* p = c.data_ptr<double>();
  for (std::int64_t i = 0; i < c.size(0); ++i)
    for (std::int64_t j = 0; j < c.size(1); ++j) m(i, j) = p[i * c.size(1) + j];
  return m;
}

double rel(const core::Mat<double>& a, const core::Mat<double>& b) { return (a - b).norm() / b.norm(); }

// Effective c_attn rows [3d, d] and attention projection [d, d] for given stored weights.
at::Tensor eff(const gpt2::LrmLinear& l, const at::Tensor& w) {
  gpt2::LrmLinear copy = l;
  copy.weight = w;
  return copy.effective_weight();
}

void check_against_core(bool multipliers, bool full) {
  gpt2::ModelConfig c = test::nano_config();
  c.bias = false;
  if (!multipliers) c.lrm = gpt2::LrmPlacement::none();
  gpt2::GPT m(c, 17);
  if (multipliers) test::randomize_multipliers(m, 18);
  at::NoGradGuard no_grad;
  const gpt2::AttentionSnapshot before = gpt2::snapshot_attention(m);
  for (gpt2::Block& b : m.h) {  // an "optimizer step": random increments of the size of an Adam step
    b.c_attn.weight.add_(at::randn_like(b.c_attn.weight) * 1e-3);
    b.attn_proj.weight.add_(at::randn_like(b.attn_proj.weight) * 1e-3);
  }
  std::vector<at::Tensor> raw_attn, raw_proj;
  for (const gpt2::Block& b : m.h) {
    raw_attn.push_back(b.c_attn.weight.clone());
    raw_proj.push_back(b.attn_proj.weight.clone());
  }
  gpt2::QuotientUpdate q;
  q.full = full;
  q.damping = 1e-3;
  gpt2::correct_attention_increments(m, before, q);
  core::QuotientOptions co;
  co.mode = full ? core::QuotientMode::full : core::QuotientMode::diagonal;
  co.damping = q.damping;
  const std::int64_t d = c.n_embd, H = c.n_head, dh = c.head_dim();
  for (std::size_t l = 0; l < m.h.size(); ++l) {
    const gpt2::Block& b = m.h[l];
    // Core layout: W_Q = (rows of head h)ᵀ [d, dh]; W_O = (projection columns of head h)ᵀ [dh, d].
    const core::Mat<double> A0 = to_mat(eff(b.c_attn, before.c_attn[l])), A1 = to_mat(eff(b.c_attn, raw_attn[l])),
                            A2 = to_mat(eff(b.c_attn, b.c_attn.weight));
    const core::Mat<double> P0 = to_mat(eff(b.attn_proj, before.attn_proj[l])),
                            P1 = to_mat(eff(b.attn_proj, raw_proj[l])), P2 = to_mat(eff(b.attn_proj, b.attn_proj.weight));
    for (std::int64_t h = 0; h < H; ++h) {
      auto rows = [&](const core::Mat<double>& A, int part) -> core::Mat<double> {
        return A.block(part * d + h * dh, 0, dh, d).transpose();
      };
      auto cols = [&](const core::Mat<double>& P) -> core::Mat<double> { return P.block(0, h * dh, d, dh).transpose(); };
      const core::Mat<double> UQ = rows(A1, 0) - rows(A0, 0), UK = rows(A1, 1) - rows(A0, 1);
      const core::Mat<double> UV = rows(A1, 2) - rows(A0, 2), UO = cols(P1) - cols(P0);
      const auto qk = core::correct_qk<double>(rows(A0, 0), rows(A0, 1), UQ, UK, co);
      CHECK(rel(rows(A2, 0) - rows(A0, 0), qk.U_Q) < kFloatSolve);
      CHECK(rel(rows(A2, 1) - rows(A0, 1), qk.U_K) < kFloatSolve);
      const auto vo = core::correct_vo<double>(rows(A0, 2), cols(P0), UV, UO, co);
      CHECK(rel(rows(A2, 2) - rows(A0, 2), vo.U_V) < kFloatSolve);
      CHECK(rel(cols(P2) - cols(P0), vo.U_O) < kFloatSolve);
    }
  }
}

}  // namespace

TEST_CASE("condition E: full correction equals core correct_qk / correct_vo, plain model") { check_against_core(false, true); }
TEST_CASE("condition E: full correction equals the core's on the effective matrices, with multipliers") {
  check_against_core(true, true);
}
TEST_CASE("condition E: diagonal correction equals the core's diagonal form") { check_against_core(true, false); }
