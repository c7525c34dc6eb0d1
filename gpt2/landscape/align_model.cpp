#include "gpt2/landscape/align_model.hpp"

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/index_select.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/outer.h>

#include "gpt2/inspect/layer_tensors.hpp"

namespace gaugelab::gpt2 {

namespace {

at::Tensor index_tensor(const core::Permutation& p, c10::Device device) {
  std::vector<std::int64_t> v(p.begin(), p.end());
  return at::from_blob(v.data(), {static_cast<std::int64_t>(v.size())}, at::TensorOptions().dtype(at::kLong))
      .clone()
      .to(device);
}

/// t ← t reordered along `dim` (gather), in place; undefined tensors are left alone.
void permute_dim(at::Tensor& t, std::int64_t dim, const at::Tensor& idx) {
  if (t.defined()) t.copy_(t.index_select(dim, idx));
}

std::int64_t moved(const core::Permutation& p) {
  std::int64_t n = 0;
  for (std::size_t j = 0; j < p.size(); ++j) n += p[j] != static_cast<core::Index>(j);
  return n;
}

/// A [n, n] float64 score from a torch float64 [n, n] tensor.
core::Mat<double> score_matrix(const at::Tensor& s) { return to_mat(s.to(at::kCPU, at::kDouble).contiguous()); }

at::Tensor f64(const at::Tensor& t) { return t.to(at::kDouble); }

}  // namespace

const char* align_level_name(AlignLevel l) {
  switch (l) {
    case AlignLevel::none: return "none";
    case AlignLevel::residual: return "residual";
    case AlignLevel::attention: return "attention";
    case AlignLevel::full: return "full";
  }
  return "?";
}

AlignLevel parse_align_level(const std::string& name) {
  for (AlignLevel l : {AlignLevel::none, AlignLevel::residual, AlignLevel::attention, AlignLevel::full})
    if (name == align_level_name(l)) return l;
  throw std::invalid_argument("unknown alignment level '" + name + "' (none, residual, attention, full)");
}

void permute_residual(GPT& m, const core::Permutation& p) {
  core::require_permutation(p, m.config().n_embd, "permute_residual");
  at::NoGradGuard no_grad;
  const at::Tensor idx = index_tensor(p, m.device());
  permute_dim(m.wte, 1, idx);  // the tied LM head shares this tensor
  permute_dim(m.wpe, 1, idx);
  auto columns_in = [&](LrmLinear& lin) {  // a map reading the residual stream
    permute_dim(lin.weight, 1, idx);
    for (auto& g : lin.groups) permute_dim(g.c, 0, idx);
  };
  auto rows_out = [&](LrmLinear& lin) {  // a map writing into it
    permute_dim(lin.weight, 0, idx);
    permute_dim(lin.bias, 0, idx);
    for (auto& g : lin.groups) permute_dim(g.r, 0, idx);
  };
  for (Block& b : m.h) {
    permute_dim(b.ln_1_weight, 0, idx);
    permute_dim(b.ln_1_bias, 0, idx);
    columns_in(b.c_attn);
    rows_out(b.attn_proj);
    permute_dim(b.ln_2_weight, 0, idx);
    permute_dim(b.ln_2_bias, 0, idx);
    columns_in(b.c_fc);
    rows_out(b.mlp_proj);
  }
  permute_dim(m.ln_f_weight, 0, idx);
  permute_dim(m.ln_f_bias, 0, idx);
  if (m.lm_head.owns_weight) permute_dim(m.lm_head.weight, 1, idx);
  for (auto& g : m.lm_head.groups) permute_dim(g.c, 0, idx);
}

void permute_mlp_units(Block& b, const core::Permutation& p) {
  core::require_permutation(p, b.c_fc.out_features(), "permute_mlp_units");
  at::NoGradGuard no_grad;
  const at::Tensor idx = index_tensor(p, b.c_fc.weight.device());
  permute_dim(b.c_fc.weight, 0, idx);
  permute_dim(b.c_fc.bias, 0, idx);
  for (auto& g : b.c_fc.groups) permute_dim(g.r, 0, idx);
  permute_dim(b.mlp_proj.weight, 1, idx);
  for (auto& g : b.mlp_proj.groups) permute_dim(g.c, 0, idx);
}

// The score of core::match_units, formed as tensors (the unit axis is the rows of both operands).
core::Permutation match_residual(const GPT& a, const GPT& b) {
  at::NoGradGuard no_grad;
  const at::Tensor s = at::matmul(f64(a.wte).t(), f64(b.wte)) + at::matmul(f64(a.wpe).t(), f64(b.wpe));  // [d, d]
  return core::max_score_assignment(score_matrix(s));
}

core::Permutation match_mlp_units(const Block& a, const Block& b) {
  at::NoGradGuard no_grad;
  const at::Tensor wa = f64(a.c_fc.effective_weight()), wb = f64(b.c_fc.effective_weight());  // [H, d]
  at::Tensor s = at::matmul(wa, wb.t());                                                      // [H, H]
  if (a.c_fc.bias.defined()) s = s + at::outer(f64(a.c_fc.bias), f64(b.c_fc.bias));
  s = s + at::matmul(f64(a.mlp_proj.effective_weight()).t(), f64(b.mlp_proj.effective_weight()));  // [H, d]·[d, H]
  return core::max_score_assignment(score_matrix(s));
}

double parameter_distance(GPT& a, GPT& b) {
  at::NoGradGuard no_grad;
  const auto pa = a.named_parameters(), pb = b.named_parameters();
  if (pa.size() != pb.size()) throw std::invalid_argument("parameter_distance: the models differ in their parameters");
  double sum = 0;
  for (std::size_t i = 0; i < pa.size(); ++i) {
    if (pa[i].first != pb[i].first) throw std::invalid_argument("parameter_distance: " + pa[i].first + " vs " + pb[i].first);
    sum += (f64(pa[i].second) - f64(pb[i].second)).pow(2).sum().item<double>();
  }
  return std::sqrt(sum);
}

void interpolate_parameters(GPT& out, GPT& a, GPT& b, double t) {
  at::NoGradGuard no_grad;
  const auto po = out.named_parameters(), pa = a.named_parameters(), pb = b.named_parameters();
  if (po.size() != pa.size() || pa.size() != pb.size())
    throw std::invalid_argument("interpolate_parameters: the models differ in their parameters");
  for (std::size_t i = 0; i < pa.size(); ++i) {
    if (po[i].first != pa[i].first || pa[i].first != pb[i].first)
      throw std::invalid_argument("interpolate_parameters: " + pa[i].first + " vs " + pb[i].first);
    // in float64, stored back in the parameter's dtype: the end points are reproduced exactly
    po[i].second.copy_(f64(pa[i].second) * (1 - t) + f64(pb[i].second) * t);
  }
}

std::string config_difference(const ModelConfig& a, const ModelConfig& b) {
  const nlohmann::json ja = a.to_json(), jb = b.to_json();
  std::string diff;  // the keys that differ, not the two whole configurations
  for (const auto& [key, value] : ja.items()) {
    const nlohmann::json other = jb.contains(key) ? jb.at(key) : nlohmann::json();
    if (value != other) diff += (diff.empty() ? "" : ", ") + key + " " + value.dump() + " vs " + other.dump();
  }
  for (const auto& [key, value] : jb.items())
    if (!ja.contains(key)) diff += (diff.empty() ? "" : ", ") + key + " null vs " + value.dump();
  return diff;
}

AlignReport align_models(GPT& a, GPT& b, const AlignSettings& s) {
  if (const std::string diff = config_difference(a.config(), b.config()); !diff.empty())
    throw std::invalid_argument("the two models differ in their configuration: " + diff);
  if (s.level >= AlignLevel::attention && a.config().qk_norm != QkNorm::none)
    throw std::invalid_argument("attention alignment needs a model without QK-norm (it breaks the GL(d_k) gauge)");
  if (s.slice == inspect::Slice::covariance)
    throw std::invalid_argument("attention alignment takes the qr or gram slice (covariance depends on data)");
  AlignReport r;
  auto record = [&](const char* step) {
    r.steps.emplace_back(step);
    r.distance.push_back(parameter_distance(a, b));
  };
  a.merge_multipliers();
  b.merge_multipliers();
  record("folded");
  if (s.level >= AlignLevel::residual) {
    const core::Permutation p = match_residual(a, b);
    permute_residual(b, p);
    r.residual_moved.push_back(moved(p));
    record("residual");
  }
  const auto L = static_cast<std::int64_t>(a.h.size());
  if (s.level >= AlignLevel::attention && s.canonicalize) {
    const core::Mat<double> no_inputs(0, a.config().n_embd);  // the qr and gram slices read no activations
    for (std::int64_t l = 0; l < L; ++l) {
      apply_layer_gauge(a, l, inspect::slice_gauge(attention_layer(a, l), s.slice, no_inputs));
      apply_layer_gauge(b, l, inspect::slice_gauge(attention_layer(b, l), s.slice, no_inputs));
    }
    record("canonical");
  }
  if (s.level >= AlignLevel::attention) {
    for (std::int64_t l = 0; l < L; ++l) {
      const core::LayerAlignment<double> al =
          core::align_layer_heads(attention_layer(a, l), attention_layer(b, l), s.head_cost);
      apply_layer_gauge(b, l, al.gauge);
      r.head_distance2.push_back(al.head_distance2);
      r.heads_moved.push_back(moved(al.gauge.perm));
    }
    record("heads");
  }
  if (s.level >= AlignLevel::full) {
    for (std::int64_t l = 0; l < L; ++l) {
      const auto k = static_cast<std::size_t>(l);
      const core::Permutation p = match_mlp_units(a.h[k], b.h[k]);
      permute_mlp_units(b.h[k], p);
      r.units_moved.push_back(moved(p));
    }
    record("mlp");
  }
  return r;
}

}  // namespace gaugelab::gpt2
