// AdamW over the model's parameter groups (gpt2/model/lrm.hpp ParamRole), each with its own weight decay,
// through LibTorch's fused AdamW kernel (CPU and CUDA); gradient-norm clipping over a chosen subset.
// The state (m, v, step counts) is plain tensors the trainer checkpoints and GaugeFix may transport.
#pragma once

#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "gpt2/train/gaugefix.hpp"
#include "gpt2/model/model.hpp"
#include "gpt2/model/safetensors.hpp"

namespace gaugelab::gpt2 {

struct OptimizerSettings {
  double beta1 = 0.9, beta2 = 0.95, eps = 1e-8;
  double wd_matrices = 0.1;        // W̄
  double wd_multipliers_qk = 2e-3; // condition A: λ_lrm; B and C: 0
  double wd_multipliers_other = 2e-3;
  double wd_biases_norms = 0.0;
  double wd_embeddings = 0.0;
  bool clip_multipliers = false;   // multiplier gradients count in (and are scaled by) the clipped norm
};

class TrainOptimizer {
 public:
  struct Group {
    std::string name;                // ParamGroup name: matrices, multipliers_qk, ...
    double weight_decay = 0;
    bool clipped = true;             // part of the clipped gradient norm
    std::vector<std::string> names;  // [n]
    std::vector<at::Tensor> params, m, v, steps;  // [n] each; steps are float32 scalars (the fused kernel's)
  };

  TrainOptimizer(GPT& model, const OptimizerSettings& s);

  void zero_grad();  // set_to_none: backward allocates fresh gradients
  /// Global L2 norm of the clipped groups' gradients before clipping (one host sync); if max_norm > 0
  /// and the norm exceeds it, those gradients are scaled by max_norm/(norm + 1e-6) (torch's rule).
  double clip_grad_norm(double max_norm);
  /// One AdamW step at learning rate lr (decoupled weight decay p ← p·(1 − lr·wd) per group).
  void step(double lr);

  /// The moments of `param` (by identity), for GaugeFix's state transport.
  AdamMoments moments(const at::Tensor& param) const;
  const std::vector<Group>& groups() const { return groups_; }
  /// Every parameter in group order (the data-parallel broadcast and gradient average use this).
  std::vector<at::Tensor> parameters() const;

  /// State as safetensors entries "m/<name>", "v/<name>", "step/<group>" (float32, exact).
  std::vector<safetensors::TensorData> state_tensors() const;
  /// Restores what state_tensors() wrote; a missing or misshapen entry is an error naming it.
  void load_state(const safetensors::File& f);

 private:
  std::vector<Group> groups_;
  double beta1_ = 0.9, beta2_ = 0.95, eps_ = 1e-8;
};

}  // namespace gaugelab::gpt2
