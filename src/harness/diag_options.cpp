#include "harness/diag_options.hpp"
#include "harness/diag_rule_table.hpp"

#include <algorithm>
#include <cmath>

namespace gaugelab::harness {

namespace {

std::string rules_help() {
  std::string h = "update rules (harness/diag_rule_table.hpp):";
  for (const DiagRule& r : diag_rules()) h += std::string(" ") + r.name + ",";
  h.pop_back();
  return h;
}

void require_choice(const std::vector<std::string>& given, const std::vector<std::string>& allowed,
                    const std::string& flag) {
  if (given.empty()) throw io::UsageError("--" + flag + " needs at least one value");
  for (const auto& g : given) {
    if (std::find(allowed.begin(), allowed.end(), g) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      throw io::UsageError("--" + flag + ": unknown value '" + g + "' (expected one of " + list + ")");
    }
    if (std::count(given.begin(), given.end(), g) > 1) throw io::UsageError("--" + flag + ": '" + g + "' given twice");
  }
}

}  // namespace

void declare_diag_options(io::Options& opts, DiagOptions& o) {
  using io::Range;
  opts.add("checkpoint", &o.checkpoint, "checkpoint directory to take the head from (empty: random GPT-2-shaped head)")
      .add("layer", &o.layer, "checkpoint layer", Range::non_negative())
      .add("head", &o.head, "checkpoint head", Range::non_negative())
      .add("d-model", &o.d_model, "random head: model width d", Range::at_least(1))
      .add("d-head", &o.d_head, "random head: head width d_h", Range::at_least(1))
      .add("head-cond", &o.head_cond, "random head: condition number of each block's d_h mixing", Range::at_least(1))
      .add("biases", &o.biases, "Q/K/V biases (folded into the factors and gauged with them)")
      .add("causal", &o.causal, "causal mask: only logits j <= i enter the data loss")
      .add("teacher-checkpoint", &o.teacher_checkpoint,
           "with --checkpoint: the teacher is this checkpoint's head at the same layer and head (default: random)")
      .add("data", &o.data, "with --checkpoint: token file; the batch is the layer's real inputs on its tokens")
      .add("loss", &o.loss,
           "loss on the represented objects: data (logits and value-output map regressed separately), attention "
           "(the head's output through softmax attention), matrix (the products)",
           {"data", "attention", "matrix"})
      .add("tokens", &o.tokens, "rows T of the fixed batch X (data loss)", Range::at_least(1))
      .add("kappa", &o.kappa, "condition numbers of the drawn gauges (comma list)", Range::at_least(1))
      .add("families", &o.families, "gauge families: diagonal, orthogonal, general")
      .add("rules", &o.rules, rules_help())
      .add("wrappers", &o.wrappers, "quotient wrappers: none, full, diagonal, periodic, smooth")
      .add("transports", &o.transports, "state transports of adamw-warm, one variant each: none, vector, covector")
      .add("momentum-transport", &o.momentum_transport,
           "state transport of momentum's warm buffer; each: one variant per --transports mode",
           {"none", "vector", "covector", "each"})
      .add("gauges", &o.gauges, "gauge draws per (family, kappa) cell", Range::at_least(1))
      .add("step-size", &o.step_size, "relative represented motion of the reference step", Range::positive())
      .add("weight-decay", &o.weight_decay, "decoupled weight decay of every rule", Range::non_negative())
      .add("warmup", &o.warmup, "mini-batches warming the state of momentum and adamw-warm", Range::at_least(1))
      .add("momentum", &o.momentum, "SGD momentum mu", {0.0, 1.0, false, true})
      .add("beta1", &o.beta1, "AdamW beta1", {0.0, 1.0, false, true})
      .add("beta2", &o.beta2, "AdamW beta2", {0.0, 1.0, false, true})
      .add("adam-eps", &o.adam_eps, "AdamW epsilon", Range::non_negative())
      .add("muon-momentum", &o.muon_momentum, "Muon beta", {0.0, 1.0, false, true})
      .add("rp-delta", &o.rp_delta, "rpgd: the damping delta of (B^T B + delta I)^-1", Range::non_negative())
      .add("pro-delta", &o.pro_delta, "lora-pro: delta added to each Gram before its inverse", Range::non_negative())
      .add("circuit-lambda", &o.circuit_lambda, "circuit-muon: damping of the V/O trace rebalance", Range::non_negative())
      .add("damping", &o.damping, "lambda of the opposite-Gram correction", Range::non_negative())
      .add("solve", &o.solve, "Gram solve of the full correction", {"cholesky", "qr"})
      .add("period", &o.period, "k of the periodic full correction", Range::at_least(1))
      .add("between", &o.between, "periodic: correction between full steps", {"diagonal", "none"})
      .add("smooth", &o.smooth, "N gauges of random smoothing", Range::at_least(1))
      .add("steps", &o.steps, "diag trajectory: steps of every trajectory", Range::closed(1, 100000))
      .add("periods", &o.periods, "diag trajectory: periodic schedules, the full correction every k steps (k >= 2)",
           Range::closed(2, 100000))
      .add("quick", &o.quick, "demo grid in seconds (kappa 1,100,1e4,1e6; 4 gauges; warm-up 4; 16 tokens)");
  opts.check([&o] { validate_diag_options(o); });
}

void validate_diag_options(const DiagOptions& o) {
  require_choice(o.families, {"diagonal", "orthogonal", "general"}, "families");
  require_choice(o.rules, diag_rule_names(), "rules");
  require_choice(o.wrappers, {"none", "full", "diagonal", "periodic", "smooth"}, "wrappers");
  require_choice(o.transports, {"none", "vector", "covector"}, "transports");
  if (o.kappa.empty()) throw io::UsageError("--kappa needs at least one value");
  for (double k : o.kappa)
    if (!(k >= 1.0) || !std::isfinite(k) || k > 1e12)
      throw io::UsageError("--kappa values must be in [1, 1e12] (a condition number), got " + std::to_string(k));
  if (o.layer < 0 || o.head < 0) throw io::UsageError("--layer and --head must be >= 0");
  if (o.checkpoint.empty() && (!o.teacher_checkpoint.empty() || !o.data.empty()))
    throw io::UsageError("--teacher-checkpoint and --data need --checkpoint (they are read through its model)");
  if (o.checkpoint.empty() && (o.d_model < 1 || o.d_head < 1 || o.d_head > o.d_model))
    throw io::UsageError("--d-head must be in [1, --d-model]");
  if (o.gauges < 1 || o.gauges > 100000) throw io::UsageError("--gauges must be in [1, 100000]");
  if (o.smooth < 1 || o.smooth > 10000) throw io::UsageError("--smooth must be in [1, 10000]");
  if (!(o.step_size > 0.0 && o.step_size < 1.0)) throw io::UsageError("--step-size must be in (0, 1)");
  if (o.tokens < 1 || o.warmup < 1 || o.period < 1) throw io::UsageError("--tokens, --warmup and --period must be >= 1");
  for (double k : o.periods)
    if (k != std::floor(k)) throw io::UsageError("--periods values must be whole numbers of steps, got " + std::to_string(k));
}

void apply_quick(DiagOptions& o, const std::vector<std::string>& given) {
  if (!o.quick) return;
  const auto has = [&given](const char* n) { return std::find(given.begin(), given.end(), n) != given.end(); };
  if (!has("kappa")) o.kappa = {1, 100, 1e4, 1e6};
  if (!has("gauges")) o.gauges = 4;
  if (!has("warmup")) o.warmup = 4;
  if (!has("tokens")) o.tokens = 16;
}

}  // namespace gaugelab::harness
