// Data parallelism on torch distributed (c10d): which rank this process is (torchrun, Slurm or a
// single process), and the three collectives a data-parallel trainer needs — parameters broadcast
// from rank 0, gradients averaged over ranks in flat buckets, scalars averaged.
// Gloo on CPU, NCCL on CUDA devices. The c10d headers stay inside data_parallel*.cpp: this header
// needs only ATen's Tensor and c10's Device. gpt2/README.md ("Data parallelism") says how the
// Gloo headers are found and why.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "gpt2/dist/dist_backend.hpp"

namespace gaugelab::gpt2 {

/// Where this process sits in the job, as the launcher told it.
struct DistEnv {
  int rank = 0;             // global rank, 0 <= rank < world
  int world = 1;            // number of processes
  int local_rank = 0;       // rank on this node (picks the GPU: cuda:local_rank)
  std::string master_addr;  // rank 0's host (empty for "single")
  int master_port = 0;      // rank 0's rendezvous port (0 for "single")
  std::string source;       // "single", "torchrun", "slurm"
};

/// Default rendezvous port under Slurm when MASTER_PORT is unset: kSlurmPortBase + (SLURM_JOB_ID mod
/// kSlurmPortSpan), so two jobs sharing a node rarely pick the same port (29500 is torchrun's default).
inline constexpr int kSlurmPortBase = 29500;
inline constexpr int kSlurmPortSpan = 4096;

/// Reads the launcher's variables from the process environment:
///   torchrun (RANK or WORLD_SIZE set): RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT, all required;
///   Slurm (SLURM_PROCID set, no RANK/WORLD_SIZE): SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID; master =
///     MASTER_ADDR, else the first host of SLURM_STEP_NODELIST, SLURM_JOB_NODELIST or SLURM_NODELIST
///     (rank 0 runs on a step's first node), else SLURM_LAUNCH_NODE_IPADDR; port = MASTER_PORT, else
///     the default above;
///   otherwise "single" (rank 0 of 1).
/// torchrun wins over Slurm (torchrun inside an srun step sets both; its RANK is the one that counts).
/// An inconsistent environment (a missing or non-integer variable, rank outside [0, world), a bad
/// port) throws std::runtime_error with one line naming the variable.
DistEnv detect_dist_env();
/// The same rules over any variable lookup (tests): `lookup(name)` is the value or nullopt.
DistEnv detect_dist_env(const std::function<std::optional<std::string>(const std::string&)>& lookup);

/// First host name of a Slurm hostlist: "node[07-09,12],gpu3" -> "node07", "a[1-2]-b[3-4]" -> "a1-b3".
/// Throws std::runtime_error on unbalanced brackets or an empty list.
std::string slurm_first_host(const std::string& nodelist);

/// nccl for CUDA devices, gloo otherwise (for backend auto); gloo and nccl pass through. NCCL on a
/// non-CUDA device throws std::runtime_error.
DistBackend resolve_backend(DistBackend backend, c10::Device device);

/// Default gradient bucket: 25 MiB, torch DDP's bucket_cap_mb. Large enough that a bucket's
/// all-reduce is bandwidth- rather than latency-bound, small enough that the flat copy stays in cache
/// tiers and GPT-2 124M (~500 MB of fp32 gradients) splits into ~20 buckets.
inline constexpr std::int64_t kDefaultBucketBytes = std::int64_t{25} << 20;

/// One process's membership in a data-parallel group. Every rank must call the same methods with
/// the same parameter lists (same order, shapes, dtypes) in the same order: collectives are matched
/// by position. A rank that is missing, dead, or stuck makes the others throw instead of hanging: a
/// collective throws DistFailure (dist_failure.hpp: one line naming backend, this rank, the operation and
/// the rank that failed it) at once when the peer's connection closed, else after `timeout_s`; with more
/// than 2 Gloo ranks the rank is learnt at a roll call over the rendezvous store first (roll_call.hpp: at
/// most min(timeout_s / 2, 3 s) more). A failed rendezvous throws std::runtime_error after `timeout_s`.
class DataParallel {
 public:
  /// Joins the group described by `env`. backend: auto (nccl on CUDA devices, gloo on CPU),
  /// gloo or nccl. `device` is where the parameters live (cuda:local_rank under NCCL).
  /// Rendezvous over a c10d::TCPStore served by rank 0 at master_addr:master_port.
  /// env.source == "single" gives a group of one with no communication at all (every method is the
  /// identity); a launcher's world of 1 still builds a real one-rank c10d group.
  /// bucket_bytes: gradient bucket capacity (> 0; a larger tensor gets a bucket of its own).
  /// A launcher's group (any world) sets SIGPIPE to ignored for the rest of the process where it was the default
  /// (Gloo's writes to a dead peer would end this rank before its one line; gpt2/README.md, Timeouts).
  static std::unique_ptr<DataParallel> create(const DistEnv& env, DistBackend backend,
                                              c10::Device device, double timeout_s,
                                              std::int64_t bucket_bytes = kDefaultBucketBytes);
  ~DataParallel();
  DataParallel(const DataParallel&) = delete;
  DataParallel& operator=(const DataParallel&) = delete;

  int rank() const;
  int world() const;
  std::optional<DistBackend> backend() const;  // gloo or nccl; none for a single process

  /// Overwrites every tensor (in place, under no_grad) with rank 0's values. Tensors are broadcast
  /// in buckets like the gradients.
  void broadcast_parameters(const std::vector<at::Tensor>& params);
  /// Replaces each param's .grad() by the mean over ranks: grads are copied into flat buckets of at
  /// most bucket_bytes (grouped by dtype, in list order), each bucket all-reduced (sum) and divided
  /// by world, then copied back. A parameter whose .grad() is undefined on a rank counts as a zero
  /// gradient there; it gets a gradient if any rank had one and stays undefined if none had.
  void average_gradients(const std::vector<at::Tensor>& params);
  /// Mean over ranks of one double (computed in float64).
  double all_reduce_mean(double value);
  /// Every rank's `t` replaced (in place) by the elementwise maximum over the ranks (t on any device).
  void all_reduce_max(at::Tensor& t);
  void barrier();

  /// Number of buckets the last average_gradients / broadcast_parameters used (for logs and tests).
  int last_bucket_count() const;

  struct Impl;

 private:
  explicit DataParallel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gaugelab::gpt2
