// Small grids for the harness tests: GPT-2's structure (biases, causal mask, both sectors) at sizes
// that run in milliseconds, and a lookup of one row of a run.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "harness/diag_run.hpp"

namespace gaugelab::test {

/// d = 48, d_h = 8, 16 tokens, 6 gauges, one family and κ list as given.
inline harness::DiagOptions small_options(std::vector<std::string> families, std::vector<double> kappa,
                                          std::vector<std::string> rules, std::vector<std::string> wrappers) {
  harness::DiagOptions o;
  o.d_model = 48;
  o.d_head = 8;
  o.tokens = 16;
  o.gauges = 6;
  o.warmup = 3;
  o.smooth = 4;
  o.families = std::move(families);
  o.kappa = std::move(kappa);
  o.rules = std::move(rules);
  o.wrappers = std::move(wrappers);
  return o;
}

inline core::AttentionHead<double> small_head(const harness::DiagOptions& o, std::uint64_t seed = 7) {
  harness::RandomHeadOptions h;
  h.d_model = o.d_model;
  h.d_head = o.d_head;
  h.cond = o.head_cond;
  h.biases = o.biases;
  h.seed = seed;
  return harness::random_head(h);
}

/// The row (family, κ, rule, wrapper, transport); fails the test if absent.
inline const harness::CellRow& row(const harness::DiagRun& run, const std::string& family, double kappa,
                                   const std::string& rule, const std::string& wrapper,
                                   const std::string& transport = "-") {
  for (const auto& c : run.cells) {
    if (c.spec.family != family || c.spec.kappa != kappa) continue;
    for (const auto& r : c.rows)
      if (r.rule == rule && r.wrapper == wrapper && r.transport == transport) return r;
  }
  FAIL("no row " << family << " kappa=" << kappa << " " << rule << "/" << transport << " " << wrapper);
  static harness::CellRow none;
  return none;
}

}  // namespace gaugelab::test
