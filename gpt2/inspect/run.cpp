// `gaugelab inspect`: loads the model, runs every table of seed 001 App. G on it, logs and summarises.
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <vector>

#include <ATen/core/grad_mode.h>
#include <ATen/ops/empty.h>

#include "core/gauge_sampling.hpp"
#include "data/token_files.hpp"
#include "gpt2/model/checkpoint.hpp"
#include "gpt2/model/model_dir.hpp"
#include "gpt2/model/vocab_ids.hpp"
#include "gpt2/model/runtime.hpp"
#include "gpt2/inspect/api.hpp"
#include "gpt2/inspect/checks.hpp"
#include "gpt2/inspect/log.hpp"
#include "gpt2/inspect/layer_tensors.hpp"
#include "gpt2/inspect/transforms.hpp"
#include "io/elapsed.hpp"
#include "io/options.hpp"
#include "io/run_log.hpp"

namespace gaugelab::gpt2 {

namespace core = gaugelab::core;
using namespace inspect;

namespace {

void validate(const InspectOptions& o) {
  if (o.checkpoint.empty() == o.init_random.empty())
    throw io::UsageError("inspect: give a checkpoint directory or --init-random PRESET (exactly one)");
  if (o.run.out.empty()) throw io::UsageError("inspect: --out FILE.h5 is required");
  if (!o.write_canonical.empty() && o.precision != InspectPrecision::fp32)
    throw io::UsageError("--write-canonical needs --precision fp32 (checkpoints store float32)");
  if (o.valid_tests < 1 || o.invalid_tests < 1 || o.prompts < 1 || o.prompt_len < 1 || o.generate < 1 ||
      o.sample_seqs < 1 || o.sample_len < 2)
    throw io::UsageError("inspect: test, prompt and sample counts must be >= 1 (--sample-len >= 2)");
  if (!(o.perturbation >= 0 && o.perturbation < 0.5))
    throw io::UsageError("--perturbation must be in [0, 0.5) (near_orthogonal stays invertible there)");
  if (!(o.invalid_kappa > 1)) throw io::UsageError("--invalid-kappa must be > 1");
  if (!(o.rank_tol >= 1e-7 && o.rank_tol < 1))
    throw io::UsageError("--rank-tol must be in [1e-7, 1): the h x h Gram resolves singular values down to ~1.5e-8 sigma_max");
  parse_slice(o.canonical);
}

// --init-random PRESET: a fresh model of that preset, `lrm` its multipliers.
std::unique_ptr<GPT> random_model(const InspectOptions& o, const LrmPlacement& lrm, c10::Device device) {
  ModelConfig c;
  try {
    c = ModelConfig::preset(o.init_random);
  } catch (const std::exception& e) {
    throw io::UsageError(std::string("--init-random: ") + e.what());
  }
  c.lrm = lrm;
  auto m = std::make_unique<GPT>(c, o.run.seed);
  m->to(device);
  return m;
}

// [rows, len] model ids: evenly spread windows of the token file (window `first` on; its ids read through
// `ids`), or seeded uniform ids (over `pool` when it is not empty: the ids a model laid out over GPT-2's was
// trained on, whose other rows are 0 and would make degenerate inputs).
at::Tensor token_rows(const InspectOptions& o, std::int64_t vocab, const TokenIds& ids,
                      const std::vector<std::int64_t>& pool, std::int64_t first, std::int64_t rows, std::int64_t len,
                      std::int64_t total_windows, c10::Device device) {
  at::Tensor t = at::empty({rows, len}, at::TensorOptions().dtype(at::kLong));
  std::int64_t* p = t.data_ptr<std::int64_t>();
  if (o.data.empty()) {
    core::Rng rng(o.run.seed * 1000003ULL + static_cast<std::uint64_t>(first) + 17);
    const std::int64_t n = pool.empty() ? vocab : static_cast<std::int64_t>(pool.size());
    for (std::int64_t i = 0; i < rows * len; ++i) {
      const std::int64_t k = std::min<std::int64_t>(n - 1, static_cast<std::int64_t>(core::uniform01(rng) * static_cast<double>(n)));
      p[i] = pool.empty() ? k : pool[static_cast<std::size_t>(k)];
    }
    return t.to(device);
  }
  const data::MappedTokens file = data::MappedTokens::open(o.data);
  ids.check_tokens(file.tokens(), o.data);  // one line naming both when the model cannot read the file
  const auto n = static_cast<std::int64_t>(file.size());
  if (n < len) throw std::runtime_error(o.data + ": fewer tokens than one window of " + std::to_string(len));
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t w = first + r;
    const std::int64_t start = total_windows > 1 ? (n - len) * w / (total_windows - 1) : 0;
    for (std::int64_t j = 0; j < len; ++j)
      p[r * len + j] = ids.to_model(file.tokens()[static_cast<std::size_t>(start + j)], o.data);
  }
  return t.to(device);
}

}  // namespace

InspectResult run_inspect(const InspectOptions& o, io::Provenance prov) {
  validate(o);
  io::prepare_output_path(o.run.out, o.run.force, {o.checkpoint, o.data});
  if (!o.write_canonical.empty()) {
    io::refuse_output_over_inputs(o.write_canonical, {o.checkpoint, o.data, o.run.out}, "--write-canonical");
    if (std::filesystem::exists(o.write_canonical) && !o.run.force)
      throw io::UsageError("--write-canonical " + o.write_canonical + " already exists (use --force to replace it)");
  }
  prov.kind = "gpt2/inspect";
  prov.threads = apply_torch_threads(o.run.threads);
  const auto t0 = std::chrono::steady_clock::now();
  const c10::Device device = parse_device(o.device);
  const LrmPlacement lrm = LrmPlacement::parse(o.multipliers);
  std::optional<ModelDir> source;  // the checkpoint read once: config.json, the model, its vocabulary
  if (o.init_random.empty()) source = read_model_dir(o.checkpoint, device, ModelDirKinds::any, lrm);
  std::unique_ptr<GPT> model = source ? std::move(source->model) : random_model(o, lrm, device);
  model->train(false);
  const bool fp64 = o.precision == InspectPrecision::fp64;
  if (fp64) convert_parameters(*model, at::kDouble);
  const ModelConfig& cfg = model->config();
  if (o.prompt_len + o.generate > cfg.block_size || o.sample_len > cfg.block_size)
    throw io::UsageError("inspect: --prompt-len + --generate and --sample-len must fit the context " +
                         std::to_string(cfg.block_size));
  const SampleSplit split = sample_split(o.sample_seqs, o.sample_len);
  if (std::min(split.fit_rows, split.held_rows) <= cfg.head_dim() + 1)
    throw io::UsageError("inspect: the activation sample is split into a fit half and a held-out half, and each must "
                         "exceed d_k + 1 = " + std::to_string(cfg.head_dim() + 1) + " tokens (--sample-seqs x "
                         "--sample-len = " + std::to_string(o.sample_seqs * o.sample_len) +
                         "), or the centred covariances S_Q, S_K are singular");
  std::cerr << "model      " << (o.init_random.empty() ? o.checkpoint : "random " + o.init_random) << ": "
            << describe_model(*model) << "\nthreads    " << prov.threads << ", " << word(o.precision) << " on "
            << device.str() << "\n";
  at::NoGradGuard no_grad;
  const std::int64_t L = cfg.n_layer, H = cfg.n_head, dh = cfg.head_dim();
  InspectLog log(o.run.out, prov, o.run.force, {L, H, dh, dh, o.valid_tests, o.invalid_tests, qk_row_scales(*model, 0).has_value()});

  // Fixed inputs and the original model's answers.
  Reference ref;
  ref.fp64 = fp64;
  const std::int64_t windows = o.prompts + o.sample_seqs;
  // The checkpoint's vocabulary: read for its data, and carried by the canonical checkpoint written below.
  const Vocabulary vocab = source ? source->vocabulary() : Vocabulary{};
  const TokenIds ids(vocab, cfg.vocab_size, o.init_random.empty() ? o.checkpoint : "random " + o.init_random);
  ref.prompts = token_rows(o, cfg.vocab_size, ids, vocab.trained, 0, o.prompts, o.prompt_len, windows, device);
  const at::Tensor sample =
      token_rows(o, cfg.vocab_size, ids, vocab.trained, o.prompts, o.sample_seqs, o.sample_len, windows, device);
  ref.logits = model_logits(*model, ref.prompts);
  const at::Tensor ref_greedy = greedy_decode(*model, ref.prompts, o.generate);
  const std::vector<core::Mat<double>> inputs = attention_inputs(*model, sample);  // per layer [S·T, d]
  for (std::int64_t l = 0; l < L; ++l) {
    ref.layers.push_back(attention_layer(*model, l));
    ref.probe_inputs.push_back(inputs[static_cast<std::size_t>(l)].topRows(o.sample_len));
  }
  const std::vector<at::Tensor> pristine = snapshot(*model);
  // LRM multipliers (seed 000), when Q and K carry row or scalar multipliers: read from the stored
  // model, before any slice permutes its heads, so head h is the checkpoint's head h.
  for (std::int64_t l = 0; l < L; ++l)
    if (const auto r = qk_row_scales(*model, l)) log.lrm(l, lrm_head_stats(r->r_q, r->r_k, r->b_q, r->b_k, H));
  std::cerr << "inputs     " << o.prompts << " prompts x " << o.prompt_len << " tokens, sample " << o.sample_seqs << " x "
            << o.sample_len << (o.data.empty() ? " (seeded uniform ids)" : " from " + o.data) << " ["
            << io::seconds_since(t0) << " s]\n";

  // Tables 3–4.
  for (std::int64_t l = 0; l < L; ++l) {
    log.projections(l, projection_spectra(ref.layers[static_cast<std::size_t>(l)], o.rank_tol));
    log.bilinear(l, bilinear_rank(ref.layers[static_cast<std::size_t>(l)], o.rank_tol));
  }
  std::cerr << "tables 3-4 done [" << io::seconds_since(t0) << " s]\n";

  // Tables 5–6: random elements of G_max on the whole model.
  core::Rng rng(o.run.seed);
  for (std::int64_t t = 0; t < o.valid_tests; ++t) {
    restore(*model, pristine);
    std::vector<core::Permutation> perms;
    for (std::int64_t l = 0; l < L; ++l) {
      const core::LayerGauge<double> g = random_valid_gauge(rng, H, dh, dh, o.perturbation);
      apply_layer_gauge(*model, l, g);
      perms.push_back(g.perm);
    }
    log.valid(t, compare(*model, ref, perms));
  }
  std::cerr << "tables 5-6 done [" << io::seconds_since(t0) << " s]\n";

  // Table 7: the invalid families.
  const std::vector<core::Permutation> identity(static_cast<std::size_t>(L), core::identity_permutation(H));
  for (InvalidFamily f : all_families())
    for (std::int64_t t = 0; t < o.invalid_tests; ++t) {
      restore(*model, pristine);
      apply_invalid(*model, f, rng, o.invalid_kappa);
      log.invalid(f, t, compare(*model, ref, identity));
    }
  std::cerr << "table 7 done [" << io::seconds_since(t0) << " s]\n";

  // Tables 8–9: each slice fitted on the sample's first half, applied to the model; its metrics read
  // back from the moved model on the held-out half (and, for contrast, on the fit half), exactness
  // against the original.
  const Slice chosen = parse_slice(o.canonical);
  std::vector<core::LayerGauge<double>> chosen_gauges;
  for (Slice s : all_slices()) {
    restore(*model, pristine);
    std::vector<core::LayerGauge<double>> gauges;
    for (std::int64_t l = 0; l < L; ++l) {
      const core::Mat<double> fit = inputs[static_cast<std::size_t>(l)].topRows(split.fit_rows);
      gauges.push_back(slice_gauge(ref.layers[static_cast<std::size_t>(l)], s, fit));
      apply_layer_gauge(*model, l, gauges.back());
    }
    for (std::int64_t l = 0; l < L; ++l) {
      const auto k = static_cast<std::size_t>(l);
      const core::Mat<double> fit = inputs[k].topRows(split.fit_rows), held = inputs[k].bottomRows(split.held_rows);
      const core::AttentionLayer<double> moved = attention_layer(*model, l);
      log.canonical(s, l, gauges[k].perm, head_metrics(ref.layers[k], held), head_metrics(moved, held),
                    head_metrics(moved, fit));
    }
    log.exactness(s, o, exactness(*model, ref, ref_greedy));
    if (s == chosen) chosen_gauges = gauges;
  }
  std::cerr << "tables 8-9 done [" << io::seconds_since(t0) << " s]\n";

  restore(*model, pristine);
  if (!o.write_canonical.empty()) {
    for (std::int64_t l = 0; l < L; ++l) apply_layer_gauge(*model, l, chosen_gauges[static_cast<std::size_t>(l)]);
    nlohmann::json extra = {{"canonical", {{"slice", o.canonical},
                                           {"source", o.init_random.empty() ? o.checkpoint : "random " + o.init_random}}}};
    save_checkpoint(o.write_canonical, *model, vocab, extra);
  }
  const GaugeCounts counts = gauge_counts(L, H, dh, dh);
  InspectResult res = log.finish(counts, model->num_parameters(false), o, io::seconds_since(t0));
  if (!o.write_canonical.empty())
    std::cout << "canonical  " << o.canonical << " slice written to " << o.write_canonical << "\n";
  return res;
}

}  // namespace gaugelab::gpt2
