// --fit-micro-batch on: the largest micro-batch that fits the device, chosen by the run, not by hand.
//
// A step's batch is fixed by the options (--batch-size × --grad-accum, or --batch-tokens): S sequences per
// rank. Fitting re-splits those S sequences into S / B micro-batches of B, B the largest divisor of S that
// fits. The data loader numbers a step's samples ((step·A + micro)·W + rank)·B + row (data_loader.cpp), so on one
// rank the step reads the same sequences in the same order whatever the split, and on W ranks the same union of
// sequences, S on each rank: the same mean loss (dropout 0: dropout's masks follow the split) with the gradient
// summed in another order. What sees one micro-batch keeps the unfitted split's: the step hooks (QK-Clip's logits)
// get the last --batch-size sequences the unfitted run would have given them, and validation keeps --batch-size's
// batches (evaluated in pieces of B when B is smaller). Only when --batch-size itself does not fit do the hooks and
// the sampled observables see its first B sequences instead.
//
// What "fits" means, per device:
//   - CUDA: a probe. Forward and backward of B sequences of token 0 on the run's model, in its precision, with a
//     loss workspace of its own; twice when the step has several micro-batches (the second pass with the first's
//     gradients resident, as every later micro-step), in training mode. The caching allocator's peak of reserved
//     bytes (fragmentation included; it holds the parameters, the AdamW moments TrainOptimizer made on construction
//     and a fresh data-parallel run's buckets) plus `reserve_bytes` (what the step holds that a probe does not: a
//     resumed run's NCCL buckets, a CUDA graph's static gradients and workspace) must
//     stay within --fit-memory × the card's memory; an out-of-memory is "no". With a CUDA graph (graph_pool), one
//     more activation peak: the graph's private pool keeps the captured micro-step's activations and gradients for
//     the whole run, beside the blocks eager work (evaluation, an eager micro-step, the next capture's warm-ups)
//     takes from the allocator's other pools; the probe's peak above its baseline measures it.
//   - CPU: the estimate that already refuses a micro-batch too large for the machine (activation_bytes), plus
//     parameters, gradients and two moments in float32, within --fit-memory × the memory this process may use
//     (the smaller of the physical memory and the cgroup's limit, shared by the local ranks). A probe cannot say
//     no there: the kernel's OOM killer answers instead.
// Fits is taken as monotone in B (more sequences never need less memory): a binary search over the divisors asks
// ~log2 of their count (S = 480: 24 divisors, 5 tries).
//
// Without --fit-micro-batch the same estimate refuses, on the CPU, a --batch-size too large for the machine before
// anything is allocated (check_activation_memory), and a step that runs out of device memory ends with one line
// naming the flags to lower (out_of_memory_error).
//
// The peak of device memory a run reports (cuda_peak_memory_gb) is read here too, beside the probes that reset
// that peak: every read of the CUDA allocator's counters is in micro_batch.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <c10/core/Device.h>

#include "gpt2/model/config.hpp"
#include "gpt2/model/runtime.hpp"

namespace gaugelab::gpt2 {

class GPT;

/// The divisors of `s` (s ≥ 1), ascending.
std::vector<std::int64_t> divisors(std::int64_t s);

/// The largest of `ascending` for which `fits` holds, by binary search (fits monotone: true up to some size);
/// 0 when none does. `probes` (optional) counts the calls of `fits`.
std::int64_t largest_fitting(const std::vector<std::int64_t>& ascending, const std::function<bool(std::int64_t)>& fits,
                             int* probes = nullptr);

/// Float32 activations a micro-batch of `batch` sequences keeps for the backward, by estimate: per token the logits
/// three times (logits, their softmax, its gradient) and per layer ~20 d-vectors plus three attention rows of T
/// scores per head.
double activation_bytes(const ModelConfig& mc, std::int64_t batch);

/// Bytes a CPU micro-batch of `batch` sequences needs by the estimate: activation_bytes and, per parameter, the
/// parameter, its gradient and AdamW's two moments in float32.
double cpu_step_bytes_estimate(const ModelConfig& mc, std::int64_t parameters, std::int64_t batch);

/// The memory a fit measures against: a CUDA card's total (or its free memory plus what the allocator holds, when
/// less: the CUDA context, NCCL and other processes take the rest), or on the CPU the smaller of the physical memory and the
/// cgroup's limit, divided among `local_ranks`.
double fit_device_bytes(c10::Device device, int local_ranks);

/// What the fit is asked.
struct FitRequest {
  std::int64_t sequences = 0;   // S: sequences per rank per step
  double memory_fraction = 0.9; // --fit-memory
  double reserve_bytes = 0;     // CUDA: held by the step beyond what a probe allocates (module comment)
  bool graph_pool = false;      // CUDA: --cuda-graph on: the graph's pool holds one more activation peak
  std::int64_t keep = 0;        // a resumed run's micro-batch: kept when it divides S and still fits (0: none)
  int local_ranks = 1;          // CPU: ranks sharing this machine's memory
  bool verbose = false;         // one stderr line per CUDA probe (rank 0)
};

struct MicroBatchFit {
  std::int64_t batch = 0;        // sequences per micro-batch; 0: not even one fits (refusal() says so)
  std::int64_t accum = 0;        // micro-batches per step on this rank: S / batch
  int probes = 0;                // forward/backward probes (CUDA) or estimates (CPU) made
  double need_bytes = 0;         // what the chosen size needs (NaN when another rank's smaller choice was taken)
  double budget_bytes = 0;       // --fit-memory × the device's memory
  double device_bytes = 0;       // the device's memory (CPU: this process's share)
  std::string how;               // "probed on cuda:0", "estimated (cpu)", with ", kept from the checkpoint" etc.
};

/// What a CUDA probe measured: the allocator's peak of reserved bytes during the passes and its reserved bytes
/// before them (the parameters, the optimizer's state, what the run already holds).
struct ProbePeak {
  double peak = 0;
  double base = 0;
};

/// Bytes a micro-batch needs by its probe: the probe's peak, one more activation peak (peak − base) when the
/// step is a CUDA graph's replay (request.graph_pool), and request.reserve_bytes.
double probe_need_bytes(const ProbePeak& probe, const FitRequest& request);

/// Chooses the micro-batch (module comment). Never throws for want of memory: batch 0 says none fits, so that data-
/// parallel ranks can agree (the smallest choice) before any of them refuses.
MicroBatchFit fit_micro_batch(GPT& model, const FitRequest& request, c10::Device device, Precision precision);

/// The most memory PyTorch's CUDA caching allocator has held allocated on device `index` since the process began
/// or since a fit's last probe (each probe resets the peak after itself, so that the run's peak is its own), in GB
/// (1e9 bytes; torch.cuda.max_memory_allocated's quantity); NaN without CUDA.
double cuda_peak_memory_gb(int index);

/// The one-line refusal of a fit where not even one sequence fits.
std::string fit_refusal(const MicroBatchFit& f, std::int64_t block_size, double memory_fraction, c10::Device device);

/// --fit-micro-batch off: a one-line refusal, before anything is allocated, of a micro-batch of `batch_size`
/// sequences whose activations (activation_bytes) cannot fit in this machine's memory (CPU only).
void check_activation_memory(const ModelConfig& mc, std::int64_t batch_size, c10::Device device);
/// A device allocation that failed inside a step (c10::OutOfMemoryError: CUDA's caching allocator) as one line
/// naming the micro-batch and the flags to lower; `what` is LibTorch's message, its first line kept.
std::runtime_error out_of_memory_error(const std::string& what, std::int64_t batch_size, std::int64_t tokens,
                                       std::int64_t grad_accum, c10::Device device);
/// The same for a micro-batch that --fit-micro-batch chose: the flag to lower is --fit-memory (`fit_memory`).
std::runtime_error fitted_out_of_memory_error(const std::string& what, std::int64_t micro_batch, std::int64_t tokens,
                                              double fit_memory, c10::Device device);

}  // namespace gaugelab::gpt2
