// `gaugelab merge-models A B --out DIR` (api.hpp): align, interpolate, and measure the loss along the path.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <limits>
#include <set>
#include <sstream>

#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/from_blob.h>
#include <nlohmann/json.hpp>

#include "core/random.hpp"
#include "gpt2/inspect/layer_tensors.hpp"
#include "gpt2/landscape/align_model.hpp"
#include "gpt2/landscape/api.hpp"
#include "gpt2/landscape/log_columns.hpp"
#include "io/elapsed.hpp"
#include "gpt2/model/checkpoint.hpp"
#include "gpt2/model/runtime.hpp"
#include "gpt2/use/loaded_model.hpp"
#include "io/options.hpp"
#include "io/run_flags.hpp"
#include "io/run_log.hpp"

namespace gaugelab::gpt2 {

namespace {

using landscape_log::f;
using landscape_log::i;
using landscape_log::s;
using io::seconds_since;

struct Parsed {
  AlignLevel level;
  AlignSettings settings;
  std::vector<AlignLevel> levels;  // evaluated along the path
};

Parsed validate(const MergeOptions& o) {
  if (o.model_a.empty() || o.model_b.empty()) throw io::UsageError("merge-models: give two checkpoints, A and B");
  if (o.run.out.empty()) throw io::UsageError("merge-models: --out DIR is required (the merged checkpoint)");
  Parsed p;
  try {
    p.level = parse_align_level(o.align);
  } catch (const std::invalid_argument& e) {
    throw io::UsageError(std::string("--align: ") + e.what());
  }
  p.settings.level = p.level;
  if (o.slice != "qr" && o.slice != "gram" && o.slice != "none")
    throw io::UsageError("--slice must be qr, gram or none, not '" + o.slice + "'");
  p.settings.canonicalize = o.slice != "none";
  if (p.settings.canonicalize) p.settings.slice = inspect::parse_slice(o.slice);
  if (o.head_cost != "procrustes" && o.head_cost != "seed")
    throw io::UsageError("--head-cost must be procrustes or seed, not '" + o.head_cost + "'");
  p.settings.head_cost = o.head_cost == "seed" ? core::HeadCost::seed : core::HeadCost::procrustes;
  if (o.data.empty())
    p.levels = {p.level};
  else
    for (AlignLevel l : {AlignLevel::none, AlignLevel::residual, AlignLevel::attention, AlignLevel::full})
      if (l <= p.level) p.levels.push_back(l);
  return p;
}

/// Seeded uniform ids [4, T] (model ids): the windows each end's logits are compared on. Any input
/// serves: an exact symmetry preserves the function everywhere.
at::Tensor probe_ids(std::int64_t vocab, std::int64_t T, std::uint64_t seed, c10::Device device) {
  core::Rng rng(seed);
  std::vector<std::int64_t> ids(static_cast<std::size_t>(4 * T));
  for (auto& v : ids) v = std::min<std::int64_t>(vocab - 1, static_cast<std::int64_t>(core::uniform01(rng) * vocab));
  return at::from_blob(ids.data(), {4, T}, at::TensorOptions().dtype(at::kLong)).clone().to(device);
}

struct Preservation {
  double rel_err = 0, max_abs = 0;
};
Preservation compare_logits(const GPT& m, const at::Tensor& idx, const at::Tensor& ref) {
  at::NoGradGuard no_grad;
  const at::Tensor y = m.logits(idx).to(at::kDouble), r = ref.to(at::kDouble);
  return {(y - r).norm().item<double>() / r.norm().item<double>(), (y - r).abs().max().item<double>()};
}

}  // namespace

MergeResult run_merge_models(const MergeOptions& o, io::Provenance prov) {
  const Parsed p = validate(o);
  namespace fs = std::filesystem;
  io::prepare_output_path(o.run.out, o.run.force, {o.model_a, o.model_b, o.data});
  if (!o.data.empty()) check_window_count(o.data, o.batch_size, o.batches, o.seq_len);  // before any work
  prov.threads = apply_torch_threads(o.run.threads);
  std::cerr << "threads    " << prov.threads << "\n";
  const auto t0 = std::chrono::steady_clock::now();
  const ModelRunOptions run_opts{o.device, Precision::fp32, "default"};
  LoadedModel A = load_for_run(o.model_a, run_opts), B = load_for_run(o.model_b, run_opts);
  if (const std::string diff = config_difference(A.model->config(), B.model->config()); !diff.empty())
    throw std::runtime_error("A and B differ in their configuration: " + diff);
  if (A.vocab.ids != B.vocab.ids)
    throw std::runtime_error("checkpoints " + o.model_a + " and " + o.model_b +
                             " speak different vocabularies (their --compact-vocab id maps differ)");
  // The merge's rows are 0 only where both ends' are: of two models laid over GPT-2 ids, the trained ids of either.
  Vocabulary merged_vocab = A.vocab;
  if (B.vocab.trained.empty()) {
    merged_vocab.trained.clear();
  } else if (!merged_vocab.trained.empty()) {
    std::set<std::int64_t> have(A.vocab.trained.begin(), A.vocab.trained.end());
    for (const std::int64_t id : B.vocab.trained)
      if (have.insert(id).second) merged_vocab.trained.push_back(id);
  }
  LoadedModel P = load_for_run(o.model_a, run_opts);  // the path's models are written into this one
  const ModelConfig& cfg = A.model->config();
  const std::int64_t T = o.seq_len > 0 ? o.seq_len : cfg.block_size;
  if (T > cfg.block_size)
    throw io::UsageError("--seq-len " + std::to_string(T) + " exceeds the context " + std::to_string(cfg.block_size));

  at::NoGradGuard no_grad;
  const at::Tensor probe = probe_ids(cfg.vocab_size, std::min<std::int64_t>(T, 64), o.run.seed, A.device);
  const at::Tensor ref_a = A.model->logits(probe), ref_b = B.model->logits(probe);
  const std::vector<at::Tensor> pristine_a = snapshot(*A.model), pristine_b = snapshot(*B.model);

  fs::create_directories(o.run.out);
  prov.kind = "gpt2/merge-models";
  io::RunLog log = io::RunLog::create((fs::path(o.run.out) / "merge.h5").string(), prov, o.run.force);
  log.declare_table("alignment", {s("level"), s("step"), f("distance")});
  log.declare_table("heads", {s("level"), i("layer"), i("position"), f("distance2")});
  log.declare_table("moved", {s("level"), s("what"), i("layer"), i("moved")});
  log.declare_table("preservation", {s("level"), s("model"), f("logit_rel_err"), f("logit_max_abs")});
  log.declare_table("path", {s("level"), f("t"), f("loss")});
  log.start();

  MergeResult res;
  res.loss_a = res.loss_b = res.loss_merged = std::numeric_limits<double>::quiet_NaN();
  auto loss_of = [&](LoadedModel& m) {
    std::vector<double> per_batch;
    return validation_loss(m, o.data, o.batch_size, o.batches, T, per_batch);
  };
  std::cout << std::setprecision(4);
  for (const AlignLevel level : p.levels) {
    const std::string name = align_level_name(level);
    restore(*A.model, pristine_a);
    restore(*B.model, pristine_b);
    AlignSettings st = p.settings;
    st.level = level;
    const auto t_align = std::chrono::steady_clock::now();
    const AlignReport r = align_models(*A.model, *B.model, st);
    log.set_summary("align_seconds_" + name, seconds_since(t_align));
    for (std::size_t k = 0; k < r.steps.size(); ++k) log.append_row("alignment", {name, r.steps[k], r.distance[k]});
    for (std::size_t l = 0; l < r.head_distance2.size(); ++l)
      for (std::size_t j = 0; j < r.head_distance2[l].size(); ++j)
        log.append_row("heads", {name, static_cast<std::int64_t>(l), static_cast<std::int64_t>(j), r.head_distance2[l][j]});
    for (const std::int64_t m : r.residual_moved) log.append_row("moved", {name, std::string("residual"), std::int64_t{-1}, m});
    for (std::size_t l = 0; l < r.heads_moved.size(); ++l)
      log.append_row("moved", {name, std::string("heads"), static_cast<std::int64_t>(l), r.heads_moved[l]});
    for (std::size_t l = 0; l < r.units_moved.size(); ++l)
      log.append_row("moved", {name, std::string("mlp_units"), static_cast<std::int64_t>(l), r.units_moved[l]});
    const Preservation pa = compare_logits(*A.model, probe, ref_a), pb = compare_logits(*B.model, probe, ref_b);
    log.append_row("preservation", {name, std::string("A"), pa.rel_err, pa.max_abs});
    log.append_row("preservation", {name, std::string("B"), pb.rel_err, pb.max_abs});
    res.logit_rel_err_max = std::max({res.logit_rel_err_max, pa.rel_err, pb.rel_err});
    std::cout << "align " << std::left << std::setw(9) << name << std::right << " distance " << r.distance.front()
              << " -> " << r.distance.back() << "; logits kept to " << std::max(pa.rel_err, pb.rel_err) << " (rel)";
    if (!o.data.empty()) {
      std::vector<double> ts, losses;
      for (std::int64_t k = 0; k < o.path_points; ++k) {
        const double t = static_cast<double>(k) / static_cast<double>(o.path_points - 1);
        interpolate_parameters(*P.model, *A.model, *B.model, t);
        ts.push_back(t);
        losses.push_back(loss_of(P));
        log.append_row("path", {name, t, losses.back()});
      }
      double barrier = -std::numeric_limits<double>::infinity();
      for (std::size_t k = 0; k < ts.size(); ++k)
        barrier = std::max(barrier, losses[k] - ((1 - ts[k]) * losses.front() + ts[k] * losses.back()));
      res.barrier[name] = barrier;
      res.loss_a = losses.front();
      res.loss_b = losses.back();
      log.set_summary("barrier_" + name, barrier);
      std::cout << "; loss A " << losses.front() << ", B " << losses.back() << ", barrier " << barrier;
    }
    std::cout << " [" << std::fixed << std::setprecision(1) << seconds_since(t0) << " s]\n" << std::defaultfloat
              << std::setprecision(4);
    if (level == p.level) {
      interpolate_parameters(*P.model, *A.model, *B.model, o.t);
      if (!o.data.empty()) res.loss_merged = loss_of(P);
      nlohmann::json extra = {{"merge",
                               {{"a", o.model_a}, {"b", o.model_b}, {"t", o.t}, {"align", name}, {"slice", o.slice},
                                {"head_cost", o.head_cost}}}};
      save_checkpoint(o.run.out, *P.model, merged_vocab, extra);
    }
  }
  log.set_summary("loss_a", res.loss_a);
  log.set_summary("loss_b", res.loss_b);
  log.set_summary("loss_merged", res.loss_merged);
  log.set_summary("logit_rel_err_max", res.logit_rel_err_max);
  log.set_summary("seconds", seconds_since(t0));
  log.close();
  std::cout << "merged     t " << o.t << ", align " << o.align << " -> " << o.run.out;
  if (!o.data.empty()) std::cout << " (loss " << res.loss_merged << ")";
  std::cout << "\nlog        " << (fs::path(o.run.out) / "merge.h5").string() << "\n";
  return res;
}

}  // namespace gaugelab::gpt2
