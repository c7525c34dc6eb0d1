// AdamW over the model's parameter groups (gpt2/model/lrm.hpp ParamRole), each with its own weight decay,
// through LibTorch's fused AdamW kernel (CPU and CUDA); gradient-norm clipping over a chosen subset.
// The state (m, v, step counts) is plain tensors the trainer checkpoints and GaugeFix may transport.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "core/update_rule_table.hpp"
#include "gpt2/train/gaugefix.hpp"
#include "gpt2/train/muon.hpp"
#include "gpt2/model/model.hpp"
#include "gpt2/model/safetensors.hpp"

namespace gaugelab::gpt2 {

struct OptimizerSettings {
  double beta1 = 0.9, beta2 = 0.95, eps = 1e-8;
  double wd_matrices = 0.1;        // W̄
  double wd_multipliers_qk = 2e-3; // condition A: λ_lrm; B and C: 0
  double wd_multipliers_other = 2e-3;
  double wd_biases_norms = 0.0;
  double wd_embeddings = 0.1;
  double multiplier_lr_scale = 1;  // both multiplier groups step at this × lr (0: frozen)
  bool clip_multipliers = false;   // multiplier gradients count in (and are scaled by) the clipped norm
  core::RuleKind hidden_matrices = core::RuleKind::adamw;  // the hidden matrices' rule: adamw or muon (muon.hpp)
  MuonSettings muon_settings;
};

/// The step's gradient norms, all before clipping (L2 over every element of the set).
struct GradNorms {
  double total = 0;        // every parameter (the paper's "gradient norm")
  double clipped = 0;      // the clipped set: every group with clipped = true
  double multipliers = 0;  // the two multiplier groups
};

class TrainOptimizer {
 public:
  struct Group {
    std::string name;                // ParamGroup name: matrices, multipliers_qk, ...
    double weight_decay = 0;
    double lr_scale = 1;             // the group steps at lr_scale × the scheduled lr
    bool multiplier = false;         // multipliers_qk or multipliers_other
    core::RuleKind rule = core::RuleKind::adamw;  // how the group steps (core/update_rule_table.hpp): adamw,
                                                  // or muon for the hidden matrices under --optimizer muon
    bool clipped = true;             // part of the clipped gradient norm
    std::vector<std::string> names;  // [n]
    std::vector<at::Tensor> params, m, v, steps;  // [n] each; steps are float32 scalars (the fused kernel's)
  };

  TrainOptimizer(GPT& model, const OptimizerSettings& s);

  void zero_grad();  // set_to_none: backward allocates fresh gradients
  /// The total, clipped-set and multiplier gradient norms before clipping (one host sync); then, if
  /// max_norm > 0, the clipped set's gradients are scaled by coef = max_norm/(clipped + 1e-6) when
  /// coef < 1 (torch.nn.utils.clip_grad_norm_'s rule, which nanoGPT calls).
  GradNorms clip_grad_norm(double max_norm);
  /// One step: AdamW at learning rate lr × each group's lr_scale (decoupled weight decay p ← p·(1 − lr·wd)
  /// per group); a Muon group at its own η = muon_lr_factor × MuonSettings::lr (the schedule's factor).
  void step(double lr, double muon_lr_factor = 1.0);

  /// Copies of every parameter in group order (what update_ratios compares against).
  std::vector<at::Tensor> snapshot() const;
  /// Per group, ‖p − p_before‖ / ‖p‖ over the group's tensors (the update-to-weight ratio), for the
  /// snapshot taken before a step; keyed by group name.
  std::map<std::string, double> update_ratios(const std::vector<at::Tensor>& before) const;

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
  MuonSettings muon_;
};

}  // namespace gaugelab::gpt2
