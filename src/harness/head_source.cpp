#include "harness/head_source.hpp"

#include <cmath>
#include <stdexcept>

#include "core/eigen_products.hpp"
#include "core/gauge_sampling.hpp"
#include "core/random.hpp"

namespace gaugelab::harness {

using core::Mat;

core::AttentionHead<double> random_head(const RandomHeadOptions& o) {
  if (o.d_model < 1 || o.d_head < 1) throw std::invalid_argument("random_head: d_model and d_head must be >= 1");
  if (!(o.cond >= 1.0) || !std::isfinite(o.cond)) throw std::invalid_argument("random_head: cond must be finite and >= 1");
  core::Rng rng(o.seed);
  const auto d = static_cast<core::Index>(o.d_model), r = static_cast<core::Index>(o.d_head);
  const double sd = 1.0 / std::sqrt(static_cast<double>(d)), so = 1.0 / std::sqrt(static_cast<double>(r));
  core::AttentionHead<double> h;
  h.W_q = core::randn<double>(rng, d, r, sd) * core::random_gl<double>(rng, r, o.cond);  // [d, r]
  h.W_k = core::randn<double>(rng, d, r, sd) * core::random_gl<double>(rng, r, o.cond);  // [d, r]
  h.W_v = core::randn<double>(rng, d, r, sd) * core::random_gl<double>(rng, r, o.cond);  // [d, r]
  h.W_o = core::random_gl<double>(rng, r, o.cond) * core::randn<double>(rng, r, d, so);  // [r, d]
  h.b_q = core::randn<double>(rng, 1, r, 0.1);
  h.b_k = core::randn<double>(rng, 1, r, 0.1);
  h.b_v = core::randn<double>(rng, 1, r, 0.1);
  if (!o.biases) {
    h.b_q.setZero();
    h.b_k.setZero();
    h.b_v.setZero();
  }
  return h;
}

void require_loader(const std::string& checkpoint, const CheckpointHeadLoader& loader) {
  if (!checkpoint.empty() && !loader)
    throw std::runtime_error("this build cannot read checkpoints (its front door has no GPT-2 checkpoint-head "
                             "loader); --checkpoint '" + checkpoint + "' needs the GPT-2 tier");
}

core::AttentionHead<double> resolve_head(const std::string& checkpoint, std::int64_t layer, std::int64_t head,
                                         const RandomHeadOptions& random, const CheckpointHeadLoader& loader) {
  if (checkpoint.empty()) return random_head(random);
  require_loader(checkpoint, loader);
  core::AttentionHead<double> h = loader(checkpoint, layer, head);
  core::require_head(h, "checkpoint head");
  const bool finite = h.W_q.allFinite() && h.W_k.allFinite() && h.W_v.allFinite() && h.W_o.allFinite() &&
                      h.b_q.allFinite() && h.b_k.allFinite() && h.b_v.allFinite();
  if (!finite)
    throw std::runtime_error("checkpoint '" + checkpoint + "' layer " + std::to_string(layer) + " head " +
                             std::to_string(head) + " has non-finite weights");
  if (h.d_k() != h.d_v())
    throw std::runtime_error("checkpoint head has d_k = " + std::to_string(h.d_k()) + " != d_v = " +
                             std::to_string(h.d_v()) + "; the harness draws one d_h for both sectors");
  return h;
}

}  // namespace gaugelab::harness
