// The PyTorch custom operators of `gaugelab.torch` (torch.ops.gaugelab.*): the trainer's own raw-tensor
// functions (gpt2/ops/) registered with TORCH_LIBRARY, so that a PyTorch user's training loop calls the
// same code `gaugelab train` runs. Built into a shared library loaded by python/gaugelab/torch
// (torch.ops.load_library); never linked into the executables.
//
// Every operator is registered as a composite of ATen calls (CompositeImplicitAutograd, the catch-all
// kernel): it runs on whatever device and dtype its inputs have (CPU, CUDA), and autograd differentiates
// lrm_linear through its ATen ops. In-place operators end in `_` and mark the arguments they write
// (Tensor(a!)); they return what they computed (the gauge factors g, a count) rather than self. Two
// written arguments may be views of one tensor (b_Q and b_K: disjoint slices of c_attn's bias; W̄_Q and
// W̄_K of its weight), which the schema does not say: call these outside a torch.compile region (they
// run between steps, without autograd, as the trainer's do). A bad argument (shape, contiguity, a
// setting, a tensor that is not floating point) raises ValueError with the function's one-line message;
// ATen's own errors (devices that differ) stay RuntimeErrors. An in-place operator called with grad mode
// on refuses, as torch's own in-place operators do, a leaf that requires grad (or a view of one) with
// torch's RuntimeError; any other tensor it writes that requires grad is refused too (the operators write
// without autograd: call them under torch.no_grad(), as gaugelab.torch does).
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <ATen/core/grad_mode.h>
#include <ATen/ops/scalar_tensor.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <nlohmann/json.hpp>
#include <torch/library.h>

#include "gpt2/model/config.hpp"
#include "gpt2/ops/head_projection_layer.hpp"
#include "gpt2/ops/lrm_weight.hpp"
#include "gpt2/ops/qk_layer.hpp"
#include "gpt2/ops/quotient_layer.hpp"
#include "gpt2/train/conditions.hpp"
#include "gpt2/train/hook_registry.hpp"

namespace gaugelab::gpt2 {
namespace {

using at::Tensor;
using OptTensor = std::optional<Tensor>;

Tensor opt(const OptTensor& t) { return t.has_value() ? *t : Tensor(); }

using Named = std::initializer_list<std::pair<const char*, Tensor>>;

// Every tensor argument floating point: an integer one is refused by name, not deep inside ATen.
void require_floating(Named ts) {
  for (const auto& [name, t] : ts)
    if (t.defined() && !t.is_floating_point())
      throw std::invalid_argument(std::string(name) + " must be a floating-point tensor (got " +
                                  std::string(c10::toString(t.scalar_type())) + ")");
}

// The tensors an in-place operator writes, under torch's rule for in-place writes (check_inplace in
// torch/csrc/autograd/VariableTypeUtils.h, with its messages) while grad mode is on.
void require_writable(const char* op, Named ts) {
  if (!at::GradMode::is_enabled()) return;
  for (const auto& [name, t] : ts) {
    if (!t.defined() || !t.requires_grad()) continue;
    TORCH_CHECK(!(t.is_view() && t._base().is_leaf()),
                "a view of a leaf Variable that requires grad is being used in an in-place operation.");
    TORCH_CHECK(!t.is_leaf(), "a leaf Variable that requires grad is being used in an in-place operation.");
    TORCH_CHECK(false, "gaugelab.", op, ": ", name, " requires grad, and the operator writes it without autograd: "
                "call it under torch.no_grad()");
  }
}

std::string fmt(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

// The largest finite value of a floating dtype, and the dtype's name as Python spells it.
std::pair<double, const char*> dtype_max(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return {std::numeric_limits<float>::max(), "float32"};
    case at::kHalf: return {static_cast<double>(std::numeric_limits<c10::Half>::max()), "float16"};
    case at::kBFloat16: return {static_cast<double>(std::numeric_limits<c10::BFloat16>::max()), "bfloat16"};
    default: return {std::numeric_limits<double>::max(), "float64"};
  }
}

// GaugeFix's eps in g = √((s+ε)/(s'+ε)) on multipliers of `dtype`, by the core binding's rule
// (python/bind_fixes.cpp, and gaugelab.torch's _checks.py): finite and >= 0, finite in that dtype (1e300 is
// inf in float32, and inf/inf a NaN in every multiplier), and > 0 where a head's scale is zero. scales()
// gives the per-head scales [heads] (s and s' of the pair, "Q or K" or "V or O"), or nothing when the
// shapes are wrong (the layer function refuses those next); it runs only where eps is 0 in the dtype.
template <class F>
void require_eps(double eps, at::ScalarType dtype, const char* pair, F&& scales) {
  if (!std::isfinite(eps) || eps < 0) throw std::invalid_argument("eps must be finite and >= 0 (got " + fmt(eps) + ")");
  const auto [top, name] = dtype_max(dtype);
  if (eps > top)
    throw std::invalid_argument("eps must be at most " + fmt(top) + ", the largest " + name + " (got " + fmt(eps) + ")");
  if (at::scalar_tensor(eps, at::TensorOptions().dtype(dtype)).item<double>() > 0) return;
  for (const Tensor& s : scales())
    if (!s.gt(0).all().item<bool>())
      throw std::invalid_argument(std::string("eps must be > 0 where a head's ") + pair + " multipliers are all zero (its "
                                  "factor would be 0/0 or x/0) (got " + fmt(eps) + ")");
}

// Whether x is a contiguous [d] with heads dividing d (so that the head scales can be computed).
bool per_head(const Tensor& x, int64_t heads) {
  return x.defined() && x.dim() == 1 && x.is_contiguous() && heads >= 1 && x.size(0) % heads == 0;
}

// Runs f; the library's std::invalid_argument / std::runtime_error become Python's ValueError.
template <class F>
auto checked(const char* op, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const c10::Error&) {
    throw;
  } catch (const std::exception& e) {
    TORCH_CHECK_VALUE(false, "gaugelab.", op, ": ", e.what());
  }
}

Tensor lrm_linear_op(const Tensor& x, const Tensor& w, const OptTensor& b, const OptTensor& r, const OptTensor& c) {
  return checked("lrm_linear", [&] {
    require_floating({{"x", x}, {"weight", w}, {"bias", opt(b)}, {"r", opt(r)}, {"c", opt(c)}});
    return lrm_linear(x, w, opt(b), opt(r), opt(c));
  });
}

Tensor lrm_effective_weight_op(const Tensor& w, const OptTensor& r, const OptTensor& c) {
  return checked("lrm_effective_weight", [&] {
    require_floating({{"weight", w}, {"r", opt(r)}, {"c", opt(c)}});
    return lrm_effective_weight(w, opt(r), opt(c));
  });
}

Tensor head_rms_op(const Tensor& x, int64_t heads) {
  return checked("head_rms", [&] {
    require_floating({{"x", x}});
    if (x.dim() != 1 || heads < 1 || x.size(0) % heads != 0)
      throw std::invalid_argument("x must be [d] with heads dividing d");
    return head_rms(x, heads);
  });
}

void rescale_qk_pair_op(const Tensor& r_q, const Tensor& r_k, const OptTensor& b_q, const OptTensor& b_k,
                        const Tensor& g) {
  checked("rescale_qk_pair_", [&] {
    Tensor rq = r_q, rk = r_k, bq = opt(b_q), bk = opt(b_k);
    require_writable("rescale_qk_pair_", {{"r_q", rq}, {"r_k", rk}, {"b_q", bq}, {"b_k", bk}});
    require_floating({{"r_q", rq}, {"r_k", rk}, {"b_q", bq}, {"b_k", bk}, {"g", g}});
    for (const Tensor* t : std::initializer_list<const Tensor*>{&rk, &bq, &bk, &g})
      if (t->defined() && (t->dim() != 1 || rq.dim() != 1 || t->size(0) != rq.size(0)))
        throw std::invalid_argument("r_q, r_k, b_q, b_k and g must all be [d]");
    rescale_qk_pair(rq, rk, bq, bk, g);
    return 0;
  });
}

Tensor qk_gauge_fix_op(const Tensor& r_q, const Tensor& r_k, const OptTensor& b_q, const OptTensor& b_k,
                       int64_t heads, double eps) {
  return checked("qk_gauge_fix_", [&] {
    Tensor rq = r_q, rk = r_k, bq = opt(b_q), bk = opt(b_k);
    require_writable("qk_gauge_fix_", {{"r_q", rq}, {"r_k", rk}, {"b_q", bq}, {"b_k", bk}});
    require_floating({{"r_q", rq}, {"r_k", rk}, {"b_q", bq}, {"b_k", bk}});
    require_eps(eps, rq.scalar_type(), "Q or K", [&] {
      return per_head(rq, heads) && per_head(rk, heads) ? std::vector<Tensor>{head_rms(rq, heads), head_rms(rk, heads)}
                                                        : std::vector<Tensor>{};
    });
    return qk_gauge_fix_layer(rq, rk, bq, bk, heads, eps);
  });
}

Tensor qk_gauge_fix_effective_op(const Tensor& r_q, const Tensor& r_k, const OptTensor& b_q, const OptTensor& b_k,
                                 const Tensor& w_q_eff, const Tensor& w_k_eff, int64_t heads, double eps) {
  return checked("qk_gauge_fix_effective_", [&] {
    Tensor rq = r_q, rk = r_k, bq = opt(b_q), bk = opt(b_k);
    require_writable("qk_gauge_fix_effective_", {{"r_q", rq}, {"r_k", rk}, {"b_q", bq}, {"b_k", bk}});
    require_floating({{"r_q", rq}, {"r_k", rk}, {"b_q", bq}, {"b_k", bk}, {"w_q_eff", w_q_eff}, {"w_k_eff", w_k_eff}});
    require_eps(eps, rq.scalar_type(), "Q or K", [&] {
      const bool ok = w_q_eff.dim() == 2 && w_k_eff.sizes() == w_q_eff.sizes() && heads >= 1 &&
                      w_q_eff.size(0) % heads == 0;
      return ok ? std::vector<Tensor>{head_row_norms(w_q_eff, heads), head_row_norms(w_k_eff, heads)}
                : std::vector<Tensor>{};
    });
    return qk_gauge_fix_effective_layer(rq, rk, bq, bk, w_q_eff, w_k_eff, heads, eps);
  });
}

Tensor vo_gauge_fix_op(const Tensor& r_v, const OptTensor& b_v, const Tensor& c_o, int64_t heads, double eps) {
  return checked("vo_gauge_fix_", [&] {
    Tensor rv = r_v, bv = opt(b_v), co = c_o;
    require_writable("vo_gauge_fix_", {{"r_v", rv}, {"b_v", bv}, {"c_o", co}});
    require_floating({{"r_v", rv}, {"b_v", bv}, {"c_o", co}});
    require_eps(eps, rv.scalar_type(), "V or O", [&] {
      return per_head(rv, heads) && per_head(co, heads) ? std::vector<Tensor>{head_rms(rv, heads), head_rms(co, heads)}
                                                        : std::vector<Tensor>{};
    });
    return vo_gauge_fix_layer(rv, bv, co, heads, eps);
  });
}

Tensor qk_effective_log_ratio_op(const Tensor& w_q_eff, const Tensor& w_k_eff, int64_t heads) {
  return checked("qk_effective_log_ratio", [&] {
    require_floating({{"w_q_eff", w_q_eff}, {"w_k_eff", w_k_eff}});
    if (w_q_eff.dim() != 2 || w_k_eff.sizes() != w_q_eff.sizes() || heads < 1 || w_q_eff.size(0) % heads != 0)
      throw std::invalid_argument("w_q_eff and w_k_eff must both be [d, in] with heads dividing d");
    return qk_effective_log_ratio_layer(w_q_eff, w_k_eff, heads);
  });
}

void transport_head_moments_op(const OptTensor& m, const OptTensor& v, const Tensor& a, int64_t heads,
                               std::string mode) {
  checked("transport_head_moments_", [&] {
    Tensor mm = opt(m), vv = opt(v);
    require_writable("transport_head_moments_", {{"m", mm}, {"v", vv}});
    require_floating({{"m", mm}, {"v", vv}, {"a", a}});
    for (const Tensor* t : {&mm, &vv})
      if (t->defined() && (t->dim() != 1 || !t->is_contiguous() || a.dim() != 1 || a.size(0) != heads ||
                           heads < 1 || t->size(0) % heads != 0))
        throw std::invalid_argument("m and v must be contiguous [d] and a [heads] with heads dividing d");
    transport_head_moments(mm, vv, a, heads, core::parse_choice(core::transport_mode_choices(), mode, "mode"));
    return 0;
  });
}

Tensor qk_cap_op(const Tensor& r_q, const Tensor& r_k, const OptTensor& b_q, const OptTensor& b_k, int64_t heads,
                 double cap) {
  return checked("qk_cap_", [&] {
    Tensor rq = r_q, rk = r_k, bq = opt(b_q), bk = opt(b_k);
    require_writable("qk_cap_", {{"r_q", rq}, {"r_k", rk}, {"b_q", bq}, {"b_k", bk}});
    require_floating({{"r_q", rq}, {"r_k", rk}, {"b_q", bq}, {"b_k", bk}});
    return qk_cap_layer(rq, rk, bq, bk, heads, cap);
  });
}

Tensor qk_clip_op(const Tensor& x_q, const Tensor& x_k, const OptTensor& b_q, const OptTensor& b_k,
                  const Tensor& logit_max, double tau) {
  return checked("qk_clip_", [&] {
    Tensor xq = x_q, xk = x_k, bq = opt(b_q), bk = opt(b_k);
    require_writable("qk_clip_", {{"x_q", xq}, {"x_k", xk}, {"b_q", bq}, {"b_k", bk}});
    require_floating({{"x_q", xq}, {"x_k", xk}, {"b_q", bq}, {"b_k", bk}, {"logit_max", logit_max}});
    return qk_clip_layer(xq, xk, bq, bk, logit_max, tau);
  });
}

Tensor attention_logit_max_op(const Tensor& q, const Tensor& k, bool absolute) {
  return checked("attention_logit_max", [&] {
    require_floating({{"q", q}, {"k", k}});
    return attention_logit_max_heads(q, k, absolute);
  });
}

void correct_attention_increments_op(const Tensor& w_attn, const Tensor& w_attn_before, const Tensor& w_proj,
                                     const Tensor& w_proj_before, const OptTensor& r_q, const OptTensor& c_q,
                                     const OptTensor& r_k, const OptTensor& c_k, const OptTensor& r_v,
                                     const OptTensor& c_v, const OptTensor& r_o, const OptTensor& c_o, int64_t heads,
                                     bool full, double damping, bool vo, bool match_rms) {
  checked("correct_attention_increments_", [&] {
    Tensor wa = w_attn, wp = w_proj;
    require_writable("correct_attention_increments_", {{"w_attn", wa}, {"w_proj", wp}});
    require_floating({{"w_attn", wa}, {"w_attn_before", w_attn_before}, {"w_proj", wp}, {"w_proj_before", w_proj_before},
                      {"r_q", opt(r_q)}, {"c_q", opt(c_q)}, {"r_k", opt(r_k)}, {"c_k", opt(c_k)}, {"r_v", opt(r_v)},
                      {"c_v", opt(c_v)}, {"r_o", opt(r_o)}, {"c_o", opt(c_o)}});
    const AttentionMultipliers m{opt(r_q), opt(c_q), opt(r_k), opt(c_k), opt(r_v), opt(c_v), opt(r_o), opt(c_o)};
    correct_attention_increments_layer(wa, w_attn_before, wp, w_proj_before, m, heads,
                                       QuotientUpdate{full, damping, vo, match_rms});
    return 0;
  });
}

void project_layer_gradients_op(const Tensor& w_attn, const OptTensor& b_attn, const Tensor& w_proj,
                                const Tensor& g_attn, const OptTensor& g_battn, const Tensor& g_proj, int64_t heads,
                                std::string mode) {
  checked("project_layer_gradients_", [&] {
    Tensor ga = g_attn, gb = opt(g_battn), gp = g_proj;
    require_writable("project_layer_gradients_", {{"g_attn", ga}, {"g_battn", gb}, {"g_proj", gp}});
    require_floating({{"w_attn", w_attn}, {"b_attn", opt(b_attn)}, {"w_proj", w_proj}, {"g_attn", ga}, {"g_battn", gb},
                      {"g_proj", gp}});
    if (opt(b_attn).defined() != gb.defined())
      throw std::invalid_argument("b_attn and g_battn must be given together");
    project_layer_gradients(w_attn, opt(b_attn), w_proj, ga, gb, gp, heads, parse_grad_projection(mode));
    return 0;
  });
}

// The hook registry (gpt2/train/hook_registry.hpp) as JSON rows {name, flags}: gaugelab.torch's attach dispatches
// on these names (a name it has no handler for is refused).
std::string step_hooks_json() {
  nlohmann::json rows = nlohmann::json::array();
  for (const StepHookRow& h : step_hook_rows()) {
    nlohmann::json flags = nlohmann::json::array();
    for (const char* f : h.flags) flags.push_back(f);
    rows.push_back({{"name", h.name}, {"flags", flags}});
  }
  return rows.dump();
}

// A multiplier placement ("default", "none", "q:row+column,k:row", ...) as {site: mode} for every site,
// parsed by the trainer's own parser (gpt2/model/config.hpp).
std::string lrm_placement_json(std::string spec) {
  return checked("lrm_placement", [&] {
    const LrmPlacement p = LrmPlacement::parse(spec);
    nlohmann::json j = nlohmann::json::object();
    for (int i = 0; i < kLrmSites; ++i) j[lrm_site_name(static_cast<LrmSite>(i))] = lrm_mode_name(p.mode[i]);
    return j.dump();
  });
}

}  // namespace
}  // namespace gaugelab::gpt2

TORCH_LIBRARY(gaugelab, m) {
  using namespace gaugelab::gpt2;
  m.def("lrm_linear(Tensor x, Tensor weight, Tensor? bias=None, Tensor? r=None, Tensor? c=None) -> Tensor",
        &lrm_linear_op);
  m.def("lrm_effective_weight(Tensor weight, Tensor? r=None, Tensor? c=None) -> Tensor", &lrm_effective_weight_op);
  m.def("head_rms(Tensor x, int heads) -> Tensor", &head_rms_op);
  m.def("rescale_qk_pair_(Tensor(a!) r_q, Tensor(b!) r_k, Tensor(c!)? b_q, Tensor(d!)? b_k, Tensor g) -> ()",
        &rescale_qk_pair_op);
  m.def("qk_gauge_fix_(Tensor(a!) r_q, Tensor(b!) r_k, Tensor(c!)? b_q, Tensor(d!)? b_k, int heads, float eps) -> Tensor",
        &qk_gauge_fix_op);
  m.def("qk_gauge_fix_effective_(Tensor(a!) r_q, Tensor(b!) r_k, Tensor(c!)? b_q, Tensor(d!)? b_k, Tensor w_q_eff, "
        "Tensor w_k_eff, int heads, float eps) -> Tensor",
        &qk_gauge_fix_effective_op);
  m.def("vo_gauge_fix_(Tensor(a!) r_v, Tensor(b!)? b_v, Tensor(c!) c_o, int heads, float eps) -> Tensor",
        &vo_gauge_fix_op);
  m.def("qk_effective_log_ratio(Tensor w_q_eff, Tensor w_k_eff, int heads) -> Tensor", &qk_effective_log_ratio_op);
  m.def("transport_head_moments_(Tensor(a!)? m, Tensor(b!)? v, Tensor a, int heads, str mode) -> ()",
        &transport_head_moments_op);
  m.def("qk_cap_(Tensor(a!) r_q, Tensor(b!) r_k, Tensor(c!)? b_q, Tensor(d!)? b_k, int heads, float cap) -> Tensor",
        &qk_cap_op);
  m.def("qk_clip_(Tensor(a!) x_q, Tensor(b!) x_k, Tensor(c!)? b_q, Tensor(d!)? b_k, Tensor logit_max, float tau) -> Tensor",
        &qk_clip_op);
  m.def("attention_logit_max(Tensor q, Tensor k, bool absolute=False) -> Tensor", &attention_logit_max_op);
  m.def("correct_attention_increments_(Tensor(a!) w_attn, Tensor w_attn_before, Tensor(b!) w_proj, "
        "Tensor w_proj_before, Tensor? r_q, Tensor? c_q, Tensor? r_k, Tensor? c_k, Tensor? r_v, Tensor? c_v, "
        "Tensor? r_o, Tensor? c_o, int heads, bool full=True, float damping=0.001, bool vo=True, "
        "bool match_rms=False) -> ()",
        &correct_attention_increments_op);
  m.def("project_layer_gradients_(Tensor w_attn, Tensor? b_attn, Tensor w_proj, Tensor(a!) g_attn, "
        "Tensor(b!)? g_battn, Tensor(c!) g_proj, int heads, str mode) -> ()",
        &project_layer_gradients_op);
  m.def("conditions() -> str", &conditions_json);
  m.def("step_hooks() -> str", &step_hooks_json);
  m.def("lrm_placement(str spec) -> str", &lrm_placement_json);
}
