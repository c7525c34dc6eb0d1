#include "gpt2/train_dist.hpp"

#include <cstdlib>
#include <stdexcept>

namespace gaugelab::gpt2 {

namespace {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (end == v || *end != '\0' || x < 0) throw std::runtime_error(std::string("environment ") + name + "='" + v + "' is not a count");
  return static_cast<int>(x);
}

}  // namespace

TrainDist read_dist_env() {
  TrainDist d;
  if (std::getenv("WORLD_SIZE") != nullptr) {
    d.world = env_int("WORLD_SIZE", 1), d.rank = env_int("RANK", 0), d.local_rank = env_int("LOCAL_RANK", 0);
    d.source = "torchrun";
  } else if (std::getenv("SLURM_NTASKS") != nullptr && std::getenv("SLURM_PROCID") != nullptr) {
    d.world = env_int("SLURM_NTASKS", 1), d.rank = env_int("SLURM_PROCID", 0), d.local_rank = env_int("SLURM_LOCALID", 0);
    d.source = "slurm";
  }
  if (d.world < 1 || d.rank >= d.world)
    throw std::runtime_error("launcher environment gives rank " + std::to_string(d.rank) + " of world " +
                             std::to_string(d.world));
  if (d.world == 1) d.source = "single";
  return d;
}

TrainDist connect_train_dist(const std::string& backend, c10::Device device, double timeout_s) {
  TrainDist d = read_dist_env();
  if (!d.active()) return d;
  (void)backend, (void)device, (void)timeout_s;
  throw std::runtime_error("world size " + std::to_string(d.world) + " (from " + d.source +
                           "): this build's trainer runs one process only; data parallelism needs gpt2/data_parallel");
}

}  // namespace gaugelab::gpt2
