// Regression tests of two inspect defects: the LRM per-head statistics were read after the covariance
// slice had permuted the heads (head h reported another head's scales), and the covariance slice's
// "after" Q/K imbalance was measured on the activations it was fitted on (≈ 0 by construction).
#include <cmath>
#include <filesystem>
#include <string>

#include <ATen/core/grad_mode.h>

#include "gpt2/inspect/api.hpp"
#include "gpt2/inspect/checks.hpp"
#include "gpt2/model/checkpoint.hpp"
#include "io/run_log_reader.hpp"
#include "tests/inspect/inspect_helpers.hpp"
#include "tests/gpt2/gpt2_catch.hpp"
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab;
using namespace gaugelab::gpt2;
namespace fs = std::filesystem;

namespace {

// A model whose heads are told apart by their Q/K multipliers: head h has r_Q = q_scale[h], r_K = 1,
// and its key weights are scaled so the slices order the heads against their stored order.
std::string known_heads_checkpoint(const std::string& name, bool reversed) {
  auto m = test::small_model(31);
  const std::int64_t dh = m->config().head_dim();
  at::NoGradGuard no_grad;
  for (Block& b : m->h)
    for (std::int64_t h = 0; h < 2; ++h) {
      const double q = reversed ? 3.0 - h : 2.0 + h;  // s_Q = 2, 3 or 3, 2
      b.q().r.narrow(0, h * dh, dh).fill_(q);
      b.k().r.narrow(0, h * dh, dh).fill_(1.0);
      b.w_k().narrow(0, h * dh, dh).mul_(h == 0 ? 0.25 : 4.0);  // head 1 the larger: sorted first by the slices
    }
  const std::string dir = test::inspect_scratch(name) + "/ckpt";
  save_checkpoint(dir, *m, Vocabulary{});
  return dir;
}

}  // namespace

TEST_CASE("inspect regression: LRM per-head statistics are in the checkpoint's head order", "[inspect]") {
  bool saw_permutation = false;
  for (const bool reversed : {false, true}) {
    const std::string ck = known_heads_checkpoint(reversed ? "heads_rev" : "heads_fwd", reversed);
    InspectOptions o = test::quick_options(ck, fs::path(ck).parent_path().string() + "/inspect.h5");
    run_inspect(o, {"gpt2/inspect", {"test"}, {}, o.run.seed, 1});
    const io::RunLogReader log(o.run.out);
    const io::TableData canon = log.table("canonical");
    for (std::size_t i = 0; i < canon.str("slice").size(); ++i)
      saw_permutation |= canon.str("slice")[i] == "covariance" && canon.i64("source_head")[i] != canon.i64("head")[i];
    const io::TableData lrm = log.table("lrm_heads");
    REQUIRE(lrm.i64("head").size() == 4);
    for (std::size_t i = 0; i < 4; ++i) {
      const std::int64_t h = lrm.i64("head")[i];
      const double want = reversed ? 3.0 - h : 2.0 + h;
      INFO("layer " << lrm.i64("layer")[i] << " head " << h << (reversed ? " (reversed)" : ""));
      CHECK(std::abs(lrm.f64("s_q")[i] - want) < 1e-6);
      CHECK(std::abs(lrm.f64("s_k")[i] - 1.0) < 1e-6);
    }
  }
  CHECK(saw_permutation);  // the covariance slice did reorder heads, so the order was really at stake
}

TEST_CASE("inspect regression: the covariance slice is measured on held-out activations", "[inspect]") {
  CHECK(inspect::sample_split(4, 64).fit_rows == 128);
  CHECK(inspect::sample_split(4, 64).held_rows == 128);
  CHECK(inspect::sample_split(3, 10).fit_rows == 20);
  CHECK(inspect::sample_split(1, 48).held_rows == 24);
  const std::string ck = test::small_checkpoint("held_out", 41);
  InspectOptions o = test::quick_options(ck, fs::path(ck).parent_path().string() + "/inspect.h5");
  o.precision = gpt2::InspectPrecision::fp64;
  o.sample_seqs = 4;
  o.sample_len = 24;
  run_inspect(o, {"gpt2/inspect", {"test"}, {}, o.run.seed, 1});
  const io::TableData canon = io::RunLogReader(o.run.out).table("canonical");
  for (std::size_t i = 0; i < canon.str("slice").size(); ++i) {
    if (canon.str("slice")[i] != "covariance") continue;
    INFO("row " << i);
    CHECK(canon.f64("qk_cov_imb_after_fit")[i] < 1e-9);  // where it was fitted: balanced by construction
    CHECK(canon.f64("qk_cov_imb_after")[i] > 1e-3);      // on activations it never saw: not
    CHECK(canon.f64("qk_cov_imb_after")[i] < canon.f64("qk_cov_imb_before")[i]);  // yet better than before
  }
}

}  // namespace GAUGELAB_TU
