// The options of `gaugelab merge-models and hessian`, declared once in their tier (name, help, range or choices):
// the front door (cli/) parses with them; nothing else repeats them. No LibTorch here.
#include "gpt2/landscape/api.hpp"
#include "io/options.hpp"

namespace gaugelab::gpt2 {

io::Options merge_models_options(MergeOptions& o) {
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
      .add("batches", &o.batches, "fixed validation batches, evenly spread over the file (at most its distinct windows)",
           io::Range::at_least(1))
      .add("seq-len", &o.seq_len, "tokens per sequence, 0 = the model's context", io::Range::non_negative())
      .add("device", &o.device, "cpu, cuda or cuda:N");
  io::add_run_flags(opts, o.run, "directory of the merged checkpoint and merge.h5 (required)");
  return opts;
}

io::Options hessian_options(HessianOptions& o) {
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
  return opts;
}

}  // namespace gaugelab::gpt2
