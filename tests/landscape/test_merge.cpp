// Model alignment and merging on GPT-2 tensors (gpt2/landscape; seed 001 Prop. 47, Algorithm 3):
// the residual and MLP-unit permutations preserve the function (multipliers included); the tensor
// weight matching equals the core's on the same inputs; a model moved by a known element of the whole
// symmetry group (residual permutation, a random valid G_max element per layer, MLP permutations) is
// aligned back to its own canonical form to the fp32 level, and merging it with that copy gives the
// model's function back; the front door writes the merged checkpoint and the path, and refuses bad input.
#include <algorithm>
#include <filesystem>
#include <fstream>

#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/from_blob.h>

#include "core/gauge_align.hpp"
#include "core/gauge_sampling.hpp"
#include "core/random.hpp"
#include "gpt2/inspect/layer_tensors.hpp"
#include "gpt2/inspect/transforms.hpp"
#include "gpt2/landscape/align_model.hpp"
#include "gpt2/model/checkpoint.hpp"
#include "support/process.hpp"
#include "tests/inspect/inspect_helpers.hpp"
#include "tests/gpt2/gpt2_catch.hpp"  // last: puts Catch's CHECK back over c10's
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab;

namespace {

// fp32 logits of a 2-layer model after moves that each round the weights once: ~1e-7 relative per
// move; 1e-5 leaves room for a few moves, and an invalid move (a wrong permutation) shows at O(1).
constexpr double kLogitTol = 1e-5;

at::Tensor probe(std::int64_t vocab) {
  core::Rng rng(5);
  std::vector<std::int64_t> ids(3 * 12);
  for (auto& v : ids) v = static_cast<std::int64_t>(core::uniform01(rng) * static_cast<double>(vocab - 1));
  return at::from_blob(ids.data(), {3, 12}, at::TensorOptions().dtype(at::kLong)).clone();
}

double logit_rel(const gpt2::GPT& m, const at::Tensor& ref, const at::Tensor& idx) {
  at::NoGradGuard no_grad;
  const at::Tensor y = m.logits(idx).to(at::kDouble), r = ref.to(at::kDouble);
  return (y - r).norm().item<double>() / r.norm().item<double>();
}

at::Tensor logits_of(const gpt2::GPT& m, const at::Tensor& idx) {
  at::NoGradGuard no_grad;
  return m.logits(idx);
}

/// B = A moved by a random element of the whole symmetry group the aligner removes.
void move_randomly(gpt2::GPT& m, core::Rng& rng) {
  const auto& c = m.config();
  gpt2::permute_residual(m, core::random_permutation(rng, c.n_embd));
  for (std::int64_t l = 0; l < c.n_layer; ++l) {
    gpt2::apply_layer_gauge(m, l, gpt2::inspect::random_valid_gauge(rng, c.n_head, c.head_dim(), c.head_dim(), 0.3));
    gpt2::permute_mlp_units(m.h[static_cast<std::size_t>(l)], core::random_permutation(rng, 4 * c.n_embd));
  }
}

}  // namespace

TEST_CASE("residual and MLP-unit permutations preserve the function, multipliers included", "[landscape]") {
  auto m = test::small_model(21);  // random multipliers on every site of the default placement
  const at::Tensor idx = probe(m->config().vocab_size), ref = logits_of(*m, idx);
  core::Rng rng(1);
  gpt2::permute_residual(*m, core::random_permutation(rng, m->config().n_embd));
  CHECK(logit_rel(*m, ref, idx) < kLogitTol);
  for (auto& b : m->h) gpt2::permute_mlp_units(b, core::random_permutation(rng, b.c_fc.out_features()));
  CHECK(logit_rel(*m, ref, idx) < kLogitTol);
  // and a permutation that is not a symmetry (MLP rows without their columns) is visible
  auto bad = test::small_model(21);
  {
    at::NoGradGuard no_grad;
    auto& w = bad->h[0].c_fc.weight;
    w.copy_(w.flip(0));
  }
  CHECK(logit_rel(*bad, ref, idx) > 1e-2);
}

TEST_CASE("tensor unit matching equals the core's on the same weights", "[landscape]") {
  auto a = test::small_model(31, false), b = test::small_model(32, false);
  for (std::size_t l = 0; l < a->h.size(); ++l) {
    const auto& ba = a->h[l];
    const auto& bb = b->h[l];
    auto in_rows = [](const gpt2::Block& blk) {  // [H, d + 1]: W_fc rows and the bias
      core::Mat<double> w = gpt2::to_mat(blk.c_fc.weight.to(at::kDouble));
      core::Mat<double> out(w.rows(), w.cols() + 1);
      out << w, gpt2::to_vec(blk.c_fc.bias.to(at::kDouble));
      return out;
    };
    auto out_rows = [](const gpt2::Block& blk) {  // [H, d]: columns of W_proj as rows
      return core::Mat<double>(gpt2::to_mat(blk.mlp_proj.weight.to(at::kDouble)).transpose());
    };
    CHECK(gpt2::match_mlp_units(ba, bb) == core::match_units<double>(in_rows(ba), out_rows(ba), in_rows(bb), out_rows(bb)));
  }
}

TEST_CASE("a model moved by a known symmetry is aligned back to the fp32 level", "[landscape]") {
  for (const bool multipliers : {false, true})
    for (const auto slice : {gpt2::inspect::Slice::qr, gpt2::inspect::Slice::gram}) {
      auto a = test::small_model(41, multipliers), b = test::small_model(41, multipliers);
      const at::Tensor idx = probe(a->config().vocab_size), ref = logits_of(*a, idx);
      core::Rng rng(7);
      move_randomly(*b, rng);
      REQUIRE(logit_rel(*b, ref, idx) < kLogitTol);  // the move is a symmetry
      const double before = gpt2::parameter_distance(*a, *b);
      gpt2::AlignSettings s;
      s.slice = slice;
      const gpt2::AlignReport r = gpt2::align_models(*a, *b, s);
      INFO("multipliers " << multipliers << " slice " << gpt2::inspect::slice_name(slice));
      REQUIRE(r.steps.back() == "mlp");
      const double after = gpt2::parameter_distance(*a, *b);
      // every weight of the two is now the same float32 number up to a few roundings: relative to
      // the parameters' norm (~30) the distance drops by > 5 orders of magnitude from O(1)
      double norm = 0;
      for (auto& [name, t] : a->named_parameters()) norm += t.to(at::kDouble).pow(2).sum().item<double>();
      CHECK(before > 0.1 * std::sqrt(norm));
      CHECK(after < 1e-5 * std::sqrt(norm));
      CHECK(logit_rel(*a, ref, idx) < kLogitTol);  // A's canonical form is A's function
      CHECK(logit_rel(*b, ref, idx) < kLogitTol);
      auto merged = test::small_model(99, multipliers);  // same parameters (values overwritten)
      gpt2::interpolate_parameters(*merged, *a, *b, 0.5);
      CHECK(logit_rel(*merged, ref, idx) < kLogitTol);  // merging with a moved copy of itself: the model back
    }
}

TEST_CASE("without a slice, a model moved by an orthogonal symmetry is aligned back as trained", "[landscape]") {
  auto a = test::small_model(45, false), b = test::small_model(45, false);
  const auto& c = a->config();
  core::Rng rng(9);
  gpt2::permute_residual(*b, core::random_permutation(rng, c.n_embd));
  for (std::int64_t l = 0; l < c.n_layer; ++l) {
    core::LayerGauge<double> g;
    for (std::int64_t i = 0; i < c.n_head; ++i) {
      g.s.push_back(core::random_orthogonal<double>(rng, c.head_dim()));
      g.c.push_back(core::random_orthogonal<double>(rng, c.head_dim()));
    }
    g.perm = core::random_permutation(rng, c.n_head);
    gpt2::apply_layer_gauge(*b, l, g);
    gpt2::permute_mlp_units(b->h[static_cast<std::size_t>(l)], core::random_permutation(rng, 4 * c.n_embd));
  }
  auto a0 = test::small_model(45, false);
  gpt2::AlignSettings s;
  s.canonicalize = false;
  const gpt2::AlignReport r = gpt2::align_models(*a, *b, s);
  CHECK(std::find(r.steps.begin(), r.steps.end(), "canonical") == r.steps.end());
  CHECK(gpt2::parameter_distance(*a, *a0) == 0);  // A is left as trained
  CHECK(gpt2::parameter_distance(*a, *b) < 1e-4);
}

TEST_CASE("without alignment, the merge of a model and its moved copy is a different function", "[landscape]") {
  auto a = test::small_model(51, false), b = test::small_model(51, false);
  const at::Tensor idx = probe(a->config().vocab_size), ref = logits_of(*a, idx);
  core::Rng rng(8);
  move_randomly(*b, rng);
  gpt2::AlignSettings s;
  s.level = gpt2::AlignLevel::none;
  gpt2::align_models(*a, *b, s);
  auto merged = test::small_model(99, false);
  gpt2::interpolate_parameters(*merged, *a, *b, 0.5);
  CHECK(logit_rel(*merged, ref, idx) > 1e-2);
}

TEST_CASE("merge-models: the merged checkpoint, the path log, and one-line refusals", "[landscape][cli]") {
  const std::string dir = test::inspect_scratch("merge_cli");
  const std::string a = test::small_checkpoint("merge_cli_a", 61), b = test::small_checkpoint("merge_cli_b", 62);
  // a nanoGPT token file: raw uint16 ids below the nano vocabulary (500)
  const std::string data = dir + "/val.bin";
  {
    std::ofstream f(data, std::ios::binary);
    core::Rng rng(3);
    for (int k = 0; k < 4000; ++k) {
      const auto id = static_cast<std::uint16_t>(core::uniform01(rng) * 499);
      f.write(reinterpret_cast<const char*>(&id), sizeof id);
    }
  }
  const std::string out = dir + "/merged";
  const std::string common = " --data " + data + " --path-points 3 --batches 2 --batch-size 2 --seq-len 16 --threads 1";
  const auto r = test::run_gaugelab("merge-models " + a + " " + b + " --out " + out + common);
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(std::filesystem::exists(out + "/model.safetensors"));
  CHECK(std::filesystem::exists(out + "/merge.h5"));
  CHECK(r.output.find("barrier") != std::string::npos);
  // the merged checkpoint is a checkpoint: eval reads it
  CHECK(test::run_gaugelab("eval " + out + " --data " + data + " --batches 1 --batch-size 2 --seq-len 16").status == 0);
  // an existing --out is refused (2) and left as it was
  const auto t0 = std::filesystem::last_write_time(out + "/model.safetensors");
  const auto again = test::run_gaugelab("merge-models " + a + " " + b + " --out " + out + common);
  CHECK(again.status == 2);
  CHECK(test::count_lines(again.output.substr(again.output.find("error"))) == 1);
  CHECK(std::filesystem::last_write_time(out + "/model.safetensors") == t0);
  // models of different configurations: a runtime failure (1), one line
  const std::string other = dir + "/other";
  {
    gpt2::ModelConfig c = test::nano_config();
    c.n_head = 4;
    gpt2::GPT m(c, 1);
    gpt2::save_checkpoint(other, m, gpt2::Vocabulary{});
  }
  const auto mismatch = test::run_gaugelab("merge-models " + a + " " + other + " --out " + dir + "/m2 --threads 1");
  CHECK(mismatch.status == 1);
  CHECK(mismatch.output.find("configuration") != std::string::npos);
  CHECK(test::run_gaugelab("merge-models " + a + " " + b + " --out " + dir + "/m3 --slice covariance").status == 2);
  // without a slice, a run still aligns (orthogonal part only) and keeps the logits
  const auto none = test::run_gaugelab("merge-models " + a + " " + b + " --out " + dir + "/m5 --slice none --threads 1");
  CHECK(none.status == 0);
  CHECK(test::run_gaugelab("merge-models " + a + " " + b + " --out " + dir + "/m4 --t 1.5").status == 2);
  // the harness on a real head: B's head as the teacher, the layer's real inputs from the token file
  const auto diag = test::run_gaugelab("diag heads --quick --checkpoint " + a + " --teacher-checkpoint " + b + " --data " +
                                       data + " --layer 1 --head 1 --rules sgd --wrappers none,full --kappa 1,100 " +
                                       "--gauges 2 --tokens 16 --threads 1 --out " + dir + "/diag.h5");
  INFO(diag.output);
  CHECK(diag.status == 0);
  CHECK(diag.output.find("teacher " + b) != std::string::npos);
  CHECK(diag.output.find("inputs from " + data) != std::string::npos);
}

}  // namespace GAUGELAB_TU
