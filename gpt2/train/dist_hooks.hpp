// The trainer's view of data parallelism: who this process is and the five collectives it needs.
// World 1 (a plain run) forms no group and calls nothing (`active()` is false); with world > 1 the
// hooks are bound to gpt2/dist/data_parallel.hpp (torch distributed c10d: Gloo on CPUs, NCCL on GPUs) and
// rank/world come from torchrun or Slurm environment variables (detect_dist_env).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include "gpt2/dist/dist_backend.hpp"

namespace gaugelab::gpt2 {

struct TrainDist {
  int rank = 0, world = 1, local_rank = 0;
  std::string source = "single";  // single, torchrun, slurm
  std::function<void(const std::vector<at::Tensor>&)> broadcast_parameters;  // from rank 0
  std::function<void(const std::vector<at::Tensor>&)> average_gradients;     // all-reduce .grad() / world
  std::function<double(double)> all_reduce_mean;
  std::function<void(at::Tensor&)> all_reduce_max;  // elementwise maximum over ranks, in place
  std::function<void()> barrier;
  std::shared_ptr<void> engine;  // keeps the process group alive

  bool active() const { return world > 1; }
};

/// Reads the launcher's environment; for world > 1 forms the process group on `device`
/// (backend auto|gloo|nccl, collectives time out after timeout_s). Throws std::runtime_error with one
/// line when the group cannot be formed.
TrainDist connect_train_dist(DistBackend backend, c10::Device device, double timeout_s);

/// Rank, world and local rank from the environment alone (detect_dist_env: torchrun's RANK,
/// WORLD_SIZE, LOCAL_RANK; Slurm's SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID), without forming a group:
/// the trainer needs the local rank to pick its GPU before connecting.
TrainDist read_dist_env();

}  // namespace gaugelab::gpt2
