// `gaugelab inspect` end to end on a small checkpoint: valid transforms at rounding level (fp32 and
// fp64), invalid ones far above, canonicalisation exact and idempotent, the log's contract, one-line
// errors from the function and from the front door.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <ATen/core/grad_mode.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/randint.h>

#include "core/gauge_fix_qr.hpp"
#include "gpt2/inspect/layer_tensors.hpp"
#include "gpt2/inspect/transforms.hpp"
#include "inspect_helpers.hpp"
#include "io/run_log_reader.hpp"
#include "tests/gpt2/gpt2_catch.hpp"  // last: see there
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab::gpt2;
namespace core = gaugelab::core;
namespace io = gaugelab::io;
namespace test = gaugelab::test;
namespace fs = std::filesystem;

namespace {

// Valid gauges in fp32: the moved weights are stored in float32 (2^-24 relative per entry), the
// gauges have κ ≲ 1.5 (δ = 0.1), and two layers of attention and the LM head add a few ulps each.
constexpr double kValidFp32 = 1e-5;   // the bound
// In float64 the same argument gives ~1e-15; 1e-12 is the bound.
constexpr double kValidFp64 = 1e-12;
// Moves outside the group (κ = 10 matrices) change attention at order one on this model.
constexpr double kInvalidAtLeast = 1e-1;
// Canonical vs original logits, relative to the largest logit: the QR gauges have κ up to that of W_Q
// (a few for N(0, 1/d) weights) and the weights are re-stored in float32.
constexpr double kCanonicalRel = 1e-5;
// Canonicalising a canonical checkpoint: the second gauges are I up to float32 rounding of the first.
constexpr double kIdempotent = 1e-5;
// ‖W_VᵀW_V − I‖, ‖W_QᵀW_Q − I‖ of orthonormal columns re-stored in float32 (d_h = 32 columns of 64
// entries, 2^-24 each): ~1e-7; 1e-5 leaves headroom for the multipliers' rounding.
constexpr double kStoredOrthonormal = 1e-5;
// fp64 canonical vs original logits (absolute, logits of order 1-10): float64 rounding, ~1e-14.
constexpr double kCanonicalFp64Abs = 1e-10;

double max_rel(const at::Tensor& a, const at::Tensor& b) {
  return a.sub(b).abs().max().item<double>() / b.abs().max().item<double>();
}

}  // namespace

TEST_CASE("inspect fp32: valid transforms at rounding, invalid ones far above, exact canonical checkpoint", "[inspect]") {
  const std::string ck = test::small_checkpoint("run32", 21);
  const std::string dir = fs::path(ck).parent_path().string();
  InspectOptions o = test::quick_options(ck, dir + "/inspect.h5");
  o.write_canonical = dir + "/canonical";
  const InspectResult r = run_inspect(o, {"gpt2/inspect", {"test"}, {}, o.run.seed, 1});
  CHECK(r.layers == 2);
  CHECK(r.heads == 2);
  CHECK(r.gauge_dim_per_layer == 2 * (32 * 32 + 32 * 32));
  CHECK(r.valid_logit_rel_err_max <= kValidFp32);
  CHECK(r.valid_attn_rel_err_max <= kValidFp32);
  CHECK(r.invalid_logit_rel_err_min >= kInvalidAtLeast);
  CHECK(r.canonical_greedy_match == 1.0);

  const io::RunLogReader log(o.run.out);
  CHECK(log.root().kind == "gpt2/inspect");
  const auto valid = log.array("valid_score_rel_err"), invalid = log.array("invalid_score_rel_err");
  CHECK(valid.shape == std::vector<std::uint64_t>{6, 2});
  CHECK(invalid.shape == std::vector<std::uint64_t>{3, 2, 2});
  for (double v : valid.values) CHECK(v <= kValidFp32);
  // Scores move under the two Q/K families (the first 2·2·2 entries); vo_mismatch leaves them exactly alone.
  for (std::size_t k = 0; k < invalid.values.size(); ++k) CHECK((k < 8 ? invalid.values[k] >= kInvalidAtLeast : invalid.values[k] == 0.0));
  for (double v : log.array("invalid_attn_rel_err").values) CHECK(v >= kInvalidAtLeast);
  for (double v : log.array("invalid_logit_rel_err").values) CHECK(v >= kInvalidAtLeast);
  CHECK(log.table("projections").f64("sigma_min").size() == 2 * 2 * 4);
  CHECK(log.table("bilinear_forms").i64("rank") == std::vector<std::int64_t>{2, 2});
  const io::TableData exact = log.table("exactness");
  CHECK(exact.str("slice") == std::vector<std::string>{"qr", "gram", "covariance"});
  for (double g : exact.f64("greedy_match")) CHECK(g == 1.0);
  const auto canon = log.table("canonical");
  for (std::size_t i = 0; i < canon.str("slice").size(); ++i) {
    INFO("row " << i << " slice " << canon.str("slice")[i]);
    CHECK(canon.f64("v_orth_after")[i] <= kStoredOrthonormal);
    if (canon.str("slice")[i] == "qr") CHECK(canon.f64("q_orth_after")[i] <= kStoredOrthonormal);
  }
  const auto summary = log.summary();
  CHECK(std::get<std::int64_t>(summary.at("gauge_dim_total")) == 2 * 2 * (32 * 32 + 32 * 32));
  CHECK(std::get<std::int64_t>(summary.at("lrm")) == 1);  // default placement has Q/K row multipliers
  CHECK(log.heads("s_q").values.size() == 4);

  // The canonical checkpoint: same logits and greedy continuation as the original, W_Q column-orthonormal.
  auto orig = read_model_dir(ck, c10::Device(c10::kCPU), ModelDirKinds::checkpoint).model;
  auto can = read_model_dir(o.write_canonical, c10::Device(c10::kCPU), ModelDirKinds::checkpoint).model;
  at::NoGradGuard no_grad;
  auto g = at::make_generator<at::CPUGeneratorImpl>(5);
  const at::Tensor idx = at::randint(500, {3, 16}, g, at::TensorOptions().dtype(at::kLong));
  CHECK(max_rel(can->logits(idx), orig->logits(idx)) <= kCanonicalRel);
  CHECK(at::equal(inspect::greedy_decode(*can, idx, 12), inspect::greedy_decode(*orig, idx, 12)));
  for (std::int64_t l = 0; l < 2; ++l) {
    const core::AttentionLayer<double> c = attention_layer(*can, l);
    for (std::int64_t h = 0; h < 2; ++h) {
      const core::AttentionHead<double> hd = core::head(c, h);
      CHECK((hd.W_q.transpose() * hd.W_q - core::Mat<double>::Identity(32, 32)).cwiseAbs().maxCoeff() <= kStoredOrthonormal);
    }
    // Idempotent: canonicalising the canonical layer moves nothing beyond rounding.
    const core::AttentionLayer<double> again = core::canonicalize_layer(c).layer;
    CHECK((again.W_k - c.W_k).cwiseAbs().maxCoeff() <= kIdempotent * c.W_k.cwiseAbs().maxCoeff());
    CHECK((again.W_o - c.W_o).cwiseAbs().maxCoeff() <= kIdempotent * c.W_o.cwiseAbs().maxCoeff());
    CHECK(core::canonicalize_layer(c).perm == core::identity_permutation(2));
  }
}

TEST_CASE("inspect fp64: valid transforms at 1e-12, plain model without multipliers", "[inspect]") {
  const std::string ck = test::small_checkpoint("run64", 22, /*multipliers=*/false);
  InspectOptions o = test::quick_options(ck, fs::path(ck).parent_path().string() + "/inspect64.h5");
  o.precision = InspectPrecision::fp64;
  const InspectResult r = run_inspect(o, {"gpt2/inspect", {"test"}, {}, o.run.seed, 1});
  CHECK(r.valid_logit_rel_err_max <= kValidFp64);
  CHECK(r.valid_attn_rel_err_max <= kValidFp64);
  CHECK(r.invalid_logit_rel_err_min >= kInvalidAtLeast);
  CHECK(r.canonical_max_abs_logit_diff <= kCanonicalFp64Abs);
  const io::RunLogReader log(o.run.out);
  for (double v : log.array("valid_score_rel_err").values) CHECK(v <= kValidFp64);
  CHECK(std::get<std::int64_t>(log.summary().at("lrm")) == 0);
}

TEST_CASE("inspect --init-random needs no checkpoint", "[inspect]") {
  InspectOptions o = test::quick_options("", test::inspect_scratch("random") + "/r.h5");
  o.init_random = "nano";
  o.valid_tests = 2;
  const InspectResult r = run_inspect(o, {"gpt2/inspect", {"test"}, {}, o.run.seed, 1});
  CHECK(r.layers == 2);
  CHECK(r.valid_logit_rel_err_max <= kValidFp32);
}

TEST_CASE("inspect: bad settings and mismatched checkpoints are one-line errors", "[inspect]") {
  const std::string ck = test::small_checkpoint("errors", 23);
  const std::string dir = fs::path(ck).parent_path().string();
  InspectOptions o = test::quick_options(ck, dir + "/e.h5");
  o.init_random = "nano";
  CHECK_THROWS_AS(run_inspect(o, {}), io::UsageError);  // both a checkpoint and --init-random
  o.init_random.clear();
  o.sample_len = 1000;
  CHECK_THROWS_AS(run_inspect(o, {}), io::UsageError);  // longer than the context (64)
  o.sample_len = 16;
  o.sample_seqs = 4;
  CHECK_THROWS_AS(run_inspect(o, {}), io::UsageError);  // halves of 32 tokens: S_Q, S_K [32, 32] singular after centring

  // A checkpoint whose config disagrees with its tensors (n_embd 64 -> 96).
  const std::string bad = dir + "/mismatch";
  fs::copy(ck, bad, fs::copy_options::recursive);
  nlohmann::json cfg = nlohmann::json::parse(std::ifstream(bad + "/config.json"));
  REQUIRE(cfg["model"]["n_embd"] == 64);
  cfg["model"]["n_embd"] = 96;
  std::ofstream(bad + "/config.json") << cfg.dump();
  o = test::quick_options(bad, dir + "/m.h5");
  try {
    run_inspect(o, {});
    FAIL("mismatched checkpoint accepted");
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    INFO(msg);
    CHECK(msg.find('\n') == std::string::npos);
    CHECK(msg.find("shape") != std::string::npos);
  }

  // The front door: exit status 1 and one line naming the problem.
  const std::string cmd = std::string(GAUGELAB_BINARY_DIR) + "/gaugelab inspect " + dir + "/nowhere --out " + dir +
                          "/x.h5 2> " + dir + "/stderr.txt";
  const int status = std::system(cmd.c_str());
  CHECK(WEXITSTATUS(status) == 1);
  std::ifstream err(dir + "/stderr.txt");
  std::string last, line;
  int lines_with_error = 0;
  while (std::getline(err, line))
    if (line.find(": error: ") != std::string::npos) {
      ++lines_with_error;
      last = line;
    }
  CHECK(lines_with_error == 1);
  CHECK(last.find("nowhere") != std::string::npos);
}

TEST_CASE("diag heads --checkpoint runs the harness on a checkpoint head through load_checkpoint_head", "[inspect]") {
  const std::string ck = test::small_checkpoint("diag", 24);
  const std::string dir = fs::path(ck).parent_path().string();
  const std::string bin = std::string(GAUGELAB_BINARY_DIR) + "/gaugelab diag heads --quick --threads 1 --checkpoint " + ck;
  const int ok = std::system((bin + " --layer 1 --head 1 --out " + dir + "/diag.h5 > /dev/null 2>&1").c_str());
  REQUIRE(WEXITSTATUS(ok) == 0);
  const io::RunLogReader log(dir + "/diag.h5");
  const auto source = std::get<std::string>(log.summary().at("head_source"));
  CHECK(source.find("layer 1 head 1") != std::string::npos);
  const int bad = std::system((bin + " --layer 5 --head 0 --out " + dir + "/bad.h5 2> " + dir + "/diag_err.txt").c_str());
  CHECK(WEXITSTATUS(bad) == 1);
  std::ifstream err(dir + "/diag_err.txt");
  const std::string text((std::istreambuf_iterator<char>(err)), std::istreambuf_iterator<char>());
  CHECK(text.find("layer 5 is outside [0, 2)") != std::string::npos);
}

}  // namespace GAUGELAB_TU
