// `gaugelab inspect CKPT`: seed 001's checkpoint analysis (§6–§7, App. G, Tables 3–9, Cor. 4) for any
// GPT-2-format checkpoint, as a LibTorch-free function for the front door (cli/verb_inspect.cpp).
// Prints its settings first and a one-screen summary last; writes one HDF5 log (kind "gpt2/inspect"):
//   /tables/projections        Table 3: per layer, head, matrix (W_Q, W_K, W_V, W_O): σ_min, σ_max, κ, rank
//   /tables/bilinear_forms     Table 4: per layer: rank of the h stacked forms, σ_max, smallest σ above tol, κ
//   /tables/valid_transforms   Tables 5–6: per random G_max element: worst layer's score and attention-output
//                              errors, the model-logit error; /arrays/valid_{score,attn}_rel_err [tests, layers],
//                              /arrays/valid_logit_rel_err [tests]; /tables/valid_distribution (percentiles)
//   /tables/invalid_transforms Table 7: per family and draw; /arrays/invalid_{score,attn}_rel_err [3, n, layers],
//                              /arrays/invalid_logit_rel_err [3, n] (families asym_qk, wrong_inverse, vo_mismatch)
//   /tables/canonical          Table 8: per slice, layer, canonical head: metrics before and after
//   /tables/exactness          Table 9: per slice: teacher-forced |Δlogit| mean/max, greedy-decode match rates
//   /tables/lrm_heads, /heads/s_q, /heads/s_k   LRM checkpoints: per-head scales, drift, what GaugeFix leaves
//   /summary                   Cor. 4 counts and the headline numbers
#pragma once

#include <cstdint>
#include <string>

#include "core/choice.hpp"
#include "io/options.hpp"
#include "io/provenance.hpp"
#include "io/run_flags.hpp"

namespace gaugelab::gpt2 {

/// The model's arithmetic for the transforms and the exactness checks (--precision): float32 (seed 001) or float64.
enum class InspectPrecision { fp32, fp64 };
inline const core::ChoiceTable<InspectPrecision>& inspect_precision_choices() {
  static const core::ChoiceTable<InspectPrecision> t = {{"fp32", InspectPrecision::fp32},
                                                        {"fp64", InspectPrecision::fp64}};
  return t;
}
inline const char* word(InspectPrecision v) { return core::choice_name(inspect_precision_choices(), v); }

struct InspectOptions {
  std::string checkpoint;              // our checkpoint directory or a Hugging Face GPT-2 export
  std::string init_random;             // instead of a checkpoint: a randomly initialised preset (tiny, gpt2, ...), --seed
  std::string multipliers = "default"; // placement for a Hugging Face directory or --init-random (ours carry theirs)
  std::string device = "cpu";          // cpu, cuda, cuda:N (the float64 linear algebra always runs on the CPU)
  InspectPrecision precision = InspectPrecision::fp32;  // model arithmetic for transforms and exactness: fp32
                                                        // (seed 001), fp64 (tests)
  std::string data;                    // token file for prompts and the activation sample; empty: seeded uniform ids
  std::int64_t valid_tests = 20;       // random G_max elements applied to the whole model (seed 001: 20 per model)
  double perturbation = 0.1;           // δ of the valid draws A, C = Q·(I + δG) (core::near_orthogonal; the seed gives none)
  std::int64_t invalid_tests = 3;      // draws per invalid family (seed 001: one)
  double invalid_kappa = 10;           // condition number of the invalid families' matrices (core::random_gl)
  std::int64_t prompts = 10;           // fixed prompts for logits and greedy decoding (seed 001: ten)
  std::int64_t prompt_len = 16;        // tokens per prompt
  std::int64_t generate = 20;          // greedy tokens decoded per prompt (Table 9)
  std::int64_t sample_seqs = 4;        // activation sample for S_Q, S_K (Table 8): sequences ...
  std::int64_t sample_len = 64;        // ... of this many tokens; the first also feeds the attention-output errors
  double rank_tol = 1e-6;              // numerical rank: singular values > rank_tol·σ_max (Tables 3–4)
  std::string canonical = "qr";        // slice written by --write-canonical: qr (Algorithm 1), gram, covariance
  std::string write_canonical;         // directory for the canonical checkpoint; empty: none
  io::RunFlags run;                    // --out (required), --force, --threads, --seed
};

/// Headline numbers (also in /summary).
struct InspectResult {
  std::int64_t layers = 0, heads = 0, d_k = 0, d_v = 0;
  std::int64_t gauge_dim_per_layer = 0, gauge_dim_total = 0;  // Cor. 4
  std::int64_t a7_full_rank_layers = 0;                       // Table 4
  double valid_logit_rel_err_max = 0;                         // Tables 5–6
  double valid_attn_rel_err_max = 0;
  double invalid_logit_rel_err_min = 0;                       // Table 7 (smallest over families and draws)
  double canonical_max_abs_logit_diff = 0;                    // Table 9, the --canonical slice
  double canonical_greedy_match = 0;                          // fraction of prompts decoded identically
};

/// Throws io::UsageError for bad settings, std::runtime_error for an unreadable or mismatched checkpoint.
InspectResult run_inspect(const InspectOptions& options, io::Provenance prov);

/// The options of `gaugelab inspect`, bound to the fields of `o` (their defaults), declared once
/// (gpt2/inspect/options.cpp); the front door parses with them.
io::Options inspect_options(InspectOptions& o);

}  // namespace gaugelab::gpt2
