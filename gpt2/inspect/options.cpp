// The options of `gaugelab inspect`, declared once in their tier (name, help, range or choices):
// the front door (cli/) parses with them; nothing else repeats them. No LibTorch here.
#include "gpt2/inspect/api.hpp"
#include "io/choice_option.hpp"
#include "io/options.hpp"

namespace gaugelab::gpt2 {

io::Options inspect_options(InspectOptions& o) {
  io::Options opts("inspect",
                   "Gauge analysis of a GPT-2 checkpoint (seed 001 Tables 3-9, Cor. 4): assumption checks, random valid "
                   "gauges vs the three invalid families, canonical slices (QR, Gram, covariance) and their exactness, "
                   "gauge dimension counts, LRM multiplier scales. One HDF5 log (--out).");
  opts.add("checkpoint", &o.checkpoint, "our checkpoint directory or a Hugging Face GPT-2 export directory")
      .positional("checkpoint")
      .add("init-random", &o.init_random, "inspect a randomly initialised preset instead (nano, tiny, gpt2, ...; --seed)")
      .add("multipliers", &o.multipliers, "multiplier placement for a Hugging Face directory or --init-random")
      .add("device", &o.device, "cpu, cuda or cuda:N (the float64 linear algebra runs on the CPU)");
  io::add_choice(opts, "precision", &o.precision, "model arithmetic for transforms and exactness",
                 inspect_precision_choices())
      .add("data", &o.data, "token file for the prompts and the activation sample (default: seeded uniform ids)")
      // At most 10^6: each test is a full forward pass of the model (10^6 is days at 124M), and the
      // per-test arrays are sized by it before the first test (10^12 asked for a 16 TB file).
      .add("valid-tests", &o.valid_tests, "random G_max elements applied to the whole model", io::Range::closed(1, 1e6))
      .add("perturbation", &o.perturbation, "delta of the valid draws Q(I + delta G)", io::Range{0.0, 0.5, false, true})
      .add("invalid-tests", &o.invalid_tests, "draws per invalid family", io::Range::closed(1, 1e6))
      .add("invalid-kappa", &o.invalid_kappa, "condition number of the invalid families' matrices", io::Range{1.0, {}, true, false})
      .add("prompts", &o.prompts, "fixed prompts (logit errors, Table 9)", io::Range::at_least(1))
      .add("prompt-len", &o.prompt_len, "tokens per prompt", io::Range::at_least(1))
      .add("generate", &o.generate, "greedy tokens decoded per prompt (Table 9)", io::Range::at_least(1))
      .add("sample-seqs", &o.sample_seqs, "sequences in the activation sample (S_Q, S_K)", io::Range::at_least(1))
      .add("sample-len", &o.sample_len, "tokens per sample sequence", io::Range::at_least(2))
      .add("rank-tol", &o.rank_tol, "numerical rank: singular values > rank-tol * sigma_max", io::Range{1e-7, 1.0, false, true})
      .add("canonical", &o.canonical, "slice written by --write-canonical", {"qr", "gram", "covariance"})
      .add("write-canonical", &o.write_canonical, "write the canonical checkpoint to this directory");
  io::add_run_flags(opts, o.run, "HDF5 log of the analysis (required)");
  return opts;
}

}  // namespace gaugelab::gpt2
