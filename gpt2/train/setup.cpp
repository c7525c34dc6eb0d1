#include "gpt2/train/setup.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <mutex>
#include <tuple>

#include <unistd.h>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/randn.h>

#include "data/prepare.hpp"
#include "gpt2/model/checkpoint.hpp"
#include "gpt2/model/head_projection.hpp"
#include "gpt2/model/vocab_layout.hpp"
#include "gpt2/train/checkpoints.hpp"
#include "gpt2/train/gauge_start.hpp"
#include "io/options.hpp"
#include "io/run_log_reader.hpp"

namespace gaugelab::gpt2 {

namespace fs = std::filesystem;

namespace {

double nan() { return std::numeric_limits<double>::quiet_NaN(); }

// Settings a resumed run must share with the run it continues (they decide the data order, the
// model, or the optimizer's trajectory); anything else (max-iters, cadences, threads) may change.
const char* const kIdentityKeys[] = {"data", "seed", "model", "n-layer", "n-head", "n-embd", "block-size", "vocab-size",
                                     "multipliers", "dropout", "compact-vocab", "bias", "gelu", "qk-norm", "magnitude",
                                     "qk-cap", "quotient", "quotient-every", "quotient-damping", "quotient-vo", "grad-projection", "projection-target",
                                     "gaugefix-mode", "gaugefix-vo", "qk-gauge-init", "optimizer", "muon-lr", "muon-momentum", "muon-wd", "muon-qkv",
                                     "batch-size",
                                     "grad-accum", "batch-tokens", "multiplier-lr-scale", "spike-on", "lr",
                                     "min-lr", "warmup-iters", "lr-decay-iters", "beta1", "beta2", "adam-eps",
                                     "weight-decay", "wd-multipliers", "wd-embeddings", "grad-clip",
                                     "clip-multipliers", "condition", "gaugefix-every", "gaugefix-eps",
                                     "state-transport", "spike-factor", "spike-window"};

void check_resume_options(const nlohmann::json& saved, const nlohmann::json& now) {
  if (!saved.is_object() || !now.is_object()) return;
  for (const char* key : kIdentityKeys)
    if (saved.contains(key) && now.contains(key) && saved[key] != now[key])
      throw io::UsageError(std::string("--resume: --") + key + " was " + saved[key].dump() + " in the run being resumed, now " +
                           now[key].dump() + " (start a new run in another --out to change it)");
  for (const auto& [key, value] : now.items())
    if (saved.contains(key) && saved[key] != value && key != "resume" && key != "force" && key != "replan" &&
        key != "init-from" && key != "max-iters")
      std::cerr << "train: resume: " << key << " changed " << saved[key].dump() << " -> " << value.dump() << "\n";
}

// --data DIR as given, or for synthetic:N the corpus prepared into OUT/data (by rank 0, once).
std::string resolve_data_dir(const TrainOptions& o, bool rank0) {
  if (o.data.rfind("synthetic:", 0) != 0) return o.data;
  const std::string dir = o.run.out + "/data";
  if (rank0 && !(fs::exists(dir + "/train.bin") && fs::exists(dir + "/val.bin"))) {
    data::PrepareOptions p;
    p.synthetic = true;
    p.synthetic_options.n_docs = static_cast<std::size_t>(io::parse_int(o.data.substr(10), "--data"));
    p.out_dir = dir;
    p.write_llmc = false;
    p.progress = false;
    p.force = true;
    const data::PrepareResult r = data::run_prepare(p);
    std::cout << "data       synthetic corpus: " << r.train.tokens << " train + " << r.val.tokens << " val tokens -> "
              << dir << "\n";
  }
  return dir;
}

ModelConfig build_model_config(const TrainOptions& o, std::int64_t compact_vocab_size) {
  ModelConfig mc = ModelConfig::preset(o.model);
  if (o.n_layer > 0) mc.n_layer = o.n_layer;
  if (o.n_head > 0) mc.n_head = o.n_head;
  if (o.n_embd > 0) mc.n_embd = o.n_embd;
  if (o.block_size > 0) mc.block_size = o.block_size;
  if (o.vocab_size > 0) mc.vocab_size = o.vocab_size;
  if (compact_vocab_size > 0) mc.vocab_size = compact_vocab_size;
  mc.lrm = LrmPlacement::parse(o.multipliers);
  mc.dropout = o.dropout;
  mc.bias = o.bias;
  mc.gelu = parse_gelu(o.gelu);
  mc.qk_norm = parse_qk_norm(o.qk_norm);
  try {
    mc.validate();
  } catch (const std::exception& e) {
    throw io::UsageError(std::string("model: ") + e.what());
  }
  return mc;
}


// The schedule of a resumed run is the one its first launch planned (config.json trainer.schedule). A
// changed --max-iters moves the cosine's end only when lr-decay-iters is 0; that is refused unless
// --replan, which re-plans the cosine to the new end from the step reached, with a line saying so.
LrSchedule resumed_schedule(const TrainOptions& o, const nlohmann::json& saved, const LrSchedule& now, bool rank0) {
  if (!saved.contains("schedule") || !saved["schedule"].is_object()) return now;  // checkpoints from before
  const nlohmann::json& s = saved["schedule"];
  LrSchedule planned{s.at("lr").get<double>(), s.at("min_lr").get<double>(), s.at("warmup").get<std::int64_t>(),
                     s.at("decay_iters").get<std::int64_t>()};
  const std::int64_t old_max = s.value("max_iters", o.max_iters);
  if (planned.decay_iters == now.decay_iters) return planned;
  if (!o.replan)
    throw io::UsageError("--resume: --max-iters " + std::to_string(o.max_iters) + " moves the cosine's end from step " +
                         std::to_string(planned.decay_iters) + " (the run's --max-iters " + std::to_string(old_max) +
                         ") to " + std::to_string(now.decay_iters) +
                         "; add --replan to re-plan it, or give --lr-decay-iters " + std::to_string(planned.decay_iters) +
                         " to keep it");
  if (rank0)
    std::cerr << "train: resume: --replan: the cosine now reaches min-lr at step " << now.decay_iters << " (was "
              << planned.decay_iters << "); the lr changes from the next step on\n";
  return now;
}

// --init-from DIR: the weights (and architecture) of our checkpoint or a Hugging Face GPT-2 directory.
// Multipliers: as stored when the checkpoint's placement is --multipliers; otherwise the stored ones are
// merged into their weights (the function is unchanged) and --multipliers' placement starts at 1. A
// Hugging Face directory has none: --multipliers' placement at 1. Size flags that disagree with DIR,
// and a compact vocabulary that differs from the data's, are refused with one line; a model over GPT-2
// ids with a --compact-vocab corpus keeps the rows of the corpus's ids (vocab_layout.hpp).
std::unique_ptr<GPT> init_from_weights(const TrainOptions& o, const VocabMap& vocab, c10::Device device) {
  const LrmPlacement want = LrmPlacement::parse(o.multipliers);
  std::unique_ptr<GPT> m = load_any_model(o.init_from, c10::Device(c10::kCPU), want);
  std::vector<std::int32_t> ids;
  for (const std::int64_t id : stored_vocab_ids(o.init_from, m->config().vocab_size))
    ids.push_back(static_cast<std::int32_t>(id));
  if (ids.empty() && !vocab.ids.empty()) {
    // A model over GPT-2 ids fine-tuned on a --compact-vocab corpus: keep the rows of the corpus's ids.
    const std::vector<std::int64_t> keep(vocab.ids.begin(), vocab.ids.end());
    if (*std::max_element(keep.begin(), keep.end()) >= m->config().vocab_size)
      throw io::UsageError("--init-from " + o.init_from + ": the data has token ids beyond its " +
                           std::to_string(m->config().vocab_size) + "-id vocabulary");
    m = select_vocab_rows(*m, keep);
    ids = vocab.ids;
  }
  const ModelConfig& c = m->config();
  for (const auto& [flag, given, have] : {std::tuple{"n-layer", o.n_layer, c.n_layer}, {"n-head", o.n_head, c.n_head},
                                          {"n-embd", o.n_embd, c.n_embd}, {"block-size", o.block_size, c.block_size},
                                          {"vocab-size", o.vocab_size, c.vocab_size}})
    if (given > 0 && given != have)
      throw io::UsageError(std::string("--init-from ") + o.init_from + " has " + flag + " " + std::to_string(have) +
                           ", --" + flag + " says " + std::to_string(given) + " (leave size flags out with --init-from)");
  if (ids != vocab.ids)
    throw io::UsageError("--init-from " + o.init_from + ": its vocabulary (" +
                         (ids.empty() ? "GPT-2 ids" : "compact, " + std::to_string(ids.size()) + " ids") +
                         ") is not the one this run uses (" +
                         (vocab.ids.empty() ? "GPT-2 ids" : "compact, " + std::to_string(vocab.ids.size()) + " ids") +
                         " from --data)");
  if (c.lrm.spec() != want.spec()) {  // re-place the multipliers: merge, then copy every other tensor
    m->merge_multipliers();
    ModelConfig nc = c;
    nc.lrm = want;
    try {
      nc.validate();
    } catch (const std::exception& e) {
      throw io::UsageError(std::string("--init-from with --multipliers ") + o.multipliers + ": " + e.what());
    }
    auto placed = std::make_unique<GPT>(nc, 0, /*initialise=*/false);  // multipliers 1; weights copied below
    std::map<std::string, at::Tensor> src;
    for (auto& [name, t] : m->named_parameters()) src.emplace(name, t);
    at::NoGradGuard no_grad;
    placed->visit([&](const std::string& name, at::Tensor& t, ParamRole role) {
      const bool mult = role == ParamRole::multiplier_qk || role == ParamRole::multiplier_other;
      if (!mult && src.count(name)) t.copy_(src.at(name));
    });
    m = std::move(placed);
  }
  m->set_dropout(o.dropout);
  m->to(device);
  return m;
}

// A setting as %g writes it (std::to_string would print 1e-12 as 0.000000).
std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

void print_settings(const TrainRun& r, const std::string& resumed_from) {
  const TrainOptions& o = r.options;
  const ModelConfig& mc = r.model->config();
  std::cout << "model      " << describe_model(*r.model) << "\n";
  std::cout << "protocol   GELU " << gelu_name(mc.gelu) << ", " << (mc.bias ? "with" : "no") << " biases, QK-norm "
            << qk_norm_name(mc.qk_norm) << ", dropout " << mc.dropout
            << (o.init_from.empty() ? "" : ", weights from " + o.init_from) << "\n";
  std::cout << "device     " << r.device.str() << ", " << precision_name(r.precision) << ", threads " << r.prov.threads
            << ", world " << r.dist.world << " (" << r.dist.source << "), rank " << r.dist.rank << "\n";
  std::cout << "batch      " << o.batch_size << " x " << mc.block_size << " tokens x " << r.grad_accum << " accumulation x "
            << r.dist.world << " ranks = " << r.tokens_per_step << " tokens/step, " << o.max_iters << " steps ("
            << static_cast<double>(r.tokens_per_step) * static_cast<double>(o.max_iters) << " tokens)\n";
  std::cout << "schedule   lr " << o.lr << " warm-up " << o.warmup_iters << " cosine to " << o.min_lr << " at step "
            << r.schedule.decay_iters << "; AdamW (" << o.beta1 << ", " << o.beta2 << "), eps " << o.adam_eps
            << "; clip " << o.grad_clip << (o.clip_multipliers ? " (multipliers included)" : " (multipliers excluded)")
            << "; multiplier lr x" << o.multiplier_lr_scale
            << (o.optimizer == "muon" ? "; Muon on the hidden matrices (lr " + std::to_string(o.muon_lr) + ", momentum " +
                                            std::to_string(o.muon_momentum) + ", wd " + std::to_string(o.muon_wd) +
                                            ", qkv " + o.muon_qkv + (r.device.is_cuda() ? ", NS5 bf16)" : ", NS5 fp32)")
                                      : std::string())
            << "\n";
  std::cout << "groups    ";
  for (const TrainOptimizer::Group& g : r.opt->groups())
    std::cout << " " << g.name << " (" << g.params.size() << " tensors, wd " << g.weight_decay << (g.muon ? ", Muon" : "") << (g.clipped ? "" : ", not clipped")
              << ")";
  std::cout << "\ncondition  " << o.condition
            << (o.condition == "A"   ? ": multiplier WD on every multiplier, Q/K included"
                : o.condition == "B" ? ": no Q/K multiplier WD, GaugeFix every " + std::to_string(o.gaugefix_every) +
                                           " steps (eps " + num(o.gaugefix_eps) + ", state transport " +
                                           o.state_transport + ")"
                : o.condition == "E" ? ": no Q/K multiplier WD, quotient-aware attention updates (" + o.quotient +
                                           (o.quotient == "full" && o.quotient_every > 1
                                                ? " every " + std::to_string(o.quotient_every) + " steps, diagonal between"
                                                : std::string()) +
                                           ", damping " + num(o.quotient_damping) +
                                           (o.quotient_vo ? ", Q/K and V/O)" : ", Q/K only)")
                : o.condition == "D" ? ": GaugeFix every " + std::to_string(o.gaugefix_every) + " steps + magnitude " +
                                           (o.magnitude == "wd" ? "control by the Q/K multiplier WD"
                                                                : "cap s_Q*s_K <= " + num(o.qk_cap))
                                     : ": no Q/K multiplier WD, no GaugeFix")
            << (r.has_heads ? "" : "; no Q/K row multipliers: no scales or drift")
            << (o.qk_gauge_init > 0 ? "; started off the balanced slice: log g_h ~ N(0, " +
                                          num(o.qk_gauge_init) + "^2) per head (--qk-gauge-init)"
                                    : std::string())
            << "\n";
  std::cout << "data       " << r.data_dir << " (" << r.train_files.size() << " train file(s), " << r.train->tokens()
            << " tokens; " << r.val_files.size() << " val file(s))"
            << (r.vocab_map.ids.empty() ? "" : ", compact vocabulary of " + std::to_string(r.vocab_map.ids.size()) + " ids")
            << "; validation " << o.eval_batches << " fixed batches every " << o.eval_every << " steps\n";
  std::cout << "instability spike: " << o.spike_on << " grad norm > " << o.spike_factor << " x median of the previous " << o.spike_window
            << " norms after step " << o.warmup_iters << "; unstable: >= " << o.unstable_spikes << " spikes or diverged\n";
  std::cout << "run dir    " << o.run.out << " (log.h5, checkpoints/ every " << o.ckpt_every << " steps, newest "
            << o.keep_ckpts << " kept)" << (resumed_from.empty() ? "" : "; resumed from " + resumed_from) << "\n";
  std::cout << "MFU peak   " << r.peak_tflops << " TFLOP/s" << (o.peak_tflops > 0 ? " (given)" : " (matmul measured now)")
            << "; " << r.flops_per_token / 1e9 << " GFLOP/token" << std::endl;
}

}  // namespace

OptimizerSettings optimizer_settings(const TrainOptions& o, c10::Device device) {
  OptimizerSettings s;
  s.beta1 = o.beta1, s.beta2 = o.beta2, s.eps = o.adam_eps;
  s.wd_matrices = o.weight_decay;
  // seed 000 §4.1: B and C drop the Q/K decay; D keeps it as its magnitude control unless it caps instead.
  const bool qk_decay = o.condition == "A" || (o.condition == "D" && o.magnitude == "wd");
  s.wd_multipliers_qk = qk_decay ? o.wd_multipliers : 0.0;
  s.wd_multipliers_other = o.wd_multipliers;
  s.wd_biases_norms = 0.0;
  s.wd_embeddings = o.wd_embeddings;
  s.multiplier_lr_scale = o.multiplier_lr_scale;
  s.muon = o.optimizer == "muon";
  s.muon_settings.lr = o.muon_lr;
  s.muon_settings.momentum = o.muon_momentum;
  s.muon_settings.weight_decay = o.muon_wd;
  s.muon_settings.split_qkv = o.muon_qkv == "split";
  s.muon_settings.bf16 = device.is_cuda();  // KellerJordan's bf16 NS5 on GPUs; float32 on the CPU
  s.clip_multipliers = o.clip_multipliers;
  return s;
}

void reseed_step_rng(std::uint64_t seed, std::int64_t step, int rank, c10::Device device) {
  const std::uint64_t s =
      mix_seed(seed ^ 0x5eedULL, static_cast<std::uint64_t>(step) * 65536u + static_cast<std::uint64_t>(rank));
  {
    at::Generator gen = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_current_seed(s);
  }
  if (device.is_cuda()) {  // the device's own generator draws CUDA dropout masks (and resets its offset)
    at::Generator gen = at::globalContext().defaultGenerator(device);  // a handle sharing the device's generator
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_current_seed(s);
  }
}

double spike_norm(const TrainOptions& o, const GradNorms& n) {
  return o.spike_on == "clipped" ? n.clipped : o.spike_on == "multipliers" ? n.multipliers : n.total;
}

double measure_matmul_tflops(c10::Device device, Precision precision) {
  at::NoGradGuard no_grad;
  const std::int64_t n = device.is_cuda() ? 4096 : 512;
  const auto dtype = precision == Precision::bf16 ? at::kBFloat16 : at::kFloat;
  const at::Tensor a = at::randn({n, n}, at::TensorOptions().dtype(dtype).device(device));
  const at::Tensor b = at::randn({n, n}, at::TensorOptions().dtype(dtype).device(device));
  at::mm(a, b).sum().item<double>();  // warm-up (and CUDA sync)
  double best = 0;
  const auto t_end = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  for (int rep = 0; rep < 50 && std::chrono::steady_clock::now() < t_end; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    at::Tensor c;
    for (int i = 0; i < 4; ++i) c = at::mm(a, b);
    c.sum().item<double>();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, 4.0 * 2.0 * static_cast<double>(n * n * n) / s / 1e12);
  }
  return best;
}

nlohmann::json train_state_json(const TrainRun& r) {
  const TrainState& s = r.state;
  auto num = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  return {{"step", s.step},
          {"tokens", s.tokens},
          {"best_val_loss", num(s.best_val_loss)},
          {"final_val_loss", num(s.final_val_loss)},
          {"final_drift_max", num(s.final_drift_max)},
          {"final_drift_mean", num(s.final_drift_mean)},
          {"max_drift_max", s.max_drift_max},
          {"n_spikes", s.n_spikes},
          {"spike_window", r.spikes.window()},
          {"world", r.dist.world},
          {"tokens_per_step", r.tokens_per_step},
          {"vocab_ids", r.vocab_map.ids.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.vocab_map.ids)},
          {"schedule", {{"lr", r.schedule.lr}, {"min_lr", r.schedule.min_lr}, {"warmup", r.schedule.warmup},
                        {"decay_iters", r.schedule.decay_iters}, {"max_iters", r.options.max_iters}}},
          {"rng", "CPU and CUDA generators reseeded from (seed, step, rank) before every step"},
          {"options", r.prov.config}};
}

TrainState train_state_from_json(const nlohmann::json& j) {
  auto num = [&](const char* k) { return j.contains(k) && j[k].is_number() ? j[k].get<double>() : nan(); };
  TrainState s;
  s.step = j.at("step").get<std::int64_t>();
  s.tokens = j.at("tokens").get<std::int64_t>();
  s.best_val_loss = num("best_val_loss"), s.final_val_loss = num("final_val_loss");
  s.final_drift_max = num("final_drift_max"), s.final_drift_mean = num("final_drift_mean");
  s.max_drift_max = num("max_drift_max");
  s.n_spikes = j.at("n_spikes").get<std::int64_t>();
  return s;
}

namespace {

// The newest checkpoint of the run whose model and optimizer state both load, with them loaded.
// A damaged newer checkpoint is skipped with a line saying so and, once an older one has loaded,
// renamed to damaged-step_* beside it (kept, never again picked). None loading is an error.
std::tuple<std::optional<std::string>, std::optional<Checkpoint>, std::optional<safetensors::File>>
newest_loadable_checkpoint(const std::string& out, c10::Device device, bool rank0) {
  const std::optional<std::string> newest = latest_train_checkpoint(out);  // also clears .tmp-* leftovers
  if (!newest) return {};
  std::vector<std::string> skipped;
  std::string first_error;
  for (const std::string& dir : train_checkpoints_newest_first(out)) {
    try {
      Checkpoint ck = load_checkpoint(dir, device);
      safetensors::File opt = safetensors::read_file(dir + "/optimizer.safetensors");
      if (rank0)
        for (const std::string& bad : skipped) {
          const fs::path p(bad);
          std::error_code ec;
          fs::rename(p, p.parent_path() / ("damaged-" + p.filename().string()), ec);
        }
      return {dir, std::move(ck), std::move(opt)};
    } catch (const std::exception& e) {
      if (rank0) std::cerr << "train: skipping checkpoint " << dir << ": " << e.what() << "\n";
      if (first_error.empty()) first_error = e.what();
      skipped.push_back(dir);
    }
  }
  throw std::runtime_error(out + ": no checkpoint loads (the newest: " + first_error + ")");
}

// A directory whose earlier run failed before logging its first step: no checkpoint, and a log that
// is missing, empty or holds no rows. A new run may replace it without --force (nothing is lost).
bool failed_before_first_step(const std::string& out) {
  if (!train_checkpoints_newest_first(out).empty()) return false;
  const std::string log = train_log_path(out);
  std::error_code ec;
  if (!fs::exists(log, ec) || fs::file_size(log, ec) == 0) return true;
  try {
    return io::RunLogReader(log).series_length() == 0;
  } catch (const std::exception&) {
    return false;  // unreadable: not ours to judge, keep refusing
  }
}

// A one-line refusal, before anything is allocated, of a micro-batch whose activations cannot fit in this
// machine's memory (CPU only: there the kernel's OOM killer ends the process with SIGKILL instead of an
// allocation failing; a CUDA allocation failure is an exception with a message of its own). The estimate
// counts float32 activations kept for the backward pass: per token, the logits three times (logits, their
// softmax, its gradient) and per layer ~20 d-vectors plus three attention rows of T scores per head.
void check_activation_memory(const ModelConfig& mc, std::int64_t batch_size, c10::Device device) {
  if (!device.is_cpu()) return;
  const double pages = static_cast<double>(sysconf(_SC_PHYS_PAGES)), page = static_cast<double>(sysconf(_SC_PAGESIZE));
  if (!(pages > 0 && page > 0)) return;
  const double memory = pages * page;
  const double tokens = static_cast<double>(batch_size) * static_cast<double>(mc.block_size);
  const double logits = 4.0 * tokens * 3.0 * static_cast<double>(mc.padded_vocab());
  const double layers = 4.0 * tokens * static_cast<double>(mc.n_layer) *
                        (20.0 * static_cast<double>(mc.n_embd) + 3.0 * static_cast<double>(mc.n_head * mc.block_size));
  if (logits + layers <= memory) return;
  auto gb = [](double b) {
    char t[32];
    std::snprintf(t, sizeof t, "%.3g GB", b / 1e9);
    return std::string(t);
  };
  throw std::runtime_error("one micro-batch of --batch-size " + std::to_string(batch_size) + " x " +
                           std::to_string(mc.block_size) + " tokens needs about " + gb(logits + layers) +
                           " of activations (the logits alone " + gb(logits) + "); this machine has " + gb(memory) +
                           ": lower --batch-size (and raise --grad-accum to keep the batch)");
}

}  // namespace

TrainRun setup_train(const TrainOptions& o, io::Provenance prov) {
  validate_train_options(o);
  TrainRun r;
  r.options = o;
  prov.kind = "gpt2/train";
  prov.seed = o.run.seed;
  prov.threads = apply_torch_threads(o.run.threads);
  r.dist = read_dist_env();
  std::string device_name = o.device;
  if (r.dist.active() && (o.device == "cuda" || o.device.rfind("cuda:", 0) == 0))
    device_name = "cuda:" + std::to_string(r.dist.local_rank);
  r.device = parse_device(device_name);
  r.precision = parse_precision(o.precision);
  r.dist = connect_train_dist(o.dist_backend, r.device, o.dist_timeout_s);
  const bool rank0 = r.dist.rank == 0;

  const std::string log_path = train_log_path(o.run.out);
  // One writer per run directory, taken before anything in it is read, removed or replaced.
  if (rank0) r.out_lock = io::WriterLock::acquire_dir(o.run.out, "a training run");
  std::optional<std::string> ckpt;
  std::optional<Checkpoint> loaded;
  std::optional<safetensors::File> opt_state;
  if (o.resume) {
    std::tie(ckpt, loaded, opt_state) = newest_loadable_checkpoint(o.run.out, r.device, rank0);
  } else if (rank0 && (fs::exists(log_path) || fs::exists(train_checkpoints_dir(o.run.out)))) {
    if (!o.run.force && !failed_before_first_step(o.run.out))
      throw std::runtime_error(o.run.out + ": already holds a run (log.h5 or checkpoints/); continue it with --resume "
                                           "or replace it with --force");
    fs::remove_all(train_checkpoints_dir(o.run.out));
    fs::remove(log_path);
    fs::remove(log_path + ".resume-src");
    if (o.data.rfind("synthetic:", 0) == 0) fs::remove_all(o.run.out + "/data");  // ours, regenerated
  }
  r.data_dir = resolve_data_dir(o, rank0);
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
    Checkpoint& ck = *loaded;
    saved = ck.config.at("trainer");
    check_resume_options(saved.value("options", nlohmann::json()), prov.config);
    if (saved.value("world", 1) != r.dist.world)
      throw io::UsageError("--resume: the run was trained on " + saved["world"].dump() + " ranks, this launch has " +
                           std::to_string(r.dist.world) + " (the data order depends on it)");
    const nlohmann::json saved_ids = saved.value("vocab_ids", nlohmann::json(nullptr));
    if ((saved_ids.is_array() ? saved_ids.get<std::vector<std::int32_t>>() : std::vector<std::int32_t>{}) !=
        r.vocab_map.ids)
      throw std::runtime_error(*ckpt + ": its compact vocabulary differs from the one of " + o.data);
    r.model = std::move(ck.model);
    r.state = train_state_from_json(saved);
  } else if (!o.init_from.empty()) {
    r.model = init_from_weights(o, r.vocab_map, r.device);
    r.state.best_val_loss = r.state.final_val_loss = nan();
    r.state.final_drift_max = r.state.final_drift_mean = nan();
  } else {
    const ModelConfig mc =
        build_model_config(o, r.vocab_map.ids.empty() ? 0 : static_cast<std::int64_t>(r.vocab_map.ids.size()));
    r.model = std::make_unique<GPT>(mc, o.run.seed);
    r.model->to(r.device);
    r.state.best_val_loss = r.state.final_val_loss = nan();
    r.state.final_drift_max = r.state.final_drift_mean = nan();
  }
  const ModelConfig& mc = r.model->config();
  check_activation_memory(mc, o.batch_size, r.device);
  r.has_heads = has_qk_row_multipliers(mc);
  if (!ckpt && o.qk_gauge_init > 0) {
    if (!r.has_heads)
      throw io::UsageError("--qk-gauge-init needs row multipliers on q and k (--multipliers '" + mc.lrm.spec() + "')");
    offset_qk_gauge(*r.model, o.qk_gauge_init, o.run.seed);
  }
  if (o.gaugefix_vo && !has_vo_multipliers(mc))
    throw io::UsageError("--gaugefix-vo needs row multipliers on v and columns on attn_out (--multipliers '" +
                         mc.lrm.spec() + "')");
  if (o.grad_projection != "none") {
    try {
      require_projectable(mc);
    } catch (const std::invalid_argument& e) {
      throw io::UsageError(std::string("--grad-projection ") + o.grad_projection + ": " + e.what() +
                           " (--multipliers '" + mc.lrm.spec() + "')");
    }
  }
  if ((o.condition == "B" || o.condition == "D") && !r.has_heads)
    throw io::UsageError("--condition " + o.condition + " needs row multipliers on q and k (--multipliers '" +
                         mc.lrm.spec() + "' has none)");
  r.opt = std::make_unique<TrainOptimizer>(*r.model, optimizer_settings(o, r.device));
  if (ckpt) r.opt->load_state(*opt_state);
  if (r.dist.active() && !ckpt) r.dist.broadcast_parameters(r.opt->parameters());

  r.grad_accum = rank_grad_accum(o, mc.block_size, r.dist.world);
  r.train = std::make_unique<TrainBatches>(r.train_files, o.run.seed, o.batch_size, mc.block_size, r.grad_accum,
                                           r.dist.rank, r.dist.world, mc.vocab_size, r.vocab_map);
  r.val = std::make_unique<ValidationBatches>(r.val_files, o.batch_size, mc.block_size, o.eval_batches, mc.vocab_size,
                                              r.vocab_map);
  r.schedule = {o.lr, o.min_lr, o.warmup_iters, o.lr_decay_iters > 0 ? o.lr_decay_iters : o.max_iters};
  if (ckpt) r.schedule = resumed_schedule(o, saved, r.schedule, rank0);
  r.spikes = SpikeDetector(o.spike_factor, o.spike_window, o.warmup_iters);
  if (ckpt) r.spikes.restore(saved.value("spike_window", std::vector<double>{}));
  r.tokens_per_step = o.batch_size * mc.block_size * r.grad_accum * r.dist.world;
  r.flops_per_token = 6.0 * static_cast<double>(r.model->num_parameters()) +
                      12.0 * static_cast<double>(mc.n_layer * mc.n_embd * mc.block_size);
  r.peak_tflops = o.peak_tflops > 0 ? o.peak_tflops : measure_matmul_tflops(r.device, r.precision);
  r.prov = std::move(prov);

  if (rank0) {
    const int L = static_cast<int>(mc.n_layer), H = static_cast<int>(mc.n_head);
    if (o.resume)
      r.log.emplace(TrainLog::rebuild(log_path, r.prov, r.state.step, L, H));
    else
      r.log.emplace(TrainLog::create(log_path, r.prov, true, L, H));
    print_settings(r, ckpt ? *ckpt : (o.resume ? std::string("nothing (no checkpoint yet: starting at step 0)") : ""));
  }
  return r;
}

double evaluate(TrainRun& r) {
  at::NoGradGuard no_grad;
  r.model->train(false);
  const std::int64_t n = r.val->count(), world = r.dist.world;
  const bool shared = r.dist.active() && n % world == 0;  // each rank a share, then the mean of means
  double sum = 0;
  std::int64_t count = 0;
  for (std::int64_t i = shared ? r.dist.rank : 0; i < n; i += shared ? world : 1) {
    const at::Tensor batch = r.val->batch(i).to(r.device);
    const std::int64_t T = batch.size(1) - 1;
    AutocastScope autocast(r.device, r.precision);
    sum += r.model->loss(batch.narrow(1, 0, T), batch.narrow(1, 1, T)).item<double>();
    ++count;
  }
  r.model->train(true);
  const double mean = sum / static_cast<double>(count);
  return shared ? r.dist.all_reduce_mean(mean) : mean;
}

void save_state(TrainRun& r) {
  if (r.dist.rank == 0) {
    r.log->log().flush();
    save_train_checkpoint(r.options.run.out, r.state.step, *r.model, *r.opt, train_state_json(r), r.options.keep_ckpts);
  }
  if (r.dist.active()) r.dist.barrier();
}

TrainResult finish_train(TrainRun& r, double seconds) {
  const TrainOptions& o = r.options;
  const TrainState& s = r.state;
  TrainResult res;
  res.steps = s.step, res.tokens = s.tokens;
  res.best_val_loss = s.best_val_loss, res.final_val_loss = s.final_val_loss;
  res.final_drift_max = s.final_drift_max, res.final_drift_mean = s.final_drift_mean;
  res.n_spikes = s.n_spikes, res.diverged = s.diverged, res.interrupted = s.interrupted;
  res.stable = !s.diverged && s.n_spikes < o.unstable_spikes;
  if (r.dist.rank != 0) return res;
  io::RunLog& log = r.log->log();
  log.set_summary("condition", o.condition);
  log.set_summary("seed", static_cast<std::int64_t>(o.run.seed));
  log.set_summary("best_val_loss", s.best_val_loss);
  log.set_summary("final_val_loss", s.final_val_loss);
  log.set_summary("final_drift_max", s.final_drift_max);
  log.set_summary("final_drift_mean", s.final_drift_mean);
  log.set_summary("max_drift_max", r.has_heads ? s.max_drift_max : nan());
  log.set_summary("n_spikes", s.n_spikes);
  log.set_summary("stable", std::int64_t{res.stable ? 1 : 0});
  log.set_summary("diverged", std::int64_t{s.diverged ? 1 : 0});
  log.set_summary("interrupted", std::int64_t{s.interrupted ? 1 : 0});
  log.set_summary("completed", std::int64_t{s.step == o.max_iters ? 1 : 0});
  log.set_summary("steps", s.step);
  log.set_summary("max_iters", o.max_iters);
  log.set_summary("tokens", s.tokens);
  log.set_summary("tokens_per_step", r.tokens_per_step);
  log.set_summary("world", std::int64_t{r.dist.world});
  log.set_summary("gaugefix_every", o.condition == "B" || o.condition == "D" ? o.gaugefix_every : std::int64_t{0});
  log.set_summary("qk_norm", o.qk_norm);
  log.set_summary("magnitude", o.condition == "D" ? o.magnitude : std::string("-"));
  log.set_summary("state_transport", o.state_transport);
  log.set_summary("precision", std::string(precision_name(r.precision)));
  log.set_summary("n_params", r.model->num_parameters());
  log.set_summary("n_multipliers", r.model->config().multiplier_count());
  log.set_summary("spike_rule", o.spike_on + " grad_norm > " + std::to_string(o.spike_factor) + " x median of previous " +
                                    std::to_string(o.spike_window) + " after step " + std::to_string(o.warmup_iters) +
                                    "; unstable if >= " + std::to_string(o.unstable_spikes) + " spikes or diverged");
  log.set_summary("seconds_this_process", seconds);
  r.log->log().close();
  std::cout << "\n== gaugelab train: condition " << o.condition << ", seed " << o.run.seed << " ==\n"
            << "steps       " << s.step << " / " << o.max_iters << (s.diverged ? "  DIVERGED (non-finite loss)" : "")
            << (s.interrupted ? "  interrupted (resume with --resume)" : "") << "\n"
            << "tokens      " << s.tokens << " (" << r.tokens_per_step << " per step)\n"
            << "val loss    final " << s.final_val_loss << ", best " << s.best_val_loss << "\n"
            << "Q/K drift   final max " << s.final_drift_max << ", mean " << s.final_drift_mean << "; max over run "
            << s.max_drift_max << "\n"
            << "stability   " << (res.stable ? "stable" : "UNSTABLE") << " (" << s.n_spikes << " spikes)\n"
            << "time        " << seconds << " s in this process\n"
            << "log         " << train_log_path(o.run.out) << "\n"
            << "checkpoints " << train_checkpoints_dir(o.run.out) << "\n";
  return res;
}

}  // namespace gaugelab::gpt2
