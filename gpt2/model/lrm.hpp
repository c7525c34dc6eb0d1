// A linear map with learnable multipliers (LRM; seed 002, seed 000 eq. 1):
//   y = x·W_effᵀ + b,   W_eff = diag(r)·W̄·diag(c)   (W̄ [out, in], r [out], c [in], layout as torch Linear)
// The effective matrix is formed on every forward and autograd carries the gradients to W̄, r and c.
// The output rows may be split into equal groups with separate multipliers: GPT-2's c_attn holds
// W_Q, W_K, W_V packed as [3d, d] (one matmul) while each of Q, K and V has its own r, c (or s).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

#include "gpt2/model/config.hpp"
#include "gpt2/model/kernel_path.hpp"

namespace gaugelab::gpt2 {

/// What a parameter is, for the trainer's groups (weight decay, clipping) and the gauge code.
enum class ParamRole {
  matrix,            // W̄ of a linear map (and an untied LM head)
  multiplier_qk,     // row or scalar multipliers of Q and K: the ones carrying the Q/K gauge (seed 000)
  multiplier_other,  // every other multiplier
  bias_norm,         // linear biases, LayerNorm gains and biases
  embedding,         // token and position embeddings
};
const char* param_role_name(ParamRole r);  // "matrices", "multipliers_qk", "multipliers_other", ...

/// Called once per parameter with its dotted name (e.g. "h.0.attn.c_attn.r_q"); may replace the tensor.
using ParamVisitor = std::function<void(const std::string& name, at::Tensor& t, ParamRole role)>;

class LrmLinear {
 public:
  /// Multipliers of one block of output rows. Exactly the tensors its mode needs are defined.
  struct Group {
    std::string tag;  // "" for a single group, else "q", "k", "v": names r_q, c_q, s_q
    LrmMode mode = LrmMode::none;
    bool qk = false;  // its row/scalar multipliers carry the Q/K gauge (ParamRole::multiplier_qk)
    at::Tensor s;     // [1]     scalar mode
    at::Tensor r;     // [rows]  row and row+column modes
    at::Tensor c;     // [in]    column and row+column modes

    /// The per-row scale this group applies: r, s expanded to [rows], or undefined if neither.
    at::Tensor row_scale(std::int64_t rows) const;
  };
  struct GroupSpec {
    std::string tag;
    LrmMode mode;
    bool qk = false;
  };

  LrmLinear() = default;
  /// W̄ [groups·rows_per_group, in] zero-initialised (the model initialises it), bias zero if `bias`,
  /// multipliers at 1. All float32 on the CPU.
  LrmLinear(std::int64_t in, std::int64_t rows_per_group, const std::vector<GroupSpec>& groups, bool bias);

  at::Tensor weight;  // W̄ [out, in]
  at::Tensor bias;    // [out], undefined when the map has none
  std::vector<Group> groups;
  bool owns_weight = true;  // false: `weight` is another parameter (the tied LM head), not visited here

  std::int64_t in_features() const { return weight.size(1); }
  std::int64_t out_features() const { return weight.size(0); }
  std::int64_t rows_per_group() const { return out_features() / static_cast<std::int64_t>(groups.size()); }
  bool has_multipliers() const;

  /// W_eff = diag(r)·W̄·diag(c) per group [out, in]; W̄ itself when there are no multipliers.
  at::Tensor effective_weight() const;
  /// The weight the forward's matmul uses: W_eff, in bf16 straight from one kernel where lrm_weight_fused
  /// (model/lrm_weight_bf16.hpp) says so for `path` (CUDA, bf16 autocast), else effective_weight().
  at::Tensor matmul_weight(KernelPath path) const;
  /// x [..., in] -> [..., out] (with matmul_weight(path); ATen's ops without a path).
  at::Tensor forward(const at::Tensor& x, KernelPath path = KernelPath::aten) const;
  /// W̄ ← W_eff and every multiplier ← 1, in place and without autograd: the function is unchanged.
  void merge_multipliers();
  /// Visits weight (if owned), bias, then each group's s, r, c as "<prefix>weight", "<prefix>r_q", ...
  void visit(const std::string& prefix, const ParamVisitor& f);
 private:
  /// The row scale [out] and column scale ([in], or [G, in] with several groups) W_eff applies; undefined where none.
  std::pair<at::Tensor, at::Tensor> scales() const;
};

}  // namespace gaugelab::gpt2
