// setup_train: a run from its options to the first step, station by station (run_dir.hpp, checkpoints.hpp,
// resume.hpp, build_run.hpp, micro_batch.hpp, matmul_peak.hpp, report.hpp): the data-parallel group and device, the
// run directory (resume or fresh), the data, the model, the optimizer with the condition's groups (conditions.hpp),
// batches, schedule, log, and the settings printout. The loop's own stations are listed in loop.cpp.
#include "gpt2/train/setup.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <limits>
#include <tuple>

#include <ATen/ops/full.h>

#include "gpt2/model/head_projection.hpp"
#include "gpt2/model/lm_head_loss.hpp"
#include "gpt2/train/checkpoints.hpp"
#include "gpt2/train/conditions.hpp"
#include "gpt2/train/evaluate.hpp"
#include "gpt2/train/gaugefix.hpp"
#include "gpt2/train/micro_batch.hpp"
#include "gpt2/train/not_measured.hpp"
#include "gpt2/train/build_run.hpp"
#include "gpt2/train/matmul_peak.hpp"
#include "gpt2/train/report.hpp"
#include "gpt2/train/requirements.hpp"
#include "gpt2/train/resume.hpp"
#include "gpt2/train/run_dir.hpp"
#include "gpt2/train/step_graph.hpp"
#include "io/options.hpp"
#include "io/run_flags.hpp"

namespace gaugelab::gpt2 {

namespace fs = std::filesystem;


OptimizerSettings optimizer_settings(const TrainOptions& o, const Condition& c, c10::Device device) {
  OptimizerSettings s;
  s.beta1 = o.beta1, s.beta2 = o.beta2, s.eps = o.adam_eps;
  s.wd_matrices = o.weight_decay;
  // The condition's decay rule (conditions.hpp; seed 000 §4.1: A decays the Q/K multipliers, B and C
  // do not; D keeps the decay as its magnitude control, Dcap caps instead).
  s.wd_multipliers_qk = c.decays_qk ? o.wd_multipliers : 0.0;
  s.wd_multipliers_other = o.wd_multipliers;
  s.wd_biases_norms = 0.0;
  s.wd_embeddings = o.wd_embeddings;
  s.multiplier_lr_scale = o.multiplier_lr_scale;
  s.hidden_matrices = o.optimizer;
  s.muon_settings.lr = o.muon_lr;
  s.muon_settings.momentum = o.muon_momentum;
  s.muon_settings.weight_decay = o.muon_wd;
  s.muon_settings.split_qkv = o.muon_qkv == MuonQkv::split;
  s.muon_settings.bf16 = device.is_cuda();  // KellerJordan's bf16 NS5 on GPUs; float32 on the CPU
  s.clip_multipliers = o.clip_multipliers;
  return s;
}

namespace {

// --fit-micro-batch on: the step's sequences on this rank re-split as the device allows (micro_batch.hpp); every rank
// takes the smallest choice (the data order needs one split), and a refusal comes from all ranks at once.
void fit_split(TrainRun& r, std::int64_t saved_micro_batch, bool resumed, bool rank0) {
  const TrainOptions& o = r.options;
  const ModelConfig& mc = r.model->config();
  const double params = static_cast<double>(r.model->num_parameters());
  FitRequest q;
  q.sequences = o.batch_size * r.grad_accum;
  q.memory_fraction = o.fit_memory;
  q.keep = saved_micro_batch;
  q.verbose = rank0;
  if (r.device.is_cuda()) {  // held by the step, not by a probe (micro_batch.hpp)
    // NCCL's gradient buckets, on the card: a fresh run's broadcast already made them (in the probe's baseline)
    const bool nccl = o.dist_backend != DistBackend::gloo;
    if (r.dist.active() && nccl && resumed) q.reserve_bytes += 4.0 * params;
    if (o.cuda_graph == Switch::on) {  // the graph's static gradients and its own loss workspace (bf16 logits + float32)
      q.reserve_bytes += 4.0 * params + 6.0 * static_cast<double>(LmHeadWorkspace{}.chunk_rows) *
                                            static_cast<double>(mc.padded_vocab());
      q.graph_pool = true;  // and its private pool: one more activation peak
    }
  }
  if (const char* local = std::getenv("LOCAL_WORLD_SIZE"); local != nullptr && r.device.is_cpu())
    q.local_ranks = std::max(1, std::atoi(local));
  MicroBatchFit f = fit_micro_batch(*r.model, q, r.device, r.precision);
  if (r.dist.active()) {
    at::Tensor neg = at::full({1}, -static_cast<double>(f.batch), at::TensorOptions().dtype(at::kDouble));
    r.dist.all_reduce_max(neg);
    const auto smallest = static_cast<std::int64_t>(-neg.item<double>());
    if (smallest != f.batch) {
      f.batch = smallest;
      f.accum = smallest > 0 ? q.sequences / smallest : 0;
      f.need_bytes = std::numeric_limits<double>::quiet_NaN();
      f.how += ", another rank's smaller choice taken";
    }
  }
  if (f.batch == 0) throw std::runtime_error(fit_refusal(f, mc.block_size, o.fit_memory, r.device));
  r.micro_batch = f.batch;
  r.grad_accum = f.accum;
  r.fit = f;
}

}  // namespace

TrainRun setup_train(const TrainOptions& o, io::Provenance prov) {
  validate_train_options(o);
  TrainRun r;
  r.options = o;
  r.condition = &condition(o.condition);
  prov.kind = "gpt2/train";
  prov.seed = o.run.seed;
  // A new run's model is the flags' own: its contradictions are usage errors named before the device.
  if (!o.resume && o.init_from.empty()) check_model_needs(*r.condition, o, build_model_config(o, 0), /*fresh=*/true);
  r.dist = read_dist_env();
  std::string device_name = o.device;
  if (r.dist.active() && (o.device == "cuda" || o.device.rfind("cuda:", 0) == 0))
    device_name = "cuda:" + std::to_string(r.dist.local_rank);
  // Where and how the model runs (runtime.hpp): the device, its attention kernel (or one fused SDPA backend
  // alone), LibTorch's threads.
  r.device = parse_device(device_name);
  select_attention_backend(o.attention, r.device);
  prov.threads = apply_torch_threads(o.run.threads);
  r.precision = o.precision;  // fp32 or bf16: choose_bf16_path picks bf16's path below
  r.dist = connect_train_dist(o.dist_backend, r.device, o.dist_timeout_s);
  const bool rank0 = r.dist.rank == 0;

  const std::string log_path = train_log_path(o.run.out);
  // One writer per run directory, taken before anything in it is read, removed or replaced.
  if (rank0) r.out_lock = io::WriterLock::acquire_dir(o.run.out, "a training run");
  std::optional<std::string> ckpt;
  std::optional<ModelDir> loaded;
  std::optional<safetensors::File> opt_state;
  if (o.resume) {
    std::tie(ckpt, loaded, opt_state) = newest_loadable_checkpoint(o.run.out, r.device, rank0);
  } else if (rank0 && (fs::exists(log_path) || fs::exists(train_checkpoints_dir(o.run.out)))) {
    // What --force removes must not be what this run reads. Inputs at or under --out are refused already
    // (validate_train_options); checkpoints/ and log.h5 are resolved through links here, so that one that is a
    // link to an input, to the directory above one or into one is refused too.
    for (const std::string& removed : {train_checkpoints_dir(o.run.out), log_path})
      io::refuse_output_over_inputs(removed, {o.data, o.init_from});
    if (!o.run.force && !failed_before_first_step(o.run.out))
      throw io::UsageError("--out " + o.run.out + " already holds a run (log.h5 or checkpoints/); continue it with "
                                                  "--resume or replace it with --force");
    fs::remove_all(train_checkpoints_dir(o.run.out));
    fs::remove(log_path);
    fs::remove(log_path + ".resume-src");
    if (synthetic_docs(o.data)) fs::remove_all(o.run.out + "/data");  // ours, regenerated
  }
  r.data_dir = resolve_data_dir(o.data, o.run.out, rank0);
  if (r.dist.active()) r.dist.barrier();

  r.train_files = split_files(r.data_dir, "train");
  r.val_files = split_files(r.data_dir, "val");
  if (o.compact_vocab) {
    std::vector<std::string> all = r.train_files;
    all.insert(all.end(), r.val_files.begin(), r.val_files.end());
    r.vocab_map = compact_vocab(all);
  }
  nlohmann::json saved;
  if (ckpt) {
    ModelDir& ck = *loaded;
    saved = ck.config.at("trainer");
    check_resume_options(saved.value("options", nlohmann::json()), prov.config);
    if (saved.value("world", 1) != r.dist.world)
      throw io::UsageError("--resume: the run was trained on " + saved["world"].dump() + " ranks, this launch has " +
                           std::to_string(r.dist.world) + " (the data order depends on it)");
    const Vocabulary stored = ck.vocabulary();
    if (stored.ids != std::vector<std::int64_t>(r.vocab_map.ids.begin(), r.vocab_map.ids.end()))
      throw std::runtime_error("checkpoint " + *ckpt + "'s vocabulary (" + vocabulary_name(stored.ids.size()) +
                               ") is not the one --data " + o.data + " gives this run (" +
                               vocabulary_name(r.vocab_map.ids.size()) + ")");
    r.model = std::move(ck.model);
    r.state = train_state_from_json(saved);
    r.last_checkpoint_step = r.state.step;
  } else {  // a new run: the flags' model, or --init-from's weights
    if (o.init_from.empty()) {
      const ModelConfig mc =
          build_model_config(o, r.vocab_map.ids.empty() ? 0 : static_cast<std::int64_t>(r.vocab_map.ids.size()));
      r.model = std::make_unique<GPT>(mc, o.run.seed);
      r.model->to(r.device);
    } else {
      const InitFrom from = init_from_options(o);  // what --init-from reads of the options
      r.model = init_from_weights(from, r.vocab_map, r.device);
    }
    r.state.best_val_loss = r.state.final_val_loss = not_measured();
    r.state.final_drift_max = r.state.final_drift_mean = not_measured();
  }
  const ModelConfig& mc = r.model->config();
  r.model->set_twice_differentiable(o.attention == Attention::math);  // the plain-ops attention path (model.hpp)
  r.model->set_lm_head_kernel(o.lm_head_kernel);  // CUDA bf16 only (kernel_path.hpp)
  r.model->set_ln_kernel(o.ln_kernel);
  r.model->set_lrm_kernel(o.lrm_kernel);
  if (o.cuda_graph == Switch::on) {
    const std::string why = MicroStepGraph::refusal(*r.model, r.device);
    if (!why.empty()) throw io::UsageError(why);
  }
  if (r.precision == Precision::bf16) {  // native or emulated bf16 (runtime.hpp), as --bf16-mode says or auto decides
    const Bf16Path path = choose_bf16_path(o.bf16_mode, mc, o.batch_size, r.device,
                                           r.dist.active() ? r.dist.all_reduce_mean : std::function<double(double)>());
    r.precision = path.mode == Bf16Mode::emulated ? Precision::bf16_emulated : Precision::bf16;
    r.bf16_choice = path.why;
    // The choice replaces "auto" in the run's recorded options (the log's config_json and the checkpoints), so
    // --resume, which takes the options not given from there, keeps it.
    if (prov.config.is_object()) prov.config["bf16-mode"] = word(path.mode);
  }
  if (o.fit_micro_batch == Switch::off) check_activation_memory(mc, o.batch_size, r.device);  // on: the fit decides
  r.has_heads = has_qk_row_multipliers(mc);
  const Condition& cond = *r.condition;
  check_model_needs(cond, o, mc, /*fresh=*/!ckpt);  // every requirement on the model, from the table's columns
  if (!ckpt && o.qk_gauge_init > 0) offset_qk_gauge(*r.model, o.qk_gauge_init, o.run.seed);
  r.opt = std::make_unique<TrainOptimizer>(*r.model, optimizer_settings(o, cond, r.device));
  if (ckpt) r.opt->load_state(*opt_state);
  if (r.dist.active() && !ckpt) r.dist.broadcast_parameters(r.opt->parameters());

  r.grad_accum = rank_grad_accum(o, mc.block_size, r.dist.world);
  r.micro_batch = o.batch_size;
  if (o.fit_micro_batch == Switch::on) fit_split(r, ckpt ? saved.value("micro_batch", std::int64_t{0}) : 0, ckpt.has_value(), rank0);
  r.train = std::make_unique<TrainBatches>(r.train_files, o.run.seed, r.micro_batch, mc.block_size, r.grad_accum,
                                           r.dist.rank, r.dist.world, mc.vocab_size, r.vocab_map);
  if (r.micro_batch != o.batch_size) {  // the hooks see the unfitted split's last micro-batch (micro_batch.hpp)
    const std::int64_t unfitted_accum = rank_grad_accum(o, mc.block_size, r.dist.world);
    r.hook_batches = std::make_unique<TrainBatches>(r.train_files, o.run.seed, o.batch_size, mc.block_size,
                                                    unfitted_accum, r.dist.rank, r.dist.world, mc.vocab_size,
                                                    r.vocab_map);
    r.hook_micro = unfitted_accum - 1;
  }
  r.val = std::make_unique<ValidationBatches>(r.val_files, o.batch_size, mc.block_size, o.eval_batches, mc.vocab_size,
                                              r.vocab_map);
  r.schedule = {o.lr, o.min_lr, o.warmup_iters, o.lr_decay_iters > 0 ? o.lr_decay_iters : o.max_iters};
  if (ckpt) r.schedule = resumed_schedule(o, saved, r.schedule, rank0);
  r.spikes = SpikeDetector(o.spike_factor, o.spike_window, o.warmup_iters);
  if (ckpt) r.spikes.restore(saved.value("spike_window", std::vector<double>{}));
  r.tokens_per_step = r.micro_batch * mc.block_size * r.grad_accum * r.dist.world;
  r.flops_per_token = 6.0 * static_cast<double>(r.model->num_parameters()) +
                      12.0 * static_cast<double>(mc.n_layer * mc.n_embd * mc.block_size);
  r.peak_tflops = o.peak_tflops > 0 ? o.peak_tflops : measure_matmul_tflops(r.device, r.precision);
  r.prov = std::move(prov);
  // A stop cut the checkpoint's due evaluation short: it is done now, on the checkpoint's weights, so the
  // step's row gets its validation loss (its sample follows in the loop: catch_up_sample).
  double pending_val = not_measured();
  if (ckpt && r.state.eval_pending) {
    pending_val = evaluate(r);
    if (std::isfinite(pending_val)) record_val_loss(r.state, pending_val);
    if (rank0 && std::isfinite(pending_val))
      std::cerr << "train: the evaluation of step " << r.state.step << " that the stop cut short: val loss " << pending_val
                << "\n";
  }

  if (rank0) {
    const int L = static_cast<int>(mc.n_layer), H = static_cast<int>(mc.n_head);
    if (o.resume)
      r.log.emplace(TrainLog::rebuild(log_path, r.prov, r.state.step, L, H, pending_val));
    else
      r.log.emplace(TrainLog::create(log_path, r.prov, true, L, H));
    print_settings(r, ckpt ? *ckpt : (o.resume ? std::string("nothing (no checkpoint yet: starting at step 0)") : ""));
  }
  return r;
}

}  // namespace gaugelab::gpt2
