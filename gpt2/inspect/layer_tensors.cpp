#include "gpt2/inspect/layer_tensors.hpp"

#include <stdexcept>
#include <string>
#include <vector>

#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/linear.h>

#include "data/token_files.hpp"
#include "gpt2/model/checkpoint.hpp"
#include "gpt2/model/model_dir.hpp"
#include "gpt2/model/head_gauge.hpp"
#include "gpt2/model/vocab_ids.hpp"
#include "gpt2/inspect/head_loader.hpp"

namespace gaugelab::gpt2 {

namespace {

at::Tensor cpu64(const at::Tensor& t) { return t.detach().to(at::kCPU, at::kDouble); }

// W_eff [out, in] in float64: the map's own formula (LrmLinear::effective_weight) on float64 copies.
at::Tensor effective_f64(const LrmLinear& l) {
  LrmLinear c = l;
  c.weight = cpu64(l.weight);
  for (LrmLinear::Group& g : c.groups)
    for (at::Tensor* t : {&g.s, &g.r, &g.c})
      if (t->defined()) *t = cpu64(*t);
  return c.effective_weight();
}

core::RowVec<double> bias_or_zero(const at::Tensor& b, std::int64_t n) {
  if (!b.defined()) return core::RowVec<double>::Zero(n);
  return to_vec(b).transpose();
}

}  // namespace

core::Mat<double> to_mat(const at::Tensor& t) {
  const at::Tensor c = cpu64(t).contiguous();
  return Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
      c.data_ptr<double>(), c.size(0), c.size(1));
}

core::Vec<double> to_vec(const at::Tensor& t) {
  const at::Tensor c = cpu64(t).contiguous();
  return Eigen::Map<const core::Vec<double>>(c.data_ptr<double>(), c.numel());
}

at::Tensor to_tensor(const core::Mat<double>& m) {
  at::Tensor t = at::empty({m.rows(), m.cols()}, at::TensorOptions().dtype(at::kDouble));
  Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(t.data_ptr<double>(), m.rows(),
                                                                                     m.cols()) = m;
  return t;
}

core::AttentionLayer<double> attention_layer(const GPT& model, std::int64_t layer) {
  const ModelConfig& cfg = model.config();
  if (layer < 0 || layer >= cfg.n_layer)
    throw std::out_of_range("layer " + std::to_string(layer) + " is outside [0, " + std::to_string(cfg.n_layer) + ")");
  const Block& b = model.h[static_cast<std::size_t>(layer)];
  const std::int64_t d = cfg.n_embd;
  const core::Mat<double> qkv = to_mat(effective_f64(b.c_attn));  // [3d, d] torch layout
  const at::Tensor bias = b.c_attn.bias;
  core::AttentionLayer<double> l;
  l.n_heads = cfg.n_head;
  l.W_q = qkv.topRows(d).transpose();
  l.W_k = qkv.middleRows(d, d).transpose();
  l.W_v = qkv.bottomRows(d).transpose();
  l.W_o = to_mat(effective_f64(b.attn_proj)).transpose();  // [d_in = h·d_v, d]
  const core::RowVec<double> bqkv = bias_or_zero(bias, 3 * d);
  l.b_q = bqkv.segment(0, d);
  l.b_k = bqkv.segment(d, d);
  l.b_v = bqkv.segment(2 * d, d);
  l.b_o = bias_or_zero(b.attn_proj.bias, d);
  return l;
}

void permute_heads(Block& b, const core::Permutation& perm, std::int64_t head_dim) {
  const std::int64_t d = b.c_attn.rows_per_group();
  core::require_permutation(perm, d / head_dim, "permute_heads");
  at::NoGradGuard no_grad;
  const c10::Device dev = b.c_attn.weight.device();
  at::Tensor idx = at::empty({d}, at::TensorOptions().dtype(at::kLong));
  for (std::int64_t j = 0; j < d / head_dim; ++j)
    for (std::int64_t a = 0; a < head_dim; ++a) idx.data_ptr<std::int64_t>()[j * head_dim + a] = perm[static_cast<std::size_t>(j)] * head_dim + a;
  idx = idx.to(dev);
  auto gather = [&](at::Tensor t, std::int64_t dim) { t.copy_(t.index_select(dim, idx)); };  // index_select copies
  for (std::int64_t part = 0; part < 3; ++part) {
    gather(b.c_attn.weight.narrow(0, part * d, d), 0);
    if (b.c_attn.bias.defined()) gather(b.c_attn.bias.narrow(0, part * d, d), 0);
  }
  for (LrmLinear::Group* g : {&b.q(), &b.k(), &b.v()})
    if (g->r.defined()) gather(g->r, 0);
  gather(b.attn_proj.weight, 1);
  if (b.attn_proj.groups[0].c.defined()) gather(b.attn_proj.groups[0].c, 0);
}

void apply_layer_gauge(GPT& model, std::int64_t layer, const core::LayerGauge<double>& g) {
  // Hundreds of tiny ops ([d_h, d_h] inverses, [d_h, d] products): with 2 OpenMP threads on a shared
  // 2-core machine their barriers spin, and a GPT-2 124M valid test took 12.8 s instead of 1.6 s.
  // One intra-op thread here; the caller's count comes back on return.
  struct OneThread {
    int saved = at::get_num_threads();
    OneThread() { at::set_num_threads(1); }
    ~OneThread() { at::set_num_threads(saved); }
  } one_thread;
  const std::int64_t h = model.config().n_head;
  if (static_cast<std::int64_t>(g.s.size()) != h || static_cast<std::int64_t>(g.c.size()) != h)
    throw std::invalid_argument("apply_layer_gauge: need one S and one C per head");
  Block& b = model.h.at(static_cast<std::size_t>(layer));
  for (std::int64_t i = 0; i < h; ++i) {
    gpt2::apply_qk_gauge(b, model.head_slice(i), to_tensor(g.s[static_cast<std::size_t>(i)]));
    gpt2::apply_vo_gauge(b, model.head_slice(i), to_tensor(g.c[static_cast<std::size_t>(i)]));
  }
  if (g.perm != core::identity_permutation(h)) permute_heads(b, g.perm, model.config().head_dim());
}

std::vector<core::Mat<double>> attention_inputs(GPT& model, const at::Tensor& idx) {
  at::NoGradGuard no_grad;
  const std::vector<Block> all = model.h;
  const at::Tensor ln_w = model.ln_f_weight, ln_b = model.ln_f_bias;
  struct Restore {  // puts the blocks and ln_f back however we leave
    GPT& m;
    const std::vector<Block>& blocks;
    at::Tensor w, b;
    ~Restore() {
      m.h = blocks;
      m.ln_f_weight = w;
      m.ln_f_bias = b;
    }
  } restore{model, all, ln_w, ln_b};
  std::vector<core::Mat<double>> out;
  for (std::size_t l = 0; l < all.size(); ++l) {
    model.h.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(l));
    model.ln_f_weight = all[l].ln_1_weight;
    model.ln_f_bias = all[l].ln_1_bias;
    out.push_back(to_mat(model.hidden(idx).reshape({-1, model.config().n_embd})));
  }
  return out;
}

at::Tensor model_logits(const GPT& model, const at::Tensor& idx) {
  if (model.wte.scalar_type() != at::kDouble) return model.logits(idx);
  return at::linear(model.hidden(idx), model.lm_head.effective_weight()).narrow(-1, 0, model.config().vocab_size);
}

at::Tensor last_logits(const GPT& model, const at::Tensor& idx) {
  const at::Tensor h = model.hidden(idx).select(1, idx.size(1) - 1);  // [B, d]
  return at::linear(h, model.lm_head.effective_weight()).narrow(-1, 0, model.config().vocab_size);
}

void convert_parameters(GPT& model, c10::ScalarType dtype) {
  model.visit([&](const std::string&, at::Tensor& t, ParamRole) { t = t.detach().to(dtype).requires_grad_(true); });
}

std::vector<at::Tensor> snapshot(GPT& model) {
  std::vector<at::Tensor> out;
  model.visit([&](const std::string&, at::Tensor& t, ParamRole) { out.push_back(t.detach().clone()); });
  return out;
}

void restore(GPT& model, const std::vector<at::Tensor>& saved) {
  at::NoGradGuard no_grad;
  std::size_t i = 0;
  model.visit([&](const std::string& name, at::Tensor& t, ParamRole) {
    if (i >= saved.size()) throw std::logic_error("restore: snapshot has fewer tensors than the model (" + name + ")");
    t.copy_(saved[i++]);
  });
}

std::optional<QkRowScales> qk_row_scales(const GPT& model, std::int64_t layer) {
  const Block& b = model.h.at(static_cast<std::size_t>(layer));
  const std::int64_t d = model.config().n_embd;
  const at::Tensor rq = b.c_attn.groups[0].row_scale(d), rk = b.c_attn.groups[1].row_scale(d);
  if (!rq.defined() || !rk.defined()) return std::nullopt;
  const std::int64_t dd = model.config().n_embd;  // b_Q, b_K are zero in a model without biases
  return QkRowScales{to_vec(rq), to_vec(rk), bias_or_zero(b.b_q(), dd).transpose(), bias_or_zero(b.b_k(), dd).transpose()};
}

namespace {

/// The checkpoint read once onto the CPU (its model and vocabulary), with `layer` checked; one-line errors naming
/// the checkpoint.
ModelDir read_with_layer(const std::string& checkpoint, std::int64_t layer) {
  ModelDir source;
  try {
    source = read_model_dir(checkpoint, c10::Device(c10::kCPU));
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("cannot read checkpoint: ") + e.what());
  }
  if (layer < 0 || layer >= source.model->config().n_layer)
    throw std::runtime_error(checkpoint + ": layer " + std::to_string(layer) + " is outside [0, " +
                             std::to_string(source.model->config().n_layer) + ")");
  return source;
}

}  // namespace

core::AttentionHead<double> load_checkpoint_head(const std::string& checkpoint, std::int64_t layer, std::int64_t head) {
  const std::unique_ptr<GPT> model = read_with_layer(checkpoint, layer).model;
  const ModelConfig& cfg = model->config();
  if (head < 0 || head >= cfg.n_head)
    throw std::runtime_error(checkpoint + ": head " + std::to_string(head) + " is outside [0, " +
                             std::to_string(cfg.n_head) + ")");
  return core::head(attention_layer(*model, layer), head);
}

core::Mat<double> load_layer_inputs(const std::string& checkpoint, std::int64_t layer, const std::string& data,
                                    std::int64_t rows) {
  const ModelDir source = read_with_layer(checkpoint, layer);
  const std::unique_ptr<GPT>& model = source.model;
  const ModelConfig& cfg = model->config();
  const data::MappedTokens file = data::MappedTokens::open(data);
  const TokenIds token_ids(source.vocabulary(), cfg.vocab_size, checkpoint);
  const std::int64_t T = std::min<std::int64_t>(cfg.block_size, rows), S = (rows + T - 1) / T;
  if (file.size() < static_cast<std::size_t>(S * T))
    throw std::runtime_error(data + ": " + std::to_string(file.size()) + " tokens, fewer than the " +
                             std::to_string(S * T) + " asked for");
  const auto tokens = file.tokens();
  std::vector<std::int64_t> ids(static_cast<std::size_t>(S * T));
  token_ids.check_tokens(tokens.first(ids.size()), data);  // one line naming both
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = token_ids.to_model(tokens[i], data);
  const at::Tensor idx = at::from_blob(ids.data(), {S, T}, at::TensorOptions().dtype(at::kLong)).clone();
  at::NoGradGuard no_grad;
  return attention_inputs(*model, idx)[static_cast<std::size_t>(layer)].topRows(rows);
}

}  // namespace gaugelab::gpt2
