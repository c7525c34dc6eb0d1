#include "gpt2/model/model.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/dropout.h>
#include <ATen/ops/embedding.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/gelu.h>
#include <ATen/ops/layer_norm.h>
#include <ATen/ops/logsumexp.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/rsqrt.h>
#include <ATen/ops/stack.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/scaled_dot_product_attention.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/zeros.h>

#include "gpt2/model/bf16_round.hpp"
#include "gpt2/model/lm_head_loss.hpp"
#include "gpt2/model/residual_layer_norm.hpp"
#include "gpt2/model/runtime.hpp"
#include "gpt2/ops/qk_layer.hpp"

namespace gaugelab::gpt2 {

at::Tensor Block::w_q() const { return c_attn.weight.narrow(0, 0, c_attn.rows_per_group()); }
at::Tensor Block::w_k() const { return c_attn.weight.narrow(0, c_attn.rows_per_group(), c_attn.rows_per_group()); }
at::Tensor Block::w_v() const { return c_attn.weight.narrow(0, 2 * c_attn.rows_per_group(), c_attn.rows_per_group()); }
at::Tensor Block::b_q() const {
  return c_attn.bias.defined() ? c_attn.bias.narrow(0, 0, c_attn.rows_per_group()) : at::Tensor();
}
at::Tensor Block::b_k() const {
  return c_attn.bias.defined() ? c_attn.bias.narrow(0, c_attn.rows_per_group(), c_attn.rows_per_group()) : at::Tensor();
}
at::Tensor Block::b_v() const {
  return c_attn.bias.defined() ? c_attn.bias.narrow(0, 2 * c_attn.rows_per_group(), c_attn.rows_per_group()) : at::Tensor();
}

at::Tensor causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, double dropout_p) {
  // scale defaults to 1/√d_h, as GPT-2's scale_attn_weights. Emulated bf16 rounds the operands and the output, as
  // autocast casts them, and without dropout also the kernel's own bf16 intermediates (bf16_round.hpp).
  if (bf16_emulation_enabled() && dropout_p == 0)
    return emulate_bf16(emulated_bf16_attention(emulate_bf16(q), emulate_bf16(k), emulate_bf16(v)));
  return emulate_bf16(at::scaled_dot_product_attention(emulate_bf16(q), emulate_bf16(k), emulate_bf16(v),
                                                       /*attn_mask=*/{}, dropout_p, /*is_causal=*/true));
}

at::Tensor causal_attention_math(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, double dropout_p, bool train) {
  const std::int64_t T = q.size(-2);
  const at::Tensor mask = at::ones({T, T}, at::TensorOptions().dtype(at::kBool).device(q.device())).triu(1);
  const at::Tensor s = emulate_bf16(at::matmul(emulate_bf16(q), emulate_bf16(k).transpose(-2, -1)))
                           .div(std::sqrt(static_cast<double>(q.size(-1))))
                           .masked_fill(mask, -std::numeric_limits<double>::infinity());
  return emulate_bf16(at::matmul(emulate_bf16(at::dropout(at::softmax(s, -1), dropout_p, train)), emulate_bf16(v)));
}

GPT::GPT(const ModelConfig& config, std::uint64_t seed, bool initialise) : cfg_(config) {
  cfg_.validate();
  const std::int64_t d = cfg_.n_embd, vp = cfg_.padded_vocab();
  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  const LrmPlacement& p = cfg_.lrm;
  wte = at::zeros({vp, d}, f32);
  wpe = at::zeros({cfg_.block_size, d}, f32);
  h.resize(static_cast<std::size_t>(cfg_.n_layer));
  const bool bias = cfg_.bias;  // without: every linear and LayerNorm bias stays undefined (nanoGPT bias=False)
  auto ln_bias = [&] { return bias ? at::zeros({d}, f32) : at::Tensor(); };
  for (Block& b : h) {
    b.ln_1_weight = at::ones({d}, f32);
    b.ln_1_bias = ln_bias();
    b.c_attn = LrmLinear(d, d, {{"q", p[LrmSite::q], true}, {"k", p[LrmSite::k], true}, {"v", p[LrmSite::v]}}, bias);
    b.attn_proj = LrmLinear(d, d, {{"", p[LrmSite::attn_out]}}, bias);
    b.ln_2_weight = at::ones({d}, f32);
    b.ln_2_bias = ln_bias();
    b.c_fc = LrmLinear(d, 4 * d, {{"", p[LrmSite::mlp_in]}}, bias);
    b.mlp_proj = LrmLinear(4 * d, d, {{"", p[LrmSite::mlp_out]}}, bias);
  }
  ln_f_weight = at::ones({d}, f32);
  ln_f_bias = ln_bias();
  lm_head = LrmLinear(d, vp, {{"", p[LrmSite::lm_head]}}, false);
  if (cfg_.tied_head) {
    lm_head.weight = wte;
    lm_head.owns_weight = false;
  }
  if (initialise) init(seed);
  else visit([](const std::string&, at::Tensor& t, ParamRole) { t.requires_grad_(true); });
}

void GPT::visit(const ParamVisitor& f) {
  f("wte.weight", wte, ParamRole::embedding);
  f("wpe.weight", wpe, ParamRole::embedding);
  for (std::size_t i = 0; i < h.size(); ++i) {
    Block& b = h[i];
    const std::string pre = "h." + std::to_string(i) + ".";
    f(pre + "ln_1.weight", b.ln_1_weight, ParamRole::bias_norm);
    if (b.ln_1_bias.defined()) f(pre + "ln_1.bias", b.ln_1_bias, ParamRole::bias_norm);
    b.c_attn.visit(pre + "attn.c_attn.", f);
    b.attn_proj.visit(pre + "attn.c_proj.", f);
    f(pre + "ln_2.weight", b.ln_2_weight, ParamRole::bias_norm);
    if (b.ln_2_bias.defined()) f(pre + "ln_2.bias", b.ln_2_bias, ParamRole::bias_norm);
    b.c_fc.visit(pre + "mlp.c_fc.", f);
    b.mlp_proj.visit(pre + "mlp.c_proj.", f);
  }
  f("ln_f.weight", ln_f_weight, ParamRole::bias_norm);
  if (ln_f_bias.defined()) f("ln_f.bias", ln_f_bias, ParamRole::bias_norm);
  lm_head.visit("lm_head.", f);
  if (cfg_.tied_head) lm_head.weight = wte;  // the visitor may have replaced wte
}

void GPT::init(std::uint64_t seed) {
  at::NoGradGuard no_grad;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const double std_w = 0.02;
  const double std_resid = 0.02 / std::sqrt(2.0 * static_cast<double>(cfg_.n_layer));
  auto ends_with = [](const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  visit([&](const std::string& name, at::Tensor& t, ParamRole role) {
    if (role == ParamRole::matrix || role == ParamRole::embedding) {
      const double sd = ends_with(name, "c_proj.weight") ? std_resid : std_w;
      at::Tensor draw = at::empty(t.sizes(), at::TensorOptions().dtype(at::kFloat));
      draw.normal_(0.0, sd, gen);
      t.copy_(draw);
    } else if (role == ParamRole::bias_norm) {
      const bool gain = ends_with(name, "ln_1.weight") || ends_with(name, "ln_2.weight") || name == "ln_f.weight";
      t.fill_(gain ? 1.0 : 0.0);
    } else {
      t.fill_(1.0);  // multipliers start at 1: the reparameterised model equals the plain one
    }
  });
  if (cfg_.padded_vocab() > cfg_.vocab_size) {  // rows no token reaches: keep them out of every norm
    wte.narrow(0, cfg_.vocab_size, cfg_.padded_vocab() - cfg_.vocab_size).zero_();
    if (!cfg_.tied_head) lm_head.weight.narrow(0, cfg_.vocab_size, cfg_.padded_vocab() - cfg_.vocab_size).zero_();
  }
  visit([](const std::string&, at::Tensor& t, ParamRole) { t.requires_grad_(true); });
}

void GPT::set_dropout(double p) {
  ModelConfig c = cfg_;
  c.dropout = p;
  c.validate();
  cfg_ = c;
}

void GPT::to(c10::Device device) {
  visit([&](const std::string&, at::Tensor& t, ParamRole) {
    t = t.detach().to(device).requires_grad_(true);
  });
}

std::vector<std::pair<std::string, at::Tensor>> GPT::named_parameters() {
  std::vector<std::pair<std::string, at::Tensor>> out;
  visit([&](const std::string& name, at::Tensor& t, ParamRole) { out.emplace_back(name, t); });
  return out;
}

std::vector<ParamGroup> GPT::parameter_groups() {
  std::vector<ParamGroup> groups;
  for (ParamRole r : {ParamRole::matrix, ParamRole::multiplier_qk, ParamRole::multiplier_other,
                      ParamRole::bias_norm, ParamRole::embedding})
    groups.push_back({param_role_name(r), r, {}, {}});
  visit([&](const std::string& name, at::Tensor& t, ParamRole role) {
    ParamGroup& g = groups[static_cast<std::size_t>(role)];
    g.names.push_back(name);
    g.params.push_back(t);
  });
  std::vector<ParamGroup> out;
  for (ParamGroup& g : groups)
    if (!g.params.empty()) out.push_back(std::move(g));
  return out;
}

std::int64_t GPT::num_parameters(bool with_multipliers) {
  std::int64_t n = 0;
  visit([&](const std::string&, at::Tensor& t, ParamRole role) {
    const bool mult = role == ParamRole::multiplier_qk || role == ParamRole::multiplier_other;
    if (with_multipliers || !mult) n += t.numel();
  });
  return n;
}

void GPT::merge_multipliers() {
  at::NoGradGuard no_grad;
  for (Block& b : h)
    for (LrmLinear* l : {&b.c_attn, &b.attn_proj, &b.c_fc, &b.mlp_proj}) l->merge_multipliers();
  if (!cfg_.tied_head) {
    lm_head.merge_multipliers();
    return;
  }
  // Tied head: logits = wte·diag(c)·s·ln_f(x), and ln_f's output is gain⊙x̂ + bias, so c and s
  // scale gain and bias exactly (lrm_gauge.hpp's LN/next-column pairing with g = c·s).
  LrmLinear::Group& g = lm_head.groups[0];
  if (g.r.defined()) throw std::logic_error("merge_multipliers: row multipliers on a tied LM head");
  at::Tensor scale = at::ones({cfg_.n_embd}, ln_f_weight.options());
  if (g.c.defined()) scale = scale.mul(g.c);
  if (g.s.defined()) scale = scale.mul(g.s);
  ln_f_weight.mul_(scale);
  if (ln_f_bias.defined()) ln_f_bias.mul_(scale);
  for (at::Tensor* t : {&g.s, &g.c})
    if (t->defined()) t->fill_(1.0);
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> GPT::qkv_heads(const Block& b, const at::Tensor& a) const {
  const std::int64_t B = a.size(0), T = a.size(1), d = cfg_.n_embd, H = cfg_.n_head, dh = cfg_.head_dim();
  // [B, T, 3d] -> three [B, T, d] parts. One split, not three narrows: its backward concatenates the three
  // gradients in one pass, where each narrow's backward zero-fills a [B, T, 3d] tensor, copies its part in
  // and the three are summed (GPT-2 124M on an H200: 2.5 ms of a 40 ms step).
  const std::vector<at::Tensor> qkv = b.c_attn.forward(a, path(lrm_kernel_)).split(d, 2);
  auto heads = [&](std::size_t part) {  // [B, T, d] -> [B, H, T, dh]
    return qkv[part].view({B, T, H, dh}).transpose(1, 2);
  };
  auto norm = [&](const at::Tensor& t) {  // per head over d_h, no parameters
    if (cfg_.qk_norm == QkNorm::layernorm) return at::layer_norm(t, {dh}, {}, {}, cfg_.layer_norm_eps);
    if (cfg_.qk_norm == QkNorm::rms) return t.mul(at::rsqrt(t.square().mean(-1, true).add(cfg_.layer_norm_eps)));
    return t;
  };
  return {norm(heads(0)), norm(heads(1)), heads(2)};
}

at::Tensor GPT::add_norm(Stream& s, const at::Tensor& gain, const at::Tensor& bias) const {
  AddNorm r = add_layer_norm(s.x, s.pending, gain, bias, cfg_.layer_norm_eps, path(ln_kernel_));
  s.x = std::move(r.sum);
  s.pending = at::Tensor();
  return r.y;
}

void GPT::block_forward(const Block& b, Stream& s) const {
  const std::int64_t B = s.x.size(0), T = s.x.size(1), d = cfg_.n_embd;
  const double p = training_ ? cfg_.dropout : 0.0;
  const auto [q, k, v] = qkv_heads(b, add_norm(s, b.ln_1_weight, b.ln_1_bias));
  at::Tensor y = twice_differentiable_ ? causal_attention_math(q, k, v, p, training_)
                                       : causal_attention(q, k, v, p);  // [B, H, T, dh]
  y = y.transpose(1, 2).reshape({B, T, d});
  s.pending = at::dropout(b.attn_proj.forward(y, path(lrm_kernel_)), p, training_);
  const at::Tensor m = add_norm(s, b.ln_2_weight, b.ln_2_bias);
  const at::Tensor f = at::gelu(b.c_fc.forward(m, path(lrm_kernel_)), cfg_.gelu == Gelu::erf ? "none" : "tanh");  // [B, T, 4d]
  s.pending = at::dropout(b.mlp_proj.forward(f, path(lrm_kernel_)), p, training_);
}

at::Tensor GPT::hidden(const at::Tensor& idx) const {
  if (idx.dim() != 2) throw std::invalid_argument("GPT: token ids must be [B, T]");
  const std::int64_t T = idx.size(1);
  if (T < 1 || T > cfg_.block_size)
    throw std::invalid_argument("GPT: sequence length " + std::to_string(T) + " is outside [1, block_size " +
                                std::to_string(cfg_.block_size) + "]");
  const at::Tensor ids = idx.to(wte.device(), at::kLong);
  Stream s{at::embedding(wte, ids).add(wpe.narrow(0, 0, T)), {}};  // [B, T, d]
  s.x = at::dropout(s.x, training_ ? cfg_.dropout : 0.0, training_);
  for (const Block& b : h) block_forward(b, s);
  return add_norm(s, ln_f_weight, ln_f_bias);
}

void GPT::for_each_layer_qk(const at::Tensor& idx,
                            const std::function<void(const at::Tensor& q, const at::Tensor& k)>& f) const {
  at::NoGradGuard no_grad;
  const std::int64_t T = idx.size(1);
  const at::Tensor ids = idx.to(wte.device(), at::kLong);
  Stream s{at::embedding(wte, ids).add(wpe.narrow(0, 0, T)), {}};  // [B, T, d]
  for (const Block& b : h) {
    Stream probe = s;  // ln_1 once more, outside the block (no gradients here)
    const auto [q, k, v] = qkv_heads(b, add_norm(probe, b.ln_1_weight, b.ln_1_bias));
    f(q, k);
    block_forward(b, s);
  }
}

at::Tensor GPT::attention_logit_max(const at::Tensor& idx, bool absolute) const {
  std::vector<at::Tensor> rows;  // [H] per layer
  for_each_layer_qk(idx, [&](const at::Tensor& q, const at::Tensor& k) {
    rows.push_back(attention_logit_max_heads(q, k, absolute));
  });
  return at::stack(rows).to(at::kCPU);  // [L, H]
}

std::pair<at::Tensor, at::Tensor> GPT::attention_logit_maxima(const at::Tensor& idx) const {
  std::vector<at::Tensor> abs_rows, signed_rows;  // [H] per layer
  for_each_layer_qk(idx, [&](const at::Tensor& q, const at::Tensor& k) {
    abs_rows.push_back(attention_logit_max_heads(q, k, true));
    signed_rows.push_back(attention_logit_max_heads(q, k, false));
  });
  return {at::stack(abs_rows).to(at::kCPU), at::stack(signed_rows).to(at::kCPU)};  // [L, H] each
}

double GPT::log_partition_mean(const at::Tensor& idx) const {
  at::NoGradGuard no_grad;
  return logits(idx).to(at::kFloat).logsumexp(-1).mean().item<double>();
}

at::Tensor GPT::logits(const at::Tensor& idx) const {
  return lm_head_logits(hidden(idx), lm_head.effective_weight(), cfg_.vocab_size);
}

at::Tensor GPT::loss(const at::Tensor& idx, const at::Tensor& targets, LmHeadWorkspace* ws) const {
  return lm_head_loss(hidden(idx), lm_head.matmul_weight(path(lrm_kernel_)), targets.to(wte.device(), at::kLong), cfg_.vocab_size,
                      ws != nullptr ? *ws : ce_ws_);
}

}  // namespace gaugelab::gpt2
