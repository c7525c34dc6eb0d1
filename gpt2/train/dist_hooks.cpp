#include "gpt2/train/dist_hooks.hpp"

#include "gpt2/dist/data_parallel.hpp"

namespace gaugelab::gpt2 {

TrainDist read_dist_env() {
  const DistEnv env = detect_dist_env();
  TrainDist d;
  d.rank = env.rank, d.world = env.world, d.local_rank = env.local_rank;
  d.source = env.source.empty() ? "single" : env.source;
  return d;
}

TrainDist connect_train_dist(DistBackend backend, c10::Device device, double timeout_s) {
  const DistEnv env = detect_dist_env();
  TrainDist d;
  d.rank = env.rank, d.world = env.world, d.local_rank = env.local_rank;
  d.source = env.source.empty() ? "single" : env.source;
  if (!d.active()) return d;  // one process: no group, no collectives
  std::shared_ptr<DataParallel> dp = DataParallel::create(env, backend, device, timeout_s);
  d.broadcast_parameters = [dp](const std::vector<at::Tensor>& p) { dp->broadcast_parameters(p); };
  d.average_gradients = [dp](const std::vector<at::Tensor>& p) { dp->average_gradients(p); };
  d.all_reduce_mean = [dp](double v) { return dp->all_reduce_mean(v); };
  d.all_reduce_max = [dp](at::Tensor& t) { dp->all_reduce_max(t); };
  d.barrier = [dp] { dp->barrier(); };
  d.engine = dp;
  return d;
}

}  // namespace gaugelab::gpt2
