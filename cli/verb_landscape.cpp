// `gaugelab merge-models A B --out DIR` and `gaugelab hessian CKPT` -> gpt2/landscape/api.hpp (no LibTorch header here).
#include <iostream>

#include "io/options.hpp"
#include "io/provenance.hpp"
#include "io/run_flags.hpp"
#include "verb_skeleton.hpp"
#include "verbs.hpp"

#ifdef GAUGELAB_WITH_TORCH
#include "gpt2/landscape/api.hpp"
#endif

namespace gaugelab::cli {

#ifdef GAUGELAB_WITH_TORCH

int verb_merge_models(const Args& args) {
  gpt2::MergeOptions o;
  io::Options opts("merge-models",
                   "Align checkpoint B to checkpoint A (seed 001 Algorithm 3: residual-stream permutation, canonical "
                   "slice + Hungarian head matching + per-head Procrustes, MLP unit matching) and write their "
                   "interpolation at --t as a checkpoint in --out; with --data, the validation loss along the linear "
                   "path for every alignment level and its barrier (DIR/merge.h5).");
  opts.add("model-a", &o.model_a, "checkpoint A, the reference (ours or a Hugging Face directory)")
      .positional("model-a")
      .add("model-b", &o.model_b, "checkpoint B, aligned to A (same configuration)")
      .positional("model-b")
      .add("align", &o.align, "symmetries removed before interpolating (cumulative)", {"none", "residual", "attention", "full"})
      .add("slice", &o.slice, "canonical slice of the attention step (none: match heads as trained, orthogonal part only)",
           {"qr", "gram", "none"})
      .add("head-cost", &o.head_cost, "head matching cost: procrustes (exact minimiser) or seed (Algorithm 3)",
           {"procrustes", "seed"})
      .add("t", &o.t, "where the written model sits on the path (0 = A, 1 = aligned B)", io::Range::closed(0, 1))
      .add("data", &o.data, "token file: validation loss along the path for every level up to --align")
      .add("path-points", &o.path_points, "points on the path, t = 0 ... 1", io::Range::closed(2, 1001))
      .add("batch-size", &o.batch_size, "sequences per validation batch", io::Range::at_least(1))
      .add("batches", &o.batches, "fixed validation batches, evenly spread over the file", io::Range::at_least(1))
      .add("seq-len", &o.seq_len, "tokens per sequence, 0 = the model's context", io::Range::non_negative())
      .add("device", &o.device, "cpu, cuda or cuda:N");
  io::add_run_flags(opts, o.run, "directory of the merged checkpoint and merge.h5 (required)");
  if (!opts.parse(args)) return 0;
  print_verb_settings("merge-models", opts);
  gpt2::run_merge_models(o, verb_provenance("gpt2/merge-models", "merge-models", args, opts.to_json(), o.run.seed));
  return 0;
}

int verb_hessian(const Args& args) {
  gpt2::HessianOptions o;
  io::Options opts("hessian",
                   "The loss Hessian of a checkpoint on one fixed batch (seed 001 Prop. 9, §5.1): curvature along the "
                   "attention gauge orbits (Lie-algebra tangents) against random and horizontal directions, with "
                   "v'Hv = -grad.a checked; the top eigenvalues of H and of the quotient PHP (Lanczos), also under "
                   "random gauges of the same function. One HDF5 log (--out).");
  opts.add("checkpoint", &o.checkpoint, "our checkpoint directory or a Hugging Face export directory")
      .positional("checkpoint")
      .add("data", &o.data, "token file: the fixed batch the loss is taken on (required)")
      .add("batch-size", &o.batch_size, "sequences in the batch", io::Range::closed(1, 4096))
      .add("seq-len", &o.seq_len, "tokens per sequence, 0 = the model's context", io::Range::non_negative())
      .add("top-k", &o.top_k, "eigenvalues per space", io::Range::closed(1, 64))
      .add("lanczos-tol", &o.lanczos_tol, "Lanczos relative tolerance on the Ritz values", io::Range{1e-12, 0.1, true, true})
      .add("gauges", &o.gauges, "random gauge-group elements to re-measure under", io::Range::closed(0, 100))
      .add("gauge-kappa", &o.gauge_kappa, "condition number of each head's random S and C", io::Range::closed(1, 1e6))
      .add("device", &o.device, "cpu, cuda or cuda:N");
  io::add_run_flags(opts, o.run, "HDF5 log (required)");
  if (!opts.parse(args)) return 0;
  print_verb_settings("hessian", opts);
  gpt2::run_hessian(o, verb_provenance("gpt2/hessian", "hessian", args, opts.to_json(), o.run.seed));
  return 0;
}

#else  // built without the GPT-2 tier

int verb_hessian(const Args&) { return not_built("hessian", "Hessian analysis; configure with GAUGELAB_WITH_TORCH=ON"); }

int verb_merge_models(const Args&) {
  return not_built("merge-models", "model alignment; configure with GAUGELAB_WITH_TORCH=ON");
}

#endif

}  // namespace gaugelab::cli
