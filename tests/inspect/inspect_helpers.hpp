// Shared helpers of the inspect tests: a small GPT-2 with non-trivial attention, saved as a checkpoint.
#pragma once

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>

#include "gpt2/model/checkpoint.hpp"
#include "gpt2/model/model_dir.hpp"
#include "gpt2/inspect/api.hpp"
#include "gpt2/model/model.hpp"
#include "tests/gpt2/gpt2_test_helpers.hpp"

namespace gaugelab::test {

inline std::string inspect_scratch(const std::string& name) {
  // a path, not std::string + "..." + name: GCC 12 warns falsely (-Warray-bounds) on that chain once inlined
  const std::filesystem::path dir = std::filesystem::path(GAUGELAB_BINARY_DIR) / "test_inspect_scratch" / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

/// The nano model (2 layers, 2 heads, d 64, vocab 500) with weights N(0, 1/d) instead of the 0.02 init,
/// so attention scores are of order 1 and an invalid Q/K move changes the output visibly; random
/// multipliers (default placement: rows+columns on Q, K, V, O, MLP), biases and LayerNorm gains, so the
/// extraction must merge multipliers and every gauge must move the biases.
inline std::unique_ptr<gpt2::GPT> small_model(std::uint64_t seed, bool multipliers = true) {
  gpt2::ModelConfig c = nano_config();
  if (!multipliers) c.lrm = gpt2::LrmPlacement::none();
  auto m = std::make_unique<gpt2::GPT>(c, seed);
  randomize_role(*m, gpt2::ParamRole::matrix, seed + 3, 1.0 / std::sqrt(static_cast<double>(c.n_embd)));
  randomize_role(*m, gpt2::ParamRole::embedding, seed + 4, 1.0);
  if (multipliers) randomize_multipliers(*m, seed + 1);
  randomize_biases_norms(*m, seed + 2);
  m->train(false);
  return m;
}

/// small_model saved as our checkpoint in scratch dir `name`; returns the checkpoint directory.
inline std::string small_checkpoint(const std::string& name, std::uint64_t seed, bool multipliers = true) {
  const std::string dir = inspect_scratch(name) + "/ckpt";
  auto m = small_model(seed, multipliers);
  gpt2::save_checkpoint(dir, *m, gpt2::Vocabulary{});
  return dir;
}

/// Options for a quick run (seconds) on `checkpoint`, log at `out`.
inline gpt2::InspectOptions quick_options(const std::string& checkpoint, const std::string& out) {
  gpt2::InspectOptions o;
  o.checkpoint = checkpoint;
  o.valid_tests = 6;
  o.invalid_tests = 2;
  o.prompts = 4;
  o.prompt_len = 8;
  o.generate = 8;
  o.sample_seqs = 4;  // two sequences fit the covariance slice, two measure it (each half > d_k + 1 = 33 tokens)
  o.sample_len = 24;
  o.run.out = out;
  o.run.force = true;
  o.run.threads = 1;
  o.run.seed = 7;
  return o;
}

}  // namespace gaugelab::test
