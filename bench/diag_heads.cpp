// bench/diag_heads: speed of the `diag heads` inner loop, as ratios to a plain matrix product of the
// harness's own size measured in the same run ([d+1, d_h]·[d_h, d_h], GPT-2: [769, 64]·[64, 64]).
//   * the opposite-Gram solve U·(FᵀF)⁻¹ (Cholesky of the formed Gram, and QR of F) vs that product;
//   * one inner-loop step (one rule × wrapper from one representative, with its share of the
//     gradient, smoothing, pull-back and the Gram-based spread metrics) vs that product, and steps/s;
//   * the full default grid (6 rules × 5 wrappers × 7 κ × 3 families × 32 gauges) projected from one
//     timed cell, wall and CPU, with the load average (the machine is shared: other work inflates it).
#include <sys/resource.h>

#include <chrono>
#include <ctime>
#include <cstdio>
#include <fstream>
#include <string>

#include <omp.h>

#include "core/quotient_solve.hpp"
#include "core/random.hpp"
#include "harness/diag_run.hpp"

using namespace gaugelab;
using Mat = core::Mat<double>;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

/// CPU time of the calling thread: the product and solve timings are taken on one thread, and on a
/// shared machine its CPU time (not the wall time, which includes waiting for a core) is the peer
/// the harness's CPU time is compared with.
double thread_cpu() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

/// Best-of-3 thread-CPU seconds per call of fn, each trial repeating it until ≥ 0.2 s of CPU time.
template <class Fn>
double per_call(Fn&& fn) {
  double best = 1e300;
  for (int trial = 0; trial < 3; ++trial) {
    int n = 0;
    const double t0 = thread_cpu();
    double t = 0;
    do {
      fn();
      ++n;
      t = thread_cpu() - t0;
    } while (t < 0.2);
    best = std::min(best, t / n);
  }
  return best;
}

}  // namespace

int main() {
  std::printf("diag_heads bench: %d OpenMP threads, load average %s (shared machine: contention inflates every time)\n",
              omp_get_max_threads(), load_average().c_str());
  core::Rng rng(1);
  const core::Index m = 769, r = 64;  // [d+1, d_h] of a GPT-2 head with its bias row
  const Mat U = core::randn<double>(rng, m, r), F = core::randn<double>(rng, m, r), X = core::randn<double>(rng, r, r);
  Mat out;
  volatile double sink = 0;
  Eigen::setNbThreads(1);
  const double t_prod = per_call([&] {
    out.noalias() = U * X;
    sink = sink + out(0, 0);
  });
  const double flops = 2.0 * static_cast<double>(m * r * r);
  std::printf("  product [%ld,%ld]x[%ld,%ld]: %.1f us CPU (%.1f GFLOP/s, one thread)\n", static_cast<long>(m),
              static_cast<long>(r), static_cast<long>(r), static_cast<long>(r), 1e6 * t_prod, flops / t_prod / 1e9);
  for (const auto solve : {core::GramSolve::cholesky, core::GramSolve::qr}) {
    const double t = per_call([&] {
      out = core::right_gram_solve(U, F, 0.0, solve);
      sink = sink + out(0, 0);
    });
    std::printf("  Gram solve U(F^T F)^-1, %-8s: %.1f us = %.2fx the product\n",
                solve == core::GramSolve::cholesky ? "cholesky" : "qr", 1e6 * t, t / t_prod);
  }

  harness::DiagOptions o;  // the default grid's rules, wrappers, transports and shapes
  o.gauges = 4;
  harness::RandomHeadOptions h;
  h.seed = 3;
  const auto head = harness::random_head(h);
  const harness::HeadDiagnostic diag(o, head, 1);
  const std::size_t steps_per_rep = diag.variants().size() * o.wrappers.size();
  const double w0 = now(), c0 = cpu_seconds();
  const auto cell = diag.run_cell({"general", 100.0, 7});
  const double wall = now() - w0, cpu = cpu_seconds() - c0;
  const double reps = static_cast<double>(o.gauges + 1), steps = reps * static_cast<double>(steps_per_rep);
  std::printf("  inner loop (GPT-2 head, general kappa=100, %zu rule variants x %zu wrappers, N=%ld smoothing):\n",
              diag.variants().size(), o.wrappers.size(), static_cast<long>(o.smooth));
  std::printf("    %.0f steps in %.2f s wall, %.2f s CPU: %.1f steps/s wall, one step = %.0fx the product (CPU)\n", steps,
              wall, cpu, steps / wall, cpu / steps / t_prod);
  // The default grid: 15 cells (diagonal and general at 7 kappa, orthogonal once) x 33 representatives.
  const double grid_reps = 15.0 * 33.0;
  std::printf("  full default grid projected: %.0f s CPU = %.0f s wall on 2 free cores (%.0f s at this run's %.2f cores)\n",
              cpu / reps * grid_reps, cpu / reps * grid_reps / 2.0, wall / reps * grid_reps, cpu / wall);
  std::printf("  (forward error of this cell %.1e; sink %g)\n", cell.forward.max, static_cast<double>(sink) * 0.0);
  std::printf("  load average after: %s\n", load_average().c_str());
  return 0;
}
