// THE table: every verb of `gaugelab`, and the adapter that runs it.
// A newcomer reads this file to see everything the tool does.
#include "verbs.hpp"

namespace gaugelab::cli {

const std::vector<Verb>& verbs() {
  static const std::vector<Verb> table = {
      // verb        summary                                                           runs
      {"toy",      "one toy run: relu, factor-scalar, factor-matrix, muon, wd-gram, hyperball, noise-wd", verb_toy},
      {"sweep",    "a grid of toy runs over comma lists of numeric flags x seeds (OpenMP, --shard i/n)", verb_sweep},
      {"merge",    "join sweep shard files into one log",                              verb_merge},
      {"diag",     "one-step gauge-sensitivity harness (`diag heads`)",                verb_diag},
      {"prepare",  "text/JSONL -> GPT-2 BPE token shards (or --synthetic corpus)",     verb_prepare},
      {"train",    "GPT-2 (+LRM) training under a condition of gpt2/train/conditions.hpp; resumable", verb_train},
      {"eval",     "validation loss / logits dump from a checkpoint",                  verb_eval},
      {"generate", "text generation from a checkpoint",                                verb_generate},
      {"inspect",  "gauge analysis of a checkpoint (seed 001 Tables 3-9)",             verb_inspect},
      {"merge-models", "align checkpoint B to A (seed 001 Alg. 3 + MLP units), interpolate, loss barrier", verb_merge_models},
      {"hessian",  "loss Hessian: curvature along gauge orbits, full vs quotient sharpness (Lanczos)", verb_hessian},
      {"export",   "our checkpoint -> Hugging Face GPT-2 safetensors (multipliers merged)", verb_export},
      {"import",   "Hugging Face GPT-2 safetensors -> our checkpoint (multipliers at 1)", verb_import},
      {"plot",     "curves of run logs on shared axes, differing settings in the legend; --watch", verb_plot},
      {"compare",  "table of run logs: the settings that differ, the summaries",      verb_compare},
      {"tensorboard", "run logs -> TensorBoard event files: series, per-head series, tables, settings", verb_tensorboard},
      {"info",     "build, library and machine information",                          verb_info},
  };
  return table;
}

}  // namespace gaugelab::cli
