#include "harness/diag_run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "harness/diag_rule_table.hpp"
#include "io/run_log.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace gaugelab::harness {

/// The inner loop allocates and frees [d, r] temporaries at a high rate; glibc would return each to
/// the kernel (mmap/munmap, trims) and fault it back in. Keeping them in the heap costs no memory
/// the run does not use anyway and removed ~10 % of the run time (page faults) in a profile.
void keep_freed_memory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
}

RandomHeadOptions random_options(const DiagOptions& o, std::uint64_t seed) {
  RandomHeadOptions r;
  r.d_model = o.d_model;
  r.d_head = o.d_head;
  r.cond = o.head_cond;
  r.biases = o.biases;
  r.seed = core::splitmix_at(seed, 1);
  return r;
}

namespace {

std::vector<io::Column> spread_columns() {
  using io::Column;
  using io::DType;
  std::vector<Column> c = {{"rule", DType::str, 16}, {"transport", DType::str, 16}, {"wrapper", DType::str, 16},
                           {"kappa", DType::f64, 0}, {"family", DType::str, 16}};
  for (const char* m : {"first_order_spread", "exact_spread", "loss_spread", "increment_spread", "forward_error"}) {
    c.push_back({std::string(m) + "_median", DType::f64, 0});
    c.push_back({std::string(m) + "_max", DType::f64, 0});
  }
  for (const char* m : {"lr", "loss_before", "loss_after_ref"}) c.push_back({m, DType::f64, 0});
  c.push_back({"gauges", DType::i64, 0});
  c.push_back({"failures", DType::i64, 0});
  return c;
}

io::Row spread_row(const CellResult& cell, const CellRow& r, double loss_before, std::int64_t gauges) {
  return {r.rule, r.transport, r.wrapper, cell.spec.kappa, cell.spec.family, r.first.median, r.first.max,
          r.exact.median, r.exact.max, r.loss.median, r.loss.max, r.increment.median, r.increment.max,
          cell.forward.median, cell.forward.max, r.lr, loss_before, r.loss_after_ref, gauges, r.failures};
}

std::string g3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%9.2e", v);
  return buf;
}

/// Max of the first-order spread of (rule, transport, wrapper) over the cells that `keep` accepts.
double max_first(const DiagRun& run, const std::string& rule, const std::string& wrapper, bool (*keep)(const CellSpec&)) {
  double m = std::nan("");
  for (const auto& c : run.cells) {
    if (!keep(c.spec)) continue;
    for (const auto& r : c.rows)
      if (r.rule == rule && r.wrapper == wrapper && (r.transport == "-" || r.transport == "covector"))
        m = std::isnan(m) ? r.first.max : std::max(m, r.first.max);
  }
  return m;
}

}  // namespace

std::vector<CellSpec> grid_cells(const DiagOptions& o, std::uint64_t seed) {
  std::vector<CellSpec> cells;
  for (std::size_t f = 0; f < o.families.size(); ++f) {
    const std::string& fam = o.families[f];
    const std::uint64_t fs = core::splitmix_at(seed, 1000 + f);
    if (fam == "orthogonal") {
      cells.push_back({fam, 1.0, core::splitmix_at(fs, 0)});
      continue;
    }
    for (std::size_t k = 0; k < o.kappa.size(); ++k) cells.push_back({fam, o.kappa[k], core::splitmix_at(fs, k + 1)});
  }
  return cells;
}

DiagRun run_grid(const DiagOptions& o, const core::AttentionHead<double>& head, std::uint64_t seed) {
  validate_diag_options(o);
  keep_freed_memory();
  const EigenSingleThread one_eigen_thread;
  const HeadDiagnostic diag(o, head, seed);
  DiagRun run;
  run.head_source = "random";
  run.loss_before = diag.loss_before();
  const auto t0 = std::chrono::steady_clock::now();
  for (const auto& c : grid_cells(o, seed)) run.cells.push_back(diag.run_cell(c));
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const auto& c : run.cells) run.forward_error_max = std::max(run.forward_error_max, c.forward.max);
  return run;
}

DiagHead prepare_diag_run(const DiagOptions& o, const io::RunFlags& flags, const CheckpointHeadLoader& loader,
                          const CheckpointInputsLoader& inputs) {
  validate_diag_options(o);
  DiagHead out{resolve_head(o.checkpoint, o.layer, o.head, random_options(o, flags.seed), loader), {}};
  if (!o.teacher_checkpoint.empty()) out.data.teacher = resolve_head(o.teacher_checkpoint, o.layer, o.head, {}, loader);
  if (!o.data.empty()) {
    if (!inputs) throw std::runtime_error("this build cannot read checkpoints (--data needs the GPT-2 tier)");
    out.data.rows = inputs(o.checkpoint, o.layer, o.data, o.tokens * (1 + o.warmup));
  }
  io::prepare_output_path(flags.out, flags.force);
  keep_freed_memory();
  return out;
}

DiagRun run_diag_heads(const DiagOptions& o, const io::RunFlags& flags, const io::Provenance& prov,
                       const CheckpointHeadLoader& loader, const CheckpointInputsLoader& inputs) {
  const auto [head, data] = prepare_diag_run(o, flags, loader, inputs);
  const EigenSingleThread one_eigen_thread;
  auto log = io::RunLog::create(flags.out, prov, flags.force);
  log.declare_table("spread", spread_columns());
  log.start();

  const HeadDiagnostic diag(o, head, flags.seed, data);
  DiagRun run;
  run.head_source = o.checkpoint.empty()
                        ? "random"
                        : o.checkpoint + " layer " + std::to_string(o.layer) + " head " + std::to_string(o.head) +
                              (o.teacher_checkpoint.empty() ? "" : ", teacher " + o.teacher_checkpoint) +
                              (o.data.empty() ? "" : ", inputs from " + o.data);
  run.loss_before = diag.loss_before();
  const auto cells = grid_cells(o, flags.seed);
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < cells.size(); ++i) {
    run.cells.push_back(diag.run_cell(cells[i]));
    for (const auto& r : run.cells.back().rows) log.append_row("spread", spread_row(run.cells.back(), r, run.loss_before, o.gauges));
    std::cerr << "  cell " << i + 1 << "/" << cells.size() << ": " << cells[i].family << " kappa=" << cells[i].kappa << "\n";
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const auto& c : run.cells) run.forward_error_max = std::max(run.forward_error_max, c.forward.max);

  std::int64_t failures = 0;
  for (const auto& c : run.cells)
    for (const auto& r : c.rows) failures += r.failures;
  log.set_summary("head_source", run.head_source);
  log.set_summary("loss_before", run.loss_before);
  log.set_summary("seconds", run.seconds);
  log.set_summary("cells", static_cast<std::int64_t>(run.cells.size()));
  log.set_summary("rows", static_cast<std::int64_t>(log.table_rows("spread")));
  log.set_summary("failures", failures);
  log.set_summary("forward_error_max", run.forward_error_max);
  for (const std::string& rule : o.rules)  // what each rule's source states (diag_rule_table.hpp), for the tables
    log.set_summary("invariance_" + rule, std::string(diag_rule(rule).invariance));
  const auto small = [](const CellSpec& c) { return c.kappa <= 100.0; };
  const auto any = [](const CellSpec&) { return true; };
  const auto orth = [](const CellSpec& c) { return c.family == "orthogonal"; };
  log.set_summary("sgd_full_first_order_max_kappa_le_100", max_first(run, "sgd", "full", small));
  log.set_summary("sgd_full_first_order_max", max_first(run, "sgd", "full", any));
  log.set_summary("sgd_none_first_order_max", max_first(run, "sgd", "none", any));
  log.set_summary("muon_none_first_order_max_orthogonal", max_first(run, "muon", "none", orth));
  log.set_summary("muon_none_first_order_max", max_first(run, "muon", "none", any));
  log.close();
  return run;
}

std::string format_diag_summary(const DiagRun& run, const DiagOptions& o) {
  std::ostringstream os;
  const double kmax = *std::max_element(o.kappa.begin(), o.kappa.end());
  const bool has_general = std::find(o.families.begin(), o.families.end(), "general") != o.families.end();
  const std::string fam = has_general ? "general" : o.families.front();
  os << "head: " << run.head_source << "   loss before the step: " << run.loss_before << "   grid: " << run.cells.size()
     << " cells x " << o.gauges << " gauges in " << run.seconds << " s\n";
  os << "forward error (logits, head output) max over all gauges: " << g3(run.forward_error_max) << "\n\n";
  os << "first-order spread ||dM(S) - dM(I)||/||dM(I)||, max over gauges, family " << fam << " at kappa = " << kmax
     << "  [orthogonal family]\n";
  os << "  " << std::string(22, ' ');
  for (const auto& w : o.wrappers) os << " " << std::string(w.size() < 21 ? 21 - w.size() : 0, ' ') << w;
  os << "\n";
  const CellResult* top = nullptr;
  const CellResult* ortho = nullptr;
  for (const auto& c : run.cells) {
    if (c.spec.family == fam && c.spec.kappa == kmax) top = &c;
    if (c.spec.family == "orthogonal") ortho = &c;
  }
  if (top) {
    const std::size_t W = o.wrappers.size();
    for (std::size_t i = 0; i < top->rows.size(); i += W) {
      const auto& r0 = top->rows[i];
      std::string name = r0.rule + (r0.transport == "-" ? "" : "/" + r0.transport);
      os << "  " << name << std::string(name.size() < 22 ? 22 - name.size() : 0, ' ');
      for (std::size_t w = 0; w < W; ++w) {
        os << " " << g3(top->rows[i + w].first.max);
        os << (ortho ? " [" + g3(ortho->rows[i + w].first.max) + "]" : std::string(12, ' '));
      }
      os << "\n";
    }
  }
  std::int64_t failures = 0;
  for (const auto& c : run.cells)
    for (const auto& r : c.rows) failures += r.failures;
  if (failures > 0)
    os << "\n" << failures << " gauge steps failed (Gram not numerically positive definite, or a rule error); "
       << "their rows count them in 'failures'\n";
  return os.str();
}

}  // namespace gaugelab::harness
