// micro_batch.hpp: the divisors, the binary search, and what "fits" means on each device.
#include "gpt2/train/micro_batch.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <stdexcept>

#include <ATen/Context.h>
#include <ATen/ops/zeros.h>
#include <c10/core/DeviceGuard.h>
#include <c10/util/Exception.h>

#include "gpt2/model/cuda_side.hpp"
#include "gpt2/model/lm_head_loss.hpp"
#include "gpt2/model/model.hpp"

namespace gaugelab::gpt2 {

std::vector<std::int64_t> divisors(std::int64_t s) {
  if (s < 1) throw std::invalid_argument("divisors: " + std::to_string(s) + " is not positive");
  std::vector<std::int64_t> low, high;
  for (std::int64_t k = 1; k <= s / k; ++k)  // k ≤ √s without k·k overflowing
    if (s % k == 0) {
      low.push_back(k);
      if (k != s / k) high.push_back(s / k);
    }
  low.insert(low.end(), high.rbegin(), high.rend());
  return low;
}

std::int64_t largest_fitting(const std::vector<std::int64_t>& ascending, const std::function<bool(std::int64_t)>& fits,
                             int* probes) {
  // Invariant: every index < lo fits, every index ≥ hi does not (as far as asked).
  std::size_t lo = 0, hi = ascending.size();
  int n = 0;
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    ++n;
    if (fits(ascending[mid]))
      lo = mid + 1;
    else
      hi = mid;
  }
  if (probes != nullptr) *probes = n;
  return lo == 0 ? 0 : ascending[lo - 1];
}

namespace {

// The logits' share of activation_bytes: float32 logits, their softmax and its gradient, per token and vocabulary row.
double logits_bytes(const ModelConfig& mc, std::int64_t batch) {
  return 4.0 * 3.0 * static_cast<double>(batch) * static_cast<double>(mc.block_size) * static_cast<double>(mc.padded_vocab());
}

}  // namespace

double activation_bytes(const ModelConfig& mc, std::int64_t batch) {
  const double tokens = static_cast<double>(batch) * static_cast<double>(mc.block_size);
  const double layers = 4.0 * tokens * static_cast<double>(mc.n_layer) *
                        (20.0 * static_cast<double>(mc.n_embd) + 3.0 * static_cast<double>(mc.n_head * mc.block_size));
  return logits_bytes(mc, batch) + layers;
}

double cpu_step_bytes_estimate(const ModelConfig& mc, std::int64_t parameters, std::int64_t batch) {
  return activation_bytes(mc, batch) + 16.0 * static_cast<double>(parameters);  // parameter, gradient, two moments
}

namespace {

std::string gb(double bytes) {
  char t[32];
  std::snprintf(t, sizeof t, "%.3g GB", bytes / 1e9);
  return t;
}

// An allocation that failed: the caching allocator's own error, or a library's (cuBLAS's workspace) as c10::Error.
bool is_out_of_memory(const c10::Error& e) {
  const std::string m = e.what_without_backtrace();
  return m.find("out of memory") != std::string::npos || m.find("ALLOC_FAILED") != std::string::npos ||
         m.find("cudaErrorMemoryAllocation") != std::string::npos;
}

// Forward and backward of `batch` sequences of token 0 on the model's device, `passes` times with the gradients
// accumulating; the caching allocator's peak of reserved bytes and what it reserved before (ProbePeak), or a NaN
// peak when an allocation failed. The gradients it made are dropped and the cache emptied, so that the run starts
// from what it had; the loss uses a workspace of its own, so that the model's does not keep a failed probe's size.
ProbePeak cuda_probe_peak(GPT& model, std::int64_t batch, int passes, c10::Device device, Precision precision) {
  const CudaSide& cuda = cuda_side();
  const c10::DeviceGuard guard(device);
  const c10::DeviceIndex index = guard.current_device().index();
  auto drop = [&] {
    for (auto& [name, p] : model.named_parameters()) p.mutable_grad().reset();
    cuda.empty_cache();
  };
  drop();
  cuda.reset_peak_stats(index);
  ProbePeak probe;
  probe.peak = std::numeric_limits<double>::quiet_NaN();
  probe.base = cuda.memory(index).reserved;
  const bool was_training = model.training();
  model.train(true);  // as the step runs: dropout's masks kept (the step reseeds its generators, so no draw is lost)
  try {
    const std::int64_t T = model.config().block_size;
    LmHeadWorkspace ws;
    ws.kernel = model.lm_head_kernel();
    for (int pass = 0; pass < passes; ++pass) {
      const at::Tensor ids = at::zeros({batch, T}, at::TensorOptions().dtype(at::kLong).device(device));  // [B, T]
      at::Tensor loss;
      {
        AutocastScope autocast(device, precision);
        loss = model.loss(ids, ids, &ws);
      }
      loss.backward();
    }
    cuda.synchronize();
    // reserved, not allocated: what the card had to hold, fragmentation included
    probe.peak = cuda.memory(index).reserved_peak;
  } catch (const c10::OutOfMemoryError&) {
  } catch (const c10::Error& e) {
    if (!is_out_of_memory(e)) throw;  // a real fault is not "does not fit"
  }
  model.train(was_training);
  drop();
  // the run's peak (cuda_peak_memory_gb) is its own, not a probe's
  cuda.reset_peak_stats(index);
  return probe;
}

// The cgroup's memory limit (v2, then v1), or infinity.
double cgroup_limit_bytes() {
  for (const char* f : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream in(f);
    std::string v;
    if (in >> v && !v.empty() && v != "max") {
      try {
        return std::stod(v);
      } catch (const std::exception&) {
      }
    }
  }
  return std::numeric_limits<double>::infinity();
}

}  // namespace

double fit_device_bytes(c10::Device device, int local_ranks) {
  if (device.is_cuda()) {
    // The card's total, or less when memory outside this allocator is taken (the CUDA context, NCCL's buffers,
    // other processes): what is free plus what the allocator holds, after emptying its cache.
    const CudaSide& cuda = cuda_side();
    const c10::DeviceGuard guard(device);
    const c10::DeviceIndex index = guard.current_device().index();
    cuda.empty_cache();
    std::size_t free = 0, total = 0;
    cuda.mem_get_info(index, &free, &total);
    const double held = cuda.memory(index).reserved;
    return std::min(static_cast<double>(total), static_cast<double>(free) + held);
  }
  const double pages = static_cast<double>(sysconf(_SC_PHYS_PAGES)), page = static_cast<double>(sysconf(_SC_PAGESIZE));
  const double physical = pages > 0 && page > 0 ? pages * page : 0.0;
  return std::min(physical, cgroup_limit_bytes()) / std::max(local_ranks, 1);
}

double cuda_peak_memory_gb(int index) {
  if (!cuda_present() || index < 0 || index >= cuda_side().device_count()) return std::numeric_limits<double>::quiet_NaN();
  return cuda_side().memory(static_cast<c10::DeviceIndex>(index)).allocated_peak / 1e9;
}

double probe_need_bytes(const ProbePeak& probe, const FitRequest& q) {
  const double graph = q.graph_pool ? std::max(0.0, probe.peak - probe.base) : 0.0;
  return probe.peak + graph + q.reserve_bytes;
}

MicroBatchFit fit_micro_batch(GPT& model, const FitRequest& q, c10::Device device, Precision precision) {
  MicroBatchFit f;
  f.device_bytes = fit_device_bytes(device, q.local_ranks);
  f.budget_bytes = q.memory_fraction * f.device_bytes;
  const std::int64_t parameters = model.num_parameters();
  std::function<bool(std::int64_t)> fits;
  if (device.is_cuda()) {
    f.how = "probed on " + device.str();
    fits = [&f, &model, &q, device, precision](std::int64_t b) {
      const int passes = b < q.sequences ? 2 : 1;  // later micro-steps start with the gradients resident
      const ProbePeak probe = cuda_probe_peak(model, b, passes, device, precision);
      const double need = probe_need_bytes(probe, q);
      const bool ok = !std::isnan(need) && need <= f.budget_bytes;
      if (q.verbose)
        std::cerr << "train: fit: " << b << " sequences: "
                  << (std::isnan(probe.peak)
                          ? std::string("out of memory")
                          : gb(probe.peak) +
                                (q.graph_pool ? " + " + gb(need - probe.peak - q.reserve_bytes) + " graph pool" : "") +
                                " + " + gb(q.reserve_bytes) + " reserved of " + gb(f.budget_bytes))
                  << (ok ? ": fits" : ": does not fit") << "\n";
      if (ok) f.need_bytes = need;
      return ok;
    };
  } else {
    f.how = "estimated (" + device.str() + ")";
    fits = [&f, &model, parameters](std::int64_t b) {
      const double need = cpu_step_bytes_estimate(model.config(), parameters, b);
      const bool ok = need <= f.budget_bytes;
      if (ok) f.need_bytes = need;
      return ok;
    };
  }
  if (q.keep > 0 && q.sequences % q.keep == 0) {  // a resumed run splits as before when it still can
    ++f.probes;
    if (fits(q.keep)) {
      f.batch = q.keep;
      f.accum = q.sequences / q.keep;
      f.how += ", kept from the checkpoint";
      return f;
    }
    f.how += ", the checkpoint's " + std::to_string(q.keep) + " no longer fits";
  }
  // The answer is the last size that fitted when asked, so need_bytes is its own.
  int probes = 0;
  f.batch = largest_fitting(divisors(q.sequences), fits, &probes);
  f.probes += probes;
  f.accum = f.batch > 0 ? q.sequences / f.batch : 0;
  return f;
}

std::string fit_refusal(const MicroBatchFit& f, std::int64_t block_size, double memory_fraction, c10::Device device) {
  char frac[32];
  std::snprintf(frac, sizeof frac, "%g", memory_fraction);
  return "--fit-micro-batch: not even one sequence of " + std::to_string(block_size) + " tokens fits in --fit-memory " +
         frac + " x " + gb(f.device_bytes) + " = " + gb(f.budget_bytes) + " on " + device.str() + " (" + f.how +
         "): shorten --block-size or raise --fit-memory";
}

// A one-line refusal, before anything is allocated, of a micro-batch whose activations cannot fit in this
// machine's memory (CPU only: there the kernel's OOM killer ends the process with SIGKILL instead of an
// allocation failing; a CUDA allocation failure is an exception with a message of its own). The estimate is
// activation_bytes, the one --fit-micro-batch uses on the CPU.
void check_activation_memory(const ModelConfig& mc, std::int64_t batch_size, c10::Device device) {
  if (!device.is_cpu()) return;
  const double pages = static_cast<double>(sysconf(_SC_PHYS_PAGES)), page = static_cast<double>(sysconf(_SC_PAGESIZE));
  if (!(pages > 0 && page > 0)) return;
  const double memory = pages * page;
  const double all = activation_bytes(mc, batch_size);
  if (all <= memory) return;
  const double logits = logits_bytes(mc, batch_size);
  throw std::runtime_error("one micro-batch of --batch-size " + std::to_string(batch_size) + " x " +
                           std::to_string(mc.block_size) + " tokens needs about " + gb(all) +
                           " of activations (the logits alone " + gb(logits) + "); this machine has " + gb(memory) +
                           ": lower --batch-size (and raise --grad-accum to keep the batch), or --fit-micro-batch on");
}

std::runtime_error out_of_memory_error(const std::string& what, std::int64_t batch_size, std::int64_t tokens,
                                       std::int64_t grad_accum, c10::Device device) {
  std::string first = what.substr(0, what.find('\n'));
  return std::runtime_error("out of memory on " + device.str() + " in a micro-batch of --batch-size " +
                            std::to_string(batch_size) + " x " + std::to_string(tokens) + " tokens (" + first +
                            "): lower --batch-size and raise --grad-accum (now " + std::to_string(grad_accum) +
                            ") to keep the batch, or shorten --block-size");
}

std::runtime_error fitted_out_of_memory_error(const std::string& what, std::int64_t micro_batch, std::int64_t tokens,
                                              double fit_memory, c10::Device device) {
  return std::runtime_error("out of memory on " + device.str() + " in a fitted micro-batch of " +
                            std::to_string(micro_batch) + " x " + std::to_string(tokens) + " tokens (" +
                            what.substr(0, what.find('\n')) + "): lower --fit-memory (now " + std::to_string(fit_memory) +
                            ")");
}

}  // namespace gaugelab::gpt2
