// `diag trajectory`: multi-step runs from gauge-equivalent starts (seed 003 §7's question, "how often is the
// full correction needed?"). HeadDiagnostic::run_trajectory_cell steps the reference and every gauge image of a
// cell side by side under each correction schedule; the runner writes /tables/trajectory.
#include "harness/diag_trajectory.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <limits>
#include <stdexcept>

#include "core/eigen_products.hpp"
#include "harness/diag_run.hpp"

namespace gaugelab::harness {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// The represented objects on the batch X̃ [T, d(+1)]: logits X̃·A_Q·B_Qᵀ·X̃ᵀ [T, T] and the value-output map
/// X̃·A_V·W_o [T, d], through r-wide products only (never the [d+1, d+1] products).
struct OnBatch {
  Mat<double> logits, output;
};

OnBatch on_batch(const Mat<double>& xt, const HeadFactors& f) {
  const Mat<double> qa = xt * f[kQA], qb = xt * f[kQB], va = xt * f[kVA];  // [T, r] each
  return {qa * qb.transpose(), va * f[kVB].transpose()};
}

double distance2(const OnBatch& a, const OnBatch& b) {
  return (a.logits - b.logits).squaredNorm() + (a.output - b.output).squaredNorm();
}

struct Schedule {
  std::string name;          // none | full | periodic
  std::int64_t period = 0;   // full every `period` steps (1 for full, 0 for none)
};

std::vector<Schedule> schedules(const std::vector<std::int64_t>& periods) {
  std::vector<Schedule> s = {{"none", 0}, {"full", 1}};
  for (auto k : periods) s.push_back({"periodic", k});
  return s;
}

}  // namespace

TrajectoryCell HeadDiagnostic::run_trajectory_cell(const CellSpec& c, std::int64_t steps,
                                                   const std::vector<std::int64_t>& periods) const {
  const Index r = head_.d_k();
  const std::size_t G = static_cast<std::size_t>(o_.gauges);
  const Mat<double>& xt = problem_.input();
  const bool between_diag = o_.between == "diagonal";
  // The step's increment at `at` under schedule s at step t (full on t ≡ 0 mod k, o.between otherwise).
  const auto wrap = [&](const Schedule& s, std::int64_t t, const HeadFactors& at, const HeadFactors& raw) {
    if (s.period == 0) return raw;
    if (t % s.period == 0) return opposite_gram(at, raw, full_);
    return between_diag ? opposite_gram(at, raw, diag_) : raw;
  };
  // One trajectory: `steps` steps from (F, st) at learning rate lr; the represented objects after each.
  const auto run = [&](std::size_t v, const Schedule& s, HeadFactors F, HeadStates st, double lr) {
    std::vector<OnBatch> out;
    out.reserve(static_cast<std::size_t>(steps) + 1);
    out.push_back(on_batch(xt, F));
    for (std::int64_t t = 0; t < steps; ++t) {
      const HeadFactors raw = propose_head(variants_[v], F, problem_.gradient(F), st);
      const HeadFactors u = wrap(s, t, F, raw);
      F = stepped(F, u, coefs_at(v, F, u, lr));
      out.push_back(on_batch(xt, F));
    }
    return out;
  };
  std::vector<GaugePair> gauges(G);
  for (std::size_t g = 0; g < G; ++g) {  // the same draws as run_cell's
    core::Rng rng(core::splitmix_at(c.seed, g + 1));
    gauges[g].S = draw_gauge(c.family, c.kappa, r, rng);
    gauges[g].T = draw_gauge(c.family, c.kappa, r, rng);
  }
  TrajectoryCell cell{c, {}};
  for (std::size_t v = 0; v < variants_.size(); ++v) {
    const RuleVariant& var = variants_[v];
    for (const Schedule& s : schedules(periods)) {
      TrajectoryRow row{var.rule, var.transport, s.name, s.period, kNaN, {}, 0};
      std::vector<OnBatch> ref;
      try {  // lr from the reference's first (wrapped) increment, as run_cell calibrates
        HeadStates st = warm_[v];
        const HeadFactors u0 = wrap(s, 0, base_, propose_head(var, base_, problem_.gradient(base_), st));
        row.lr = o_.step_size * std::sqrt(m_norm2_ / first_order_norm2(reference_grams(base_, base_gram_, u0)));
        ref = run(v, s, base_, warm_[v], row.lr);
      } catch (const std::exception&) {
        row.failures = static_cast<std::int64_t>(G);
        row.separation.assign(static_cast<std::size_t>(steps), Spread{kNaN, kNaN, 0});
        cell.rows.push_back(std::move(row));
        continue;
      }
      // sep[t][g]: separation of gauge g after step t + 1.
      std::vector<std::vector<double>> sep(static_cast<std::size_t>(steps), std::vector<double>(G, kNaN));
      std::vector<char> failed(G, 0);
#pragma omp parallel for schedule(dynamic, 1)
      for (std::size_t g = 0; g < G; ++g) {
        try {
          HeadStates st = warm_[v];
          if (var.warm) transport_states(st, gauges[g].S, gauges[g].T, var.mode);
          const auto traj = run(v, s, gauge_image(base_, gauges[g]), st, row.lr);
          for (std::int64_t t = 1; t <= steps; ++t) {
            const auto k = static_cast<std::size_t>(t);
            sep[k - 1][g] = std::sqrt(distance2(traj[k], ref[k]) / distance2(ref[k], ref[0]));
          }
        } catch (const std::exception&) {
          failed[g] = 1;
        }
      }
      for (char f : failed) row.failures += f;
      for (auto& at_t : sep) row.separation.push_back(summarise(at_t));
      cell.rows.push_back(std::move(row));
    }
  }
  return cell;
}

std::vector<io::Column> trajectory_columns() {
  using io::Column;
  using io::DType;
  return {{"rule", DType::str, 16},       {"transport", DType::str, 16}, {"schedule", DType::str, 16},
          {"period", DType::i64, 0},      {"kappa", DType::f64, 0},      {"family", DType::str, 16},
          {"step", DType::i64, 0},        {"separation_median", DType::f64, 0},
          {"separation_max", DType::f64, 0}, {"lr", DType::f64, 0},      {"gauges", DType::i64, 0},
          {"failures", DType::i64, 0}};
}

TrajectoryRun run_diag_trajectory(const DiagOptions& o, const io::RunFlags& flags, const io::Provenance& prov,
                                  const CheckpointHeadLoader& loader, const CheckpointInputsLoader& inputs) {
  const auto [head, data] = prepare_diag_run(o, flags, loader, inputs);
  const EigenSingleThread one_eigen_thread;
  auto log = io::RunLog::create(flags.out, prov, flags.force);
  log.declare_table("trajectory", trajectory_columns());
  log.start();
  const HeadDiagnostic diag(o, head, flags.seed, data);
  std::vector<std::int64_t> periods;
  for (double k : o.periods) periods.push_back(static_cast<std::int64_t>(k));
  TrajectoryRun run;
  const auto cells = grid_cells(o, flags.seed);
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < cells.size(); ++i) {
    run.cells.push_back(diag.run_trajectory_cell(cells[i], o.steps, periods));
    for (const auto& row : run.cells.back().rows)
      for (std::size_t t = 0; t < row.separation.size(); ++t)
        log.append_row("trajectory", {row.rule, row.transport, row.schedule, row.period, cells[i].kappa,
                                      cells[i].family, static_cast<std::int64_t>(t + 1), row.separation[t].median,
                                      row.separation[t].max, row.lr, o.gauges, row.failures});
    std::cerr << "  cell " << i + 1 << "/" << cells.size() << ": " << cells[i].family << " kappa=" << cells[i].kappa << "\n";
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  log.set_summary("loss_before", diag.loss_before());
  log.set_summary("seconds", run.seconds);
  log.set_summary("cells", static_cast<std::int64_t>(run.cells.size()));
  log.set_summary("steps", o.steps);
  log.close();
  return run;
}

std::string format_trajectory_summary(const TrajectoryRun& run, const DiagOptions& o) {
  std::ostringstream os;
  os << "separation of the represented trajectories after " << o.steps
     << " steps (median over gauges; 0 = gauge-independent), " << run.seconds << " s\n";
  for (const auto& c : run.cells) {
    os << "  " << c.spec.family << " kappa=" << c.spec.kappa << "\n";
    for (const auto& r : c.rows) {
      std::string name = r.rule + (r.transport != "-" ? "/" + r.transport : "") + " " + r.schedule +
                         (r.schedule == "periodic" ? " k=" + std::to_string(r.period) : "");
      char buf[64];
      std::snprintf(buf, sizeof buf, "%9.2e", r.separation.empty() ? kNaN : r.separation.back().median);
      os << "    " << name << std::string(name.size() < 36 ? 36 - name.size() : 1, ' ') << buf << "\n";
    }
  }
  return os.str();
}

}  // namespace gaugelab::harness
