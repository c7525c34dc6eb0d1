// The loss-landscape tools on GPT-2 checkpoints (seed 001 §5.3, §7.4, App. H.3), LibTorch-free
// signatures for the front door (cli/verb_landscape.cpp).
//
// `gaugelab merge-models A B --out DIR`: B aligned to A (align_model.hpp, cumulative levels none <
// residual < attention < full) and the two interpolated at --t, written as a checkpoint in DIR; with
// --data, the validation loss along the linear path θ(t) = (1−t)·θ_A + t·θ_B for every level up to
// --align, and its barrier. DIR/merge.h5 (kind "gpt2/merge-models"):
//   /tables/alignment    level, step, distance: ‖θ_A − θ_B‖_F after each alignment step
//   /tables/heads        level, layer, position, distance2: matched heads' distance after Procrustes
//   /tables/preservation level, model (A or B), logit_rel_err, logit_max_abs: each end's logits after
//                        its moves against the model as loaded (fixed windows; the fp32 level)
//   /tables/path         level, t, loss (with --data)
//   /summary             barrier_<level>, align_seconds_<level> (the alignment alone), loss_a, loss_b,
//                        loss_merged, logit_rel_err_max, seconds
// Barrier: max over the path's points of L(θ(t)) − [(1−t)·L(θ_A) + t·L(θ_B)] (Frankle et al.'s linear
// one; ≥ 0 up to the grid when the path is convex in loss).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "io/options.hpp"
#include "io/provenance.hpp"
#include "io/run_flags.hpp"

namespace gaugelab::gpt2 {

struct MergeOptions {
  std::string model_a;                   // checkpoint A (ours or Hugging Face): the reference B is aligned to
  std::string model_b;                   // checkpoint B, same configuration
  std::string align = "full";            // level of the written model: none, residual, attention, full
  std::string slice = "qr";              // canonical slice of the attention step: qr (Algorithm 1), gram, or none
                                         // (no slice: heads matched over S_h × O(d_k) × O(d_v) as trained)
  std::string head_cost = "procrustes";  // head matching cost: procrustes (exact), seed (Algorithm 3's)
  double t = 0.5;                        // where on the path the written model sits (0 = A, 1 = aligned B)
  std::string data;                      // token file: loss along the path (and the preservation windows)
  std::int64_t path_points = 11;         // points t = 0, 1/(n−1), ..., 1 per level (with --data)
  std::int64_t batch_size = 8;           // sequences per validation batch
  std::int64_t batches = 8;              // fixed batches, evenly spread over the token file
  std::int64_t seq_len = 0;              // tokens per sequence; 0 = the model's context
  std::string device = "cpu";            // cpu, cuda, cuda:N
  io::RunFlags run;                      // --out (directory, required), --force, --threads, --seed
};

struct MergeResult {
  double loss_a = 0, loss_b = 0, loss_merged = 0;  // NaN without --data
  std::map<std::string, double> barrier;           // per level evaluated (with --data)
  double logit_rel_err_max = 0;                    // worst function-preservation error of any alignment
};

/// Throws io::UsageError for bad settings, std::runtime_error for unreadable or mismatched checkpoints.
MergeResult run_merge_models(const MergeOptions& options, io::Provenance prov);

}  // namespace gaugelab::gpt2

namespace gaugelab::gpt2 {

// `gaugelab hessian CKPT --data FILE --out LOG.h5`: the loss Hessian on one fixed batch (hessian.hpp), at the
// checkpoint as loaded and at --gauges random elements of the attention gauge group applied to it (the same
// function): per head, the curvature vᵀHv/‖v‖² along a random Lie-algebra tangent (vertical), a random
// direction of the head's blocks, and its horizontal part, with Prop. 9's identity vᵀHv = −∇L·a checked;
// the top eigenvalues of H, of the quotient P·H·P and of H in the gauge-covariant metric, by Lanczos. Log (kind "gpt2/hessian"):
//   /tables/curvature  gauge, layer, head, kind (vertical, random, horizontal), rayleigh, identity_rel_err
//   /tables/spectrum   gauge, space (full, quotient, metric), rank, eigenvalue: H, P·H·P (Euclidean quotient), and
//                      M^{-1/2}·H·M^{-1/2} with M the heads' gauge-covariant metric (model/head_projection.hpp)
//   /tables/cost       gauge, space, products, seconds
//   /summary           loss, grad_norm, dim, lambda_full, lambda_quotient (as loaded), their largest relative
//                      change over the gauges, seconds_per_hvp
struct HessianOptions {
  std::string checkpoint;          // our checkpoint or a Hugging Face directory (attention without multipliers
                                   // after folding: any; the quotient needs no QK-norm)
  std::string data;                // token file: the fixed batch (windows evenly spread); required
  std::int64_t batch_size = 4;     // sequences in the batch
  std::int64_t seq_len = 0;        // tokens per sequence; 0 = the model's context
  std::int64_t top_k = 3;          // eigenvalues per space (Lanczos)
  double lanczos_tol = 1e-4;       // Spectra's relative tolerance on the Ritz values
  std::int64_t gauges = 2;         // random gauge-group elements the spectra are re-measured under (0: none)
  double gauge_kappa = 10;         // condition number of each head's S_i, C_i (core::random_gl), plus a permutation
  std::string device = "cpu";      // cpu, cuda, cuda:N
  io::RunFlags run;                // --out (HDF5, required), --force, --threads, --seed
};

struct HessianResult {
  double loss = 0, lambda_full = 0, lambda_quotient = 0;
  double lambda_metric = 0;                           // top eigenvalue of M^{-1/2}·H·M^{-1/2} (hessian.hpp)
  double full_change_max = 0, quotient_change_max = 0, metric_change_max = 0;  // largest |λ(g) − λ| / |λ| over gauges
  double seconds_per_hvp = 0;
};

HessianResult run_hessian(const HessianOptions& options, io::Provenance prov);

/// The options of `gaugelab merge-models`, bound to the fields of `o` (their defaults), declared once
/// (gpt2/landscape/options.cpp); the front door parses with them.
io::Options merge_models_options(MergeOptions& o);
/// The options of `gaugelab hessian`, bound to the fields of `o` (their defaults), declared once
/// (gpt2/landscape/options.cpp); the front door parses with them.
io::Options hessian_options(HessianOptions& o);

}  // namespace gaugelab::gpt2
