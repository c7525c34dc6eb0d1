// `gaugelab hessian CKPT --data FILE --out LOG.h5` (api.hpp): curvature along the gauge orbits and the
// quotient sharpness, at the checkpoint and under random gauges.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>

#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/randn.h>
#include <ATen/CPUGeneratorImpl.h>

#include "core/gauge_sampling.hpp"
#include "core/random.hpp"
#include "data/token_files.hpp"
#include "gpt2/inspect/layer_tensors.hpp"
#include "gpt2/landscape/api.hpp"
#include "gpt2/landscape/log_columns.hpp"
#include "io/elapsed.hpp"
#include "gpt2/landscape/hessian.hpp"
#include "gpt2/model/head_projection.hpp"
#include "gpt2/model/runtime.hpp"
#include "gpt2/use/loaded_model.hpp"
#include "io/options.hpp"
#include "io/run_log.hpp"

namespace gaugelab::gpt2 {

namespace {

using at::Tensor;
using landscape_log::f;
using landscape_log::i;
using landscape_log::s;
using io::seconds_since;

/// The fixed batch: B windows of T + 1 tokens spread evenly over the file, as model ids [B, T + 1].
Tensor fixed_batch(const LoadedModel& lm, const std::string& data, std::int64_t B, std::int64_t T) {
  const data::MappedTokens file = data::MappedTokens::open(token_file_of(data));
  const auto span = static_cast<std::size_t>(T + 1);
  if (file.size() < span)
    throw std::runtime_error(data + ": " + std::to_string(file.size()) + " tokens, fewer than one sequence of " +
                             std::to_string(span));
  const auto tokens = file.tokens();
  lm.ids.check_tokens(tokens, data);  // the whole file: one line naming both
  std::vector<std::int64_t> ids;
  for (std::int64_t b = 0; b < B; ++b) {
    const std::size_t start = B <= 1 ? 0 : (file.size() - span) * static_cast<std::size_t>(b) / static_cast<std::size_t>(B - 1);
    for (std::size_t t = 0; t < span; ++t) ids.push_back(lm.ids.to_model(tokens[start + t], data));
  }
  return at::from_blob(ids.data(), {B, T + 1}, at::TensorOptions().dtype(at::kLong)).clone().to(lm.device);
}

/// A general element of the attention gauge group for every layer: S_i, C_i of condition number κ and a permutation.
void apply_random_gauge(GPT& m, core::Rng& rng, double kappa) {
  const std::int64_t H = m.config().n_head, dh = m.config().head_dim();
  for (std::int64_t l = 0; l < m.config().n_layer; ++l) {
    core::LayerGauge<double> g;
    for (std::int64_t h = 0; h < H; ++h) {
      g.s.push_back(core::random_gl<double>(rng, dh, kappa));
      g.c.push_back(core::random_gl<double>(rng, dh, kappa));
    }
    g.perm = core::random_permutation(rng, H);
    apply_layer_gauge(m, l, g);
  }
}

double dot_f64(const Tensor& a, const Tensor& b) { return (a * b).sum().item<double>(); }

}  // namespace

HessianResult run_hessian(const HessianOptions& o, io::Provenance prov) {
  if (o.checkpoint.empty()) throw io::UsageError("hessian: no checkpoint given");
  if (o.data.empty()) throw io::UsageError("hessian: --data FILE is required (the batch the loss is taken on)");
  if (o.run.out.empty()) throw io::UsageError("hessian: --out LOG.h5 is required");
  (void)token_file_of(o.data);
  io::prepare_output_path(o.run.out, o.run.force, {o.checkpoint, o.data});
  prov.threads = apply_torch_threads(o.run.threads);
  std::cerr << "threads    " << prov.threads << "\n";
  const auto t0 = std::chrono::steady_clock::now();
  LoadedModel lm = load_for_run(o.checkpoint, ModelRunOptions{o.device, Precision::fp32, "default"});
  GPT& model = *lm.model;
  try {
    require_projectable([&] {  // the quotient is taken after folding: only QK-norm can stand in its way
      ModelConfig c = model.config();
      c.lrm = LrmPlacement::none();
      return c;
    }());
  } catch (const std::invalid_argument& e) {
    throw io::UsageError(std::string("hessian: ") + e.what());
  }
  const std::int64_t T = o.seq_len > 0 ? o.seq_len : model.config().block_size;
  if (T > model.config().block_size)
    throw io::UsageError("--seq-len " + std::to_string(T) + " exceeds the context " + std::to_string(model.config().block_size));
  const Tensor batch = fixed_batch(lm, o.data, o.batch_size, T);
  const Tensor idx = batch.narrow(1, 0, T), targets = batch.narrow(1, 1, T);
  model.merge_multipliers();
  const std::vector<Tensor> pristine = snapshot(model);

  prov.kind = "gpt2/hessian";
  io::RunLog log = io::RunLog::create(o.run.out, prov, o.run.force);
  log.declare_table("curvature", {i("gauge"), i("layer"), i("head"), s("kind"), f("rayleigh"), f("vhv"), f("grad_dot_acc"),
                                  f("identity_rel_err")});
  log.declare_table("spectrum", {i("gauge"), s("space"), i("rank"), f("eigenvalue")});
  log.declare_table("cost", {i("gauge"), s("space"), i("products"), f("seconds")});
  log.declare_table("loss", {i("gauge"), f("loss"), f("grad_norm")});
  log.start();

  HessianResult res;
  core::Rng rng(o.run.seed);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(o.run.seed + 1);
  const auto f64 = at::TensorOptions().dtype(at::kDouble);
  const std::int64_t L = model.config().n_layer, H = model.config().n_head, dh = model.config().head_dim();
  double hvp_seconds = 0;    // the full spectra's time and products: the cost of one Hessian-vector product
  std::int64_t hvp_count = 0;
  std::int64_t dim = 0;
  std::cout << std::setprecision(5);
  for (std::int64_t g = 0; g <= o.gauges; ++g) {
    restore(model, pristine);
    if (g > 0) apply_random_gauge(model, rng, o.gauge_kappa);
    const LossHessian hess(model, idx, targets);
    const double gnorm = hess.gradient().norm().item<double>();
    dim = hess.dim();
    log.append_row("loss", {g, hess.loss(), gnorm});
    if (g == 0) res.loss = hess.loss();
    // Rayleigh quotients per head: a random algebra element's tangent, a random direction of the head's blocks
    // (the tangent's support), and that direction's horizontal part
    for (std::int64_t l = 0; l < L; ++l)
      for (std::int64_t h = 0; h < H; ++h) {
        const Tensor x = at::randn({dh, dh}, gen, f64), y = at::randn({dh, dh}, gen, f64);
        const OrbitJet jet = head_orbit_jet(model, hess, l, h, x, y);
        const Tensor v = jet.tangent;
        const double vhv = dot_f64(v, hess.hvp(v));
        const double ga = dot_f64(hess.gradient(), jet.acceleration);
        const double vv = dot_f64(v, v);
        log.append_row("curvature", {g, l, h, std::string("vertical"), vhv / vv, vhv, ga,
                                     std::abs(vhv + ga) / (std::abs(vhv) + std::abs(ga) + 1e-300)});
        const Tensor support = (v != 0).to(at::kDouble);
        const Tensor r = at::randn({hess.dim()}, gen, f64) * support;
        const Tensor rh = horizontal_projection(model, hess, r);
        const double rhr = dot_f64(r, hess.hvp(r)), hhh = dot_f64(rh, hess.hvp(rh)), nan = std::nan("");
        log.append_row("curvature", {g, l, h, std::string("random"), rhr / dot_f64(r, r), rhr, nan, nan});
        log.append_row("curvature", {g, l, h, std::string("horizontal"), hhh / dot_f64(rh, rh), hhh, nan, nan});
      }
    // the spectra
    for (const std::string space : {"full", "quotient", "metric"}) {
      std::int64_t products = 0;
      const auto t1 = std::chrono::steady_clock::now();
      using Op = std::function<Tensor(const Tensor&)>;
      const Op op = space == "full"       ? Op([&](const Tensor& v) { return hess.hvp(v); })
                    : space == "quotient" ? Op([&](const Tensor& v) {
                                              return horizontal_projection(model, hess, hess.hvp(horizontal_projection(model, hess, v)));
                                            })
                                          : Op([&](const Tensor& v) {  // M^{-1/2} H M^{-1/2}: gauge-invariant spectrum
                                              return metric_inverse_sqrt(model, hess, hess.hvp(metric_inverse_sqrt(model, hess, v)));
                                            });
      const std::vector<double> ev = top_eigenvalues(hess.dim(), op, o.top_k, products, o.lanczos_tol, 200, o.run.seed + 7);
      const double secs = seconds_since(t1);
      hvp_seconds += space == "full" ? secs : 0;
      hvp_count += space == "full" ? products : 0;
      for (std::size_t k = 0; k < ev.size(); ++k)
        log.append_row("spectrum", {g, space, static_cast<std::int64_t>(k + 1), ev[k]});
      log.append_row("cost", {g, space, products, secs});
      const double lam = ev.front();
      double& ref = space == "full" ? res.lambda_full : space == "quotient" ? res.lambda_quotient : res.lambda_metric;
      double& worst = space == "full"       ? res.full_change_max
                      : space == "quotient" ? res.quotient_change_max
                                            : res.metric_change_max;
      if (g == 0) ref = lam;
      else worst = std::max(worst, std::abs(lam - ref) / std::abs(ref));
      std::cout << "gauge " << g << (g == 0 ? " (as loaded)" : "") << "  " << std::left << std::setw(8) << space
                << std::right << " lambda_max " << lam;
      for (std::size_t k = 1; k < ev.size(); ++k) std::cout << "  lambda_" << k + 1 << " " << ev[k];  // the rest of --top-k
      std::cout << "  (" << products << " products, " << std::fixed
                << std::setprecision(1) << secs << " s)" << std::defaultfloat << std::setprecision(5) << "  loss "
                << hess.loss() << "\n";
    }
  }
  res.seconds_per_hvp = hvp_count > 0 ? hvp_seconds / static_cast<double>(hvp_count) : 0;
  log.set_summary("loss", res.loss);
  log.set_summary("dim", dim);
  log.set_summary("lambda_full", res.lambda_full);
  log.set_summary("lambda_quotient", res.lambda_quotient);
  log.set_summary("full_change_max", res.full_change_max);
  log.set_summary("quotient_change_max", res.quotient_change_max);
  log.set_summary("lambda_metric", res.lambda_metric);
  log.set_summary("metric_change_max", res.metric_change_max);
  log.set_summary("seconds_per_hvp", res.seconds_per_hvp);
  log.set_summary("seconds", seconds_since(t0));
  log.close();
  std::cout << "change     over " << o.gauges << " gauges (kappa " << o.gauge_kappa << "): full "
            << res.full_change_max << ", quotient " << res.quotient_change_max << ", metric " << res.metric_change_max
            << " (largest relative)\n"
            << "cost       " << res.seconds_per_hvp << " s per Hessian-vector product\nlog        " << o.run.out << "\n";
  return res;
}

}  // namespace gaugelab::gpt2
