// The model's settings with a fixed set of values, each an enum with its one table of words (core/choice.hpp):
// the words config.json, the command lines and the logs spell. A word is parsed once, where its option is
// declared (train/options.cpp, use/options.cpp) or where config.json is read (config.cpp), and written back from
// the same row; the model compares the enum, never a string.
//
// No LibTorch here: the trainer's and the verbs' LibTorch-free option structs (train/api.hpp, use/api.hpp) hold
// these enums.
#pragma once

#include "core/choice.hpp"

namespace gaugelab::gpt2 {

/// The MLP's nonlinearity (--gelu, config.json "gelu"). GPT-2 and Hugging Face use the tanh approximation
/// ("gelu_new"); nanoGPT's model.py uses torch's exact nn.GELU() (erf). The two differ by up to ~1e-3 per activation.
enum class Gelu { tanh, erf };
inline const core::ChoiceTable<Gelu>& gelu_choices() {
  static const core::ChoiceTable<Gelu> t = {{"erf", Gelu::erf}, {"tanh", Gelu::tanh}};
  return t;
}

/// Normalisation of each head's queries and keys before the scores (--qk-norm, config.json "qk_norm"; QK-norm:
/// Wortsman et al. 2023's qk-layernorm, modded-nanogpt's RMSNorm), parameter-free. An architecture change, not a
/// gauge fix: it makes every head's scores invariant to scaling its q (or k) alone, so the Q/K multipliers' scale
/// product no longer reaches the logits; it has no Hugging Face GPT-2 equivalent (export refuses it).
enum class QkNorm { none, layernorm, rms };
inline const core::ChoiceTable<QkNorm>& qk_norm_choices() {
  static const core::ChoiceTable<QkNorm> t = {
      {"none", QkNorm::none}, {"layernorm", QkNorm::layernorm}, {"rms", QkNorm::rms}};
  return t;
}

/// Arithmetic of the forward/backward pass (runtime.hpp). Parameters and optimizer state stay float32 in all three.
enum class Precision {
  fp32,           // everything float32
  bf16,           // autocast: matmuls and attention in bfloat16, reductions and the loss in float32
  bf16_emulated,  // float32 GEMMs whose inputs and output are rounded to bf16 where autocast casts (bf16_round.hpp)
};
/// The regimes a command line names (--precision; the logs' summary "precision"): bf16 stands for both bf16 paths,
/// the trainer's --bf16-mode choosing between them.
inline const core::ChoiceTable<Precision>& precision_choices() {
  static const core::ChoiceTable<Precision> t = {{"fp32", Precision::fp32}, {"bf16", Precision::bf16}};
  return t;
}
/// How a bf16 regime is computed (--bf16-mode; the logs' summary "bf16_mode"): native (autocast, Precision::bf16),
/// emulated (Precision::bf16_emulated), or auto, which the trainer resolves to one of them at start (train/setup.cpp).
enum class Bf16Mode { automatic, native, emulated };
inline const core::ChoiceTable<Bf16Mode>& bf16_mode_choices() {
  static const core::ChoiceTable<Bf16Mode> t = {
      {"auto", Bf16Mode::automatic}, {"native", Bf16Mode::native}, {"emulated", Bf16Mode::emulated}};
  return t;
}

/// A regime's two words, as the settings printout and the logs' summary record them: the regime ("fp32", or
/// "bf16" for both bf16 paths: precision_choices()) and how it is computed ("-" for fp32, else the path's word
/// in bf16_mode_choices(): "native" or "emulated").
struct PrecisionWords {
  const char* precision;
  const char* bf16_path;
};
inline PrecisionWords precision_words(Precision p) {
  const bool emulated = p == Precision::bf16_emulated;
  return {core::choice_name(precision_choices(), emulated ? Precision::bf16 : p),
          p == Precision::fp32 ? "-"
                               : core::choice_name(bf16_mode_choices(), emulated ? Bf16Mode::emulated : Bf16Mode::native)};
}
/// The regime's word alone.
inline const char* precision_name(Precision p) { return precision_words(p).precision; }

/// One of our fused CUDA kernels, or the ATen ops it replaces (kernel_path.hpp; --lm-head-kernel, --ln-kernel,
/// --lrm-kernel).
enum class KernelPath { fused, aten };
inline const core::ChoiceTable<KernelPath>& kernel_path_choices() {
  static const core::ChoiceTable<KernelPath> t = {{"fused", KernelPath::fused}, {"aten", KernelPath::aten}};
  return t;
}

/// The attention kernel (--attention; runtime.hpp select_attention_backend): sdpa and math run everywhere;
/// flash, efficient and cudnn are CUDA's fused backends alone.
enum class Attention { sdpa, math, flash, efficient, cudnn };
inline const core::ChoiceTable<Attention>& attention_choices() {
  static const core::ChoiceTable<Attention> t = {{"sdpa", Attention::sdpa},
                                                 {"math", Attention::math},
                                                 {"flash", Attention::flash},
                                                 {"efficient", Attention::efficient},
                                                 {"cudnn", Attention::cudnn}};
  return t;
}

/// The word of a choice (config.json, logs, the settings printout, messages), from its table.
inline const char* word(Gelu v) { return core::choice_name(gelu_choices(), v); }
inline const char* word(QkNorm v) { return core::choice_name(qk_norm_choices(), v); }
inline const char* word(KernelPath v) { return core::choice_name(kernel_path_choices(), v); }
inline const char* word(Attention v) { return core::choice_name(attention_choices(), v); }
inline const char* word(Bf16Mode v) { return core::choice_name(bf16_mode_choices(), v); }

}  // namespace gaugelab::gpt2
