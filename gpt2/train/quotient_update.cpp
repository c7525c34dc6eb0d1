#include "gpt2/train/quotient_update.hpp"

#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>

namespace gaugelab::gpt2 {

AttentionSnapshot snapshot_attention(const GPT& model) {
  AttentionSnapshot s;
  for (const Block& b : model.h) {
    s.c_attn.push_back(b.c_attn.weight.detach().clone());
    s.attn_proj.push_back(b.attn_proj.weight.detach().clone());
  }
  return s;
}

void correct_attention_increments(GPT& model, const AttentionSnapshot& before, const QuotientUpdate& q) {
  const std::int64_t d = model.config().n_embd;
  for (std::size_t l = 0; l < model.h.size(); ++l) {
    Block& b = model.h[l];
    const LrmLinear::Group &gq = b.c_attn.groups[0], &gk = b.c_attn.groups[1], &gv = b.c_attn.groups[2];
    const LrmLinear::Group& go = b.attn_proj.groups[0];
    const AttentionMultipliers m{gq.row_scale(d), gq.c, gk.row_scale(d), gk.c,
                                 gv.row_scale(d), gv.c, go.row_scale(d), go.c};
    correct_attention_increments_layer(b.c_attn.weight, before.c_attn[l], b.attn_proj.weight, before.attn_proj[l], m,
                                       model.config().n_head, q);
  }
}

}  // namespace gaugelab::gpt2
