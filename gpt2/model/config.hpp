// GPT-2 model configuration: sizes, presets, and where the learnable multipliers (LRM) sit.
// No LibTorch here, so the front door and the trainer's option code can include it freely.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "gpt2/model/choices.hpp"  // Gelu, QkNorm

namespace gaugelab::gpt2 {

/// How one linear map is reparameterised (seed 002; seed 000 eq. 1): W_eff = diag(r)·W̄·diag(c).
enum class LrmMode {
  none,        // W_eff = W̄
  scalar,      // W_eff = s·W̄, one learnable s
  row,         // W_eff = diag(r)·W̄, r [out]
  column,      // W_eff = W̄·diag(c), c [in]
  row_column,  // W_eff = diag(r)·W̄·diag(c)
};

/// The kinds of linear map in GPT-2 that can carry multipliers. Q, K and V are separate sites
/// (each with its own multipliers) although their weights are stored packed as c_attn [3d, d].
enum class LrmSite { q, k, v, attn_out, mlp_in, mlp_out, lm_head };
inline constexpr int kLrmSites = 7;

const char* lrm_mode_name(LrmMode m);  // "none", "scalar", "row", "column", "row+column"
const char* lrm_site_name(LrmSite s);  // "q", "k", "v", "attn_out", "mlp_in", "mlp_out", "lm_head"
bool lrm_has_row(LrmMode m);           // row or row+column
bool lrm_has_column(LrmMode m);        // column or row+column

/// One mode per site. The default is the seed's placement (seed 000 §4.1, "170K" multipliers):
/// rows+columns on Q, K, V, attention out, MLP in and MLP out; none on the (tied) LM head.
struct LrmPlacement {
  std::array<LrmMode, kLrmSites> mode = {LrmMode::row_column, LrmMode::row_column, LrmMode::row_column,
                                          LrmMode::row_column, LrmMode::row_column, LrmMode::row_column,
                                          LrmMode::none};
  LrmMode& operator[](LrmSite s) { return mode[static_cast<int>(s)]; }
  LrmMode operator[](LrmSite s) const { return mode[static_cast<int>(s)]; }
  bool any() const;

  static LrmPlacement none();
  /// Parses "default", "none", or a comma list of site:mode, e.g. "q:row+column,k:row,lm_head:scalar"
  /// (sites not listed get none; "all:MODE" sets every site but lm_head). Throws std::runtime_error.
  static LrmPlacement parse(const std::string& spec);
  /// The canonical spec string ("none" if no site has multipliers), accepted back by parse().
  std::string spec() const;
};

/// Sizes and switches of one GPT-2 model. Validated by validate(); every field is a plain setting.
struct ModelConfig {
  std::int64_t n_layer = 12;        // transformer blocks
  std::int64_t n_head = 12;         // attention heads per block
  std::int64_t n_embd = 768;        // residual width d (a multiple of n_head)
  std::int64_t block_size = 1024;   // context length = rows of the position embedding (HF n_positions)
  std::int64_t vocab_size = 50257;  // token ids 0..vocab_size-1 (GPT-2 BPE: 50257)
  std::int64_t vocab_multiple = 64;  // embedding rows are padded to a multiple of this; logits sliced back
  double layer_norm_eps = 1e-5;     // HF layer_norm_epsilon
  double dropout = 0.0;             // embedding, attention and residual dropout while training (HF *_pdrop)
  bool bias = true;                 // linear and LayerNorm biases (GPT-2 and Hugging Face: true; nanoGPT's
                                    // train.py: false, so `gaugelab train` defaults to false)
  Gelu gelu = Gelu::tanh;           // tanh (GPT-2, HF) or erf (nanoGPT; `gaugelab train`'s default)
  QkNorm qk_norm = QkNorm::none;    // per-head normalisation of q and k (none: GPT-2)
  bool tied_head = true;            // LM head shares the token embedding (GPT-2); false only for imports/exports
                                    // whose LM head carries row multipliers
  LrmPlacement lrm;                 // learnable multipliers per site

  std::int64_t head_dim() const { return n_embd / n_head; }
  std::int64_t padded_vocab() const;  // vocab_size rounded up to vocab_multiple

  // validate()'s upper bounds (far above GPT-2 xl; products stay inside int64).
  static constexpr std::int64_t kMaxLayers = 4096;
  static constexpr std::int64_t kMaxWidth = 65536;          // n_embd and n_head
  static constexpr std::int64_t kMaxContext = 1 << 20;
  static constexpr std::int64_t kMaxVocab = 1 << 24;
  static constexpr std::int64_t kMaxVocabMultiple = 1 << 16;
  /// Throws std::runtime_error naming the first bad field.
  void validate() const;
  /// Number of learnable multipliers this placement adds (165,888 for gpt2 with the default placement).
  std::int64_t multiplier_count() const;

  nlohmann::json to_json() const;
  /// Reads what to_json() writes; unknown keys are errors (they would be silently lost otherwise).
  static ModelConfig from_json(const nlohmann::json& j);
  /// "gpt2" (124M), "gpt2-medium", "gpt2-large", "gpt2-xl", and CPU sizes "tiny" (4 layers, 4 heads,
  /// d 256, context 256) and "nano" (2 layers, 2 heads, d 64, context 64; for tests).
  static ModelConfig preset(const std::string& name);
};

}  // namespace gaugelab::gpt2
