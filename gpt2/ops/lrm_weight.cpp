#include "gpt2/ops/lrm_weight.hpp"

#include <stdexcept>
#include <string>

#include <ATen/ops/linear.h>

namespace gaugelab::gpt2 {

namespace {

std::string shape(const at::Tensor& t) {
  std::string s = "[";
  for (std::int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.size(i));
  return s + "]";
}

}  // namespace

at::Tensor lrm_effective_weight(const at::Tensor& w, const at::Tensor& r, const at::Tensor& c) {
  if (!w.defined() || w.dim() != 2) throw std::invalid_argument("weight must be [out, in]");
  const std::int64_t out = w.size(0), in = w.size(1);
  if (r.defined() && (r.dim() != 1 || r.size(0) != out))
    throw std::invalid_argument("r must be [" + std::to_string(out) + "] (got " + shape(r) + ")");
  if (c.defined() && !(c.dim() == 1 && c.size(0) == in) &&
      !(c.dim() == 2 && c.size(1) == in && c.size(0) >= 1 && out % c.size(0) == 0))
    throw std::invalid_argument("c must be [" + std::to_string(in) + "] or [groups, " + std::to_string(in) +
                                "] with groups dividing " + std::to_string(out) + " (got " + shape(c) + ")");
  at::Tensor e = w;
  if (r.defined()) e = e.mul(r.unsqueeze(1));  // diag(r)·W̄
  if (!c.defined()) return e;
  if (c.dim() == 1) return e.mul(c.unsqueeze(0));  // ·diag(c)
  const std::int64_t G = c.size(0);
  return e.reshape({G, out / G, in}).mul(c.unsqueeze(1)).reshape({out, in});  // group g's rows ·diag(c_g)
}

at::Tensor lrm_linear(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, const at::Tensor& r,
                      const at::Tensor& c) {
  if (b.defined() && (b.dim() != 1 || b.size(0) != w.size(0)))
    throw std::invalid_argument("bias must be [" + std::to_string(w.size(0)) + "] (got " + shape(b) + ")");
  if (x.dim() < 1 || x.size(-1) != w.size(1))
    throw std::invalid_argument("input must be [..., " + std::to_string(w.size(1)) + "] (got " + shape(x) + ")");
  return at::linear(x, lrm_effective_weight(w, r, c), b);
}

}  // namespace gaugelab::gpt2
