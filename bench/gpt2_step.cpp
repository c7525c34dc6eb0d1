// bench/gpt2_step: tokens/s of one GPT-2 training step (forward + backward + AdamW) on the CPU, for
// fp32 and bf16 autocast, with and without learnable multipliers; beside it the achieved GFLOP/s,
// the matmul peak measured in the same run, and an eager PyTorch reference (tests/reference/
// nanogpt_ref.py on the same torch, same threads) timed in the same run, as ratios.
// Default config: n_layer 4, n_head 4, n_embd 256, T 256, B 4, vocab 50257 (issue 5).
// Load matters on a shared machine: the load average is printed before and after.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <ATen/core/grad_mode.h>
#include <ATen/ops/_fused_adamw.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>
#include <torch/version.h>

#include "gpt2/model/model.hpp"
#include "gpt2/model/runtime.hpp"
#include "io/options.hpp"

using namespace gaugelab;
using Clock = std::chrono::steady_clock;

namespace {

struct BenchOptions {
  std::int64_t layers = 4, heads = 4, embd = 256, seq = 256, batch = 4, vocab = 50257;
  std::int64_t warmup = 2;   // untimed steps first (allocator and kernel warm-up)
  std::int64_t steps = 10;   // timed steps per variant
  int threads = 2;           // LibTorch intra-op threads, ours and the reference's
  std::vector<std::string> variants = {"fp32", "fp32+lrm", "bf16", "bf16+lrm"};
  bool reference = true;     // also time the eager PyTorch reference
  std::string python;        // interpreter for the reference; default: the venv beside the torch wheel
};

std::string loadavg() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Best-of-5 GFLOP/s of a square n×n matmul in `dtype`: the machine's matmul peak for that dtype.
double matmul_peak(at::ScalarType dtype, std::int64_t n) {
  const auto opt = at::TensorOptions().dtype(dtype);
  const at::Tensor a = at::randn({n, n}, opt), b = at::randn({n, n}, opt);
  at::mm(a, b);
  double best = 1e30;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = Clock::now();
    at::mm(a, b);
    best = std::min(best, seconds_since(t0));
  }
  return 2.0 * n * n * n / best / 1e9;
}

// AdamW through LibTorch's fused CPU/GPU kernel, one call per weight-decay group (nanoGPT's groups:
// 0.1 on matrices and embeddings, 2e-3 on multipliers, none on biases and LayerNorm).
class FusedAdamW {
 public:
  explicit FusedAdamW(gpt2::GPT& m) {
    for (const gpt2::ParamGroup& g : m.parameter_groups()) {
      Group& dst = g.role == gpt2::ParamRole::matrix || g.role == gpt2::ParamRole::embedding ? decay_
                   : g.role == gpt2::ParamRole::bias_norm                                   ? none_
                                                                                            : mult_;
      for (const at::Tensor& p : g.params) {
        dst.params.push_back(p);
        dst.m.push_back(at::zeros_like(p));
        dst.v.push_back(at::zeros_like(p));
        dst.steps.push_back(at::zeros({}, p.options().dtype(at::kFloat)));
      }
    }
    decay_.wd = 0.1, mult_.wd = 2e-3, none_.wd = 0.0;
  }
  void step(double lr) {
    at::NoGradGuard no_grad;
    for (Group* g : {&decay_, &mult_, &none_}) {
      if (g->params.empty()) continue;
      std::vector<at::Tensor> grads;
      for (const at::Tensor& p : g->params) grads.push_back(p.grad());
      for (at::Tensor& s : g->steps) s.add_(1);
      at::_fused_adamw_(g->params, grads, g->m, g->v, {}, g->steps, lr, 0.9, 0.95, g->wd, 1e-8, false, false);
    }
  }
  void zero_grad() {
    for (Group* g : {&decay_, &mult_, &none_})
      for (at::Tensor& p : g->params) p.mutable_grad().reset();  // set_to_none: backward allocates afresh
  }

 private:
  struct Group {
    std::vector<at::Tensor> params, m, v, steps;
    double wd = 0;
  };
  Group decay_, mult_, none_;
};

struct Timing {
  double step_s = 0, fwd_s = 0, bwd_s = 0, opt_s = 0, loss = 0;
};

Timing time_variant(const BenchOptions& o, bool bf16, bool lrm) {
  gpt2::ModelConfig c;
  c.n_layer = o.layers, c.n_head = o.heads, c.n_embd = o.embd, c.block_size = o.seq, c.vocab_size = o.vocab;
  c.lrm = lrm ? gpt2::LrmPlacement{} : gpt2::LrmPlacement::none();
  gpt2::GPT model(c, 0);
  model.train(true);
  FusedAdamW opt(model);
  const at::Tensor data = at::randint(o.vocab, {o.batch, o.seq + 1}, at::TensorOptions().dtype(at::kLong));
  const at::Tensor x = data.narrow(1, 0, o.seq).contiguous(), y = data.narrow(1, 1, o.seq).contiguous();
  const c10::Device cpu(c10::kCPU);
  Timing t;
  for (std::int64_t i = 0; i < o.warmup + o.steps; ++i) {
    const auto t0 = Clock::now();
    at::Tensor loss;
    {
      gpt2::AutocastScope scope(cpu, bf16 ? gpt2::Precision::bf16 : gpt2::Precision::fp32);
      loss = model.loss(x, y);
    }
    const auto t1 = Clock::now();
    loss.backward();
    const auto t2 = Clock::now();
    opt.step(6e-4);
    opt.zero_grad();
    const auto t3 = Clock::now();
    if (i < o.warmup) continue;
    t.fwd_s += std::chrono::duration<double>(t1 - t0).count();
    t.bwd_s += std::chrono::duration<double>(t2 - t1).count();
    t.opt_s += std::chrono::duration<double>(t3 - t2).count();
    t.loss = loss.item<double>();
  }
  const double n = static_cast<double>(o.steps);
  t.fwd_s /= n, t.bwd_s /= n, t.opt_s /= n;
  t.step_s = t.fwd_s + t.bwd_s + t.opt_s;
  return t;
}

// tokens/s of the eager reference, or 0 with a note if it cannot run.
double reference_tokens_per_s(const BenchOptions& o, const std::string& dtype) {
  std::ostringstream cmd;
  cmd << o.python << " -W ignore " << GAUGELAB_SOURCE_DIR << "/tests/reference/nanogpt_ref.py --threads " << o.threads
      << " --dtype " << dtype << " --n-layer " << o.layers << " --n-head " << o.heads << " --n-embd " << o.embd
      << " --seq " << o.seq << " --batch " << o.batch << " --vocab " << o.vocab << " --warmup " << o.warmup
      << " --steps " << o.steps << " 2>&1";
  FILE* p = popen(cmd.str().c_str(), "r");
  if (!p) return 0;
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) out += buf;
  pclose(p);
  const auto k = out.find("\"tokens_per_s\": ");
  if (k == std::string::npos) {
    std::cerr << "reference failed:\n" << out << "\n";
    return 0;
  }
  return std::stod(out.substr(k + 16));
}

}  // namespace

int main(int argc, char** argv) {
  BenchOptions o;
#ifdef GAUGELAB_TORCH_PYTHON
  o.python = GAUGELAB_TORCH_PYTHON;
#endif
  io::Options opts("gpt2_step", "GPT-2 training-step throughput vs the matmul peak and an eager PyTorch reference.");
  opts.add("layers", &o.layers, "n_layer", io::Range::at_least(1))
      .add("heads", &o.heads, "n_head", io::Range::at_least(1))
      .add("embd", &o.embd, "n_embd", io::Range::at_least(1))
      .add("seq", &o.seq, "sequence length T (= block size)", io::Range::at_least(1))
      .add("batch", &o.batch, "batch size B", io::Range::at_least(1))
      .add("vocab", &o.vocab, "vocabulary (padded to 64 internally)", io::Range::at_least(1))
      .add("warmup", &o.warmup, "untimed steps", io::Range::non_negative())
      .add("steps", &o.steps, "timed steps", io::Range::at_least(1))
      .add("threads", &o.threads, "LibTorch threads (ours and the reference's)", io::Range::at_least(1))
      .add("variants", &o.variants, "comma list of fp32, fp32+lrm, bf16, bf16+lrm")
      .add("reference", &o.reference, "time the eager PyTorch reference too")
      .add("python", &o.python, "Python with torch for the reference");
  try {
    if (!opts.parse(std::vector<std::string>(argv + 1, argv + argc))) return 0;
  } catch (const std::exception& e) {
    std::cerr << "gpt2_step: " << e.what() << "\n";
    return 2;
  }
  const int threads = gpt2::apply_torch_threads(o.threads);
  std::cout << "gpt2_step: settings " << opts.to_json().dump() << "\n"
            << "libtorch " << TORCH_VERSION << ", " << threads << " threads, load average before " << loadavg() << "\n";
  const double peak32 = matmul_peak(at::kFloat, 2048), peak16 = matmul_peak(at::kBFloat16, 2048);
  std::printf("matmul peak (2048^3, best of 5): fp32 %.0f GFLOP/s, bf16 %.0f GFLOP/s\n", peak32, peak16);

  // Model FLOPs per step (nanoGPT's count): 6·tokens·(matmul parameters incl. the LM head over the
  // padded vocabulary) + 12·n_layer·n_embd·T·tokens for attention.
  const double tokens = static_cast<double>(o.batch * o.seq);
  const double padded = static_cast<double>((o.vocab + 63) / 64 * 64);
  const double matmul_params = 12.0 * o.layers * o.embd * o.embd + padded * o.embd;
  const double flops = 6.0 * tokens * matmul_params + 12.0 * o.layers * o.embd * o.seq * tokens;

  std::map<std::string, double> ref;
  std::map<std::string, double> ours;
  std::printf("%-10s %9s %9s %9s %9s %10s %9s %8s %9s\n", "variant", "step ms", "fwd ms", "bwd ms", "adamw ms",
              "tokens/s", "GFLOP/s", "% peak", "vs eager");
  for (const std::string& v : o.variants) {
    const bool bf16 = v.rfind("bf16", 0) == 0, lrm = v.find("+lrm") != std::string::npos;
    const std::string dt = bf16 ? "bf16" : "fp32";
    if (o.reference && !o.python.empty() && !ref.count(dt)) ref[dt] = reference_tokens_per_s(o, dt);
    const Timing t = time_variant(o, bf16, lrm);
    const double tps = tokens / t.step_s, gflops = flops / t.step_s / 1e9;
    ours[v] = tps;
    std::printf("%-10s %9.1f %9.1f %9.1f %9.1f %10.0f %9.0f %7.0f%% %8.2fx\n", v.c_str(), 1e3 * t.step_s,
                1e3 * t.fwd_s, 1e3 * t.bwd_s, 1e3 * t.opt_s, tps, gflops, 100.0 * gflops / (bf16 ? peak16 : peak32),
                ref.count(dt) && ref[dt] > 0 ? tps / ref[dt] : 0.0);
    std::fflush(stdout);
  }
  for (const auto& [dt, tps] : ref) std::printf("eager PyTorch reference %s: %.0f tokens/s\n", dt.c_str(), tps);
  if (ours.count("fp32") && ours.count("fp32+lrm"))
    std::printf("multiplier overhead fp32: %.1f%%\n", 100.0 * (ours["fp32"] / ours["fp32+lrm"] - 1.0));
  if (ours.count("bf16") && ours.count("bf16+lrm"))
    std::printf("multiplier overhead bf16: %.1f%%\n", 100.0 * (ours["bf16"] / ours["bf16+lrm"] - 1.0));
  if (ours.count("fp32") && ours.count("bf16"))
    std::printf("bf16 / fp32 speed-up: %.2fx\n", ours["bf16"] / ours["fp32"]);
  std::cout << "load average after " << loadavg() << "\n";
  return 0;
}
