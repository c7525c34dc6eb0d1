// GPT-2 exactly as Hugging Face's GPT2LMHeadModel computes it, with learnable multipliers (LRM):
//   x = wte[idx] + wpe[0..T)                                    (learned positions)
//   per block:  x += c_proj(attn(c_attn(ln_1(x))))               (pre-LayerNorm, causal, scale 1/√d_h)
//               x += mlp_proj(gelu(c_fc(ln_2(x))))          (GELU tanh as GPT-2, or erf: config.gelu)
//   logits = ln_f(x)·W_headᵀ, W_head = wte (tied) — sliced back from the padded vocabulary
// Every linear map is an LrmLinear: W_eff = diag(r)·W̄·diag(c) formed each step (lrm.hpp).
// Weights use the torch Linear layout W [out, in]; Hugging Face's Conv1D stores Wᵀ (interchange.hpp).
// Plain ATen tensors, not torch::nn modules: a parameter is a named tensor reached by visit().
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>

#include "gpt2/model/config.hpp"
#include "gpt2/model/lm_head_loss.hpp"
#include "gpt2/model/lrm.hpp"

namespace gaugelab::gpt2 {

/// Coordinates [begin, begin + size) of head h in r_Q, r_K, r_V, b_Q, b_K, b_V, the rows of W_Q, W_K,
/// W_V (each [d, d] inside c_attn) and the columns of W_O and c_O.
struct HeadSlice {
  std::int64_t begin = 0;
  std::int64_t size = 0;
};

struct Block {
  at::Tensor ln_1_weight, ln_1_bias;  // [d]; every bias here is undefined when !config.bias
  LrmLinear c_attn;                   // W̄ [3d, d]: rows [0,d) Q, [d,2d) K, [2d,3d) V; groups q, k, v
  LrmLinear attn_proj;                // W̄ [d, d] (HF attn.c_proj): input columns are the heads' values
  at::Tensor ln_2_weight, ln_2_bias;  // [d]
  LrmLinear c_fc;                     // W̄ [4d, d]
  LrmLinear mlp_proj;                 // W̄ [d, 4d] (HF mlp.c_proj)

  // The Q, K, V multiplier groups and views of their packed weights and biases (writes go through).
  LrmLinear::Group& q() { return c_attn.groups[0]; }
  LrmLinear::Group& k() { return c_attn.groups[1]; }
  LrmLinear::Group& v() { return c_attn.groups[2]; }
  at::Tensor w_q() const;  // [d, d] view of c_attn.weight rows [0, d)
  at::Tensor w_k() const;  // [d, d] rows [d, 2d)
  at::Tensor w_v() const;  // [d, d] rows [2d, 3d)
  at::Tensor b_q() const;  // [d], undefined without biases
  at::Tensor b_k() const;  // [d]
  at::Tensor b_v() const;  // [d]
};

/// One trainer parameter group (names and tensors in visit order).
struct ParamGroup {
  std::string name;  // param_role_name(role)
  ParamRole role;
  std::vector<std::string> names;
  std::vector<at::Tensor> params;
};

class GPT {
 public:
  /// Allocates every parameter on the CPU (float32) and initialises it with init(seed); with
  /// initialise false, weights stay 0 (LayerNorm gains and multipliers 1) for a loader to fill.
  explicit GPT(const ModelConfig& config, std::uint64_t seed = 0, bool initialise = true);
  GPT(const GPT&) = delete;
  GPT& operator=(const GPT&) = delete;

  /// GPT-2 / nanoGPT initialisation, deterministic in `seed` (drawn on the CPU, then copied to the
  /// model's device): weights and embeddings N(0, 0.02), the residual projections attn_proj and
  /// mlp_proj N(0, 0.02/√(2·n_layer)), biases 0, LayerNorm (1, 0), multipliers 1, padded vocab rows 0.
  void init(std::uint64_t seed);

  const ModelConfig& config() const { return cfg_; }
  /// Dropout while training (config().dropout): a setting of the run, not of the weights.
  void set_dropout(double p);
  c10::Device device() const { return wte.device(); }
  /// Moves every parameter (as a fresh leaf that requires grad) to `device`.
  void to(c10::Device device);
  void train(bool on) { training_ = on; }
  /// Attention through plain ops (causal_attention_math) instead of the fused kernel, whose backward has no
  /// derivative: the same function to rounding, slower, differentiable twice (Hessian-vector products).
  void set_twice_differentiable(bool on) { twice_differentiable_ = on; }  // dropout (if config().dropout > 0) only while training
  /// The loss's softmax/gradient on CUDA in bf16: the fused kernel (default, where built) or ATen's passes.
  void set_lm_head_kernel(KernelPath k) { ce_ws_.kernel = k; }
  KernelPath lm_head_kernel() const { return ce_ws_.kernel; }
  /// Residual add + LayerNorm on CUDA in bf16: one fused kernel each way (where built) or ATen's ops (the default)
  /// (model/residual_layer_norm.hpp). Twice-differentiable models always take ATen's.
  void set_ln_kernel(KernelPath k) { ln_kernel_ = k; }
  KernelPath ln_kernel() const { return ln_kernel_; }
  /// The multipliers' W_eff on CUDA in bf16: one kernel each way (where built) or ATen's products (the default)
  /// (model/lrm_weight_bf16.hpp). Twice-differentiable models always take ATen's.
  void set_lrm_kernel(KernelPath k) { lrm_kernel_ = k; }
  KernelPath lrm_kernel() const { return lrm_kernel_; }
  bool training() const { return training_; }

  /// Final hidden states ln_f(x) [B, T, d] for token ids idx [B, T] (int64, T <= block_size): float32, or
  /// bf16 where the fused LayerNorm runs (CUDA, bf16 autocast).
  at::Tensor hidden(const at::Tensor& idx) const;
  /// Logits [B, T, vocab_size] in float32 (also under autocast).
  at::Tensor logits(const at::Tensor& idx) const;
  /// Mean next-token cross-entropy (float32 scalar) of idx [B, T] against targets [B, T];
  /// targets equal to -1 are ignored. Reuses a workspace held by the model (lm_head_loss.hpp), or `ws` when
  /// given (a CUDA graph keeps its own, whose buffers must not move): concurrent loss() calls on one model from
  /// several threads are not supported.
  at::Tensor loss(const at::Tensor& idx, const at::Tensor& targets, LmHeadWorkspace* ws = nullptr) const;

  /// Per layer and head, the largest attention score max |q_i·k_j|/√d_h over the batch and the causal
  /// positions j <= i (Wortsman et al.'s attention-logit growth quantity): [n_layer, n_head] float32 on
  /// the CPU, for idx [B, T]. With absolute false, the largest signed score max q_i·k_j/√d_h (Kimi K2's
  /// S_max, what QK-Clip bounds). No gradients.
  at::Tensor attention_logit_max(const at::Tensor& idx, bool absolute = true) const;
  /// Both from one pass over idx [B, T]: {max |q_i·k_j|/√d_h, max q_i·k_j/√d_h}, each [n_layer, n_head] float32 on
  /// the CPU. No gradients.
  std::pair<at::Tensor, at::Tensor> attention_logit_maxima(const at::Tensor& idx) const;
  /// Mean over positions of the output log-partition log Σ_v exp(logit_v) (the z-loss quantity), idx [B, T].
  double log_partition_mean(const at::Tensor& idx) const;

  /// Every parameter, in a fixed order, with its dotted name and role.
  void visit(const ParamVisitor& f);
  std::vector<std::pair<std::string, at::Tensor>> named_parameters();
  /// The trainer's groups, in ParamRole order; groups with no tensor are left out.
  std::vector<ParamGroup> parameter_groups();
  std::int64_t num_parameters(bool with_multipliers = true);

  /// Folds every multiplier into its weight (W̄ ← diag(r)·W̄·diag(c), multipliers ← 1). For the tied
  /// LM head, scalar and column multipliers go into ln_f (they scale what it outputs); row
  /// multipliers there cannot be folded into a shared embedding (ModelConfig::validate forbids them).
  void merge_multipliers();

  HeadSlice head_slice(std::int64_t head) const { return {head * cfg_.head_dim(), cfg_.head_dim()}; }

  at::Tensor wte;                      // [padded_vocab, d] token embedding (rows >= vocab_size stay 0)
  at::Tensor wpe;                      // [block_size, d] position embedding
  std::vector<Block> h;                // n_layer blocks
  at::Tensor ln_f_weight, ln_f_bias;   // [d]
  LrmLinear lm_head;                   // weight is wte when tied_head, else its own [padded_vocab, d]

 private:
  /// The residual stream [B, T, d] float32 and the branch [B, T, d] the last block computed but has not yet added:
  /// the next LayerNorm adds it (one fused kernel with the norm on CUDA in bf16).
  struct Stream {
    at::Tensor x, pending;
  };
  /// Adds the pending branch to the stream and returns the LayerNorm (gain, bias) of the result.
  at::Tensor add_norm(Stream& s, const at::Tensor& gain, const at::Tensor& bias) const;
  /// The probe behind attention_logit_max and attention_logit_maxima: each layer's q, k [B, H, T, d_h] for idx
  /// [B, T], in layer order, handed to f. No gradients.
  void for_each_layer_qk(const at::Tensor& idx,
                         const std::function<void(const at::Tensor& q, const at::Tensor& k)>& f) const;
  /// One block: s.x gains the previous branch and this block's attention; s.pending becomes its MLP's output.
  void block_forward(const Block& b, Stream& s) const;
  /// q, k, v [B, H, T, d_h] of block b for its normalised input a = ln_1(x) [B, T, d] (QK-norm applied).
  std::tuple<at::Tensor, at::Tensor, at::Tensor> qkv_heads(const Block& b, const at::Tensor& a) const;
  ModelConfig cfg_;
  bool training_ = false;
  bool twice_differentiable_ = false;
  mutable LmHeadWorkspace ce_ws_;  // the loss's logits buffers, reused from step to step
  KernelPath ln_kernel_ = KernelPath::fused;  // as the trainer's defaults (train/api.hpp): parity passed on a card
  KernelPath lrm_kernel_ = KernelPath::fused;
  /// A chosen kernel path as it applies to this model: ATen's ops for a twice-differentiable one (no kernel of
  /// ours has a derivative of its backward).
  KernelPath path(KernelPath chosen) const { return twice_differentiable_ ? KernelPath::aten : chosen; }
};

/// The one place attention is computed: softmax(q·kᵀ/√d_h + causal mask)·v through LibTorch's fused
/// scaled_dot_product_attention (flash/memory-efficient kernels on CPU and GPU).
/// q, k, v [B, H, T, d_h] -> [B, H, T, d_h]; dropout_p applies to the attention weights.
at::Tensor causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, double dropout_p);
/// The same formula in plain ops (q·kᵀ/√d_h, −∞ above the diagonal, softmax, dropout, ·v): every op has a
/// derivative of its backward, so second derivatives exist. Shapes as causal_attention.
at::Tensor causal_attention_math(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, double dropout_p, bool train);

}  // namespace gaugelab::gpt2
