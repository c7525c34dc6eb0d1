// The attention gauge (seed 001; DESIGN §3), in two headers:
//   core/attention_head.hpp   one head: AttentionHead, head_logits, head_output, apply_qk_gauge, apply_vo_gauge
//   core/attention_layer.hpp  GPT-2 packed layer: AttentionLayer, head/set_head, layer_output,
//                             apply_layer_gauge, permute_heads, LayerGauge group operations
// Include this header for both.
#pragma once

#include "core/attention_head.hpp"
#include "core/attention_layer.hpp"
