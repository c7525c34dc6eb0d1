// GD steps per second of the relu toy (seed 004 protocol, toys/README.md defaults: N = 200, H = 20)
// against the NumPy implementation of the same protocol (bench/reference/relu_gd.py, run with
// /usr/bin/python3 in the same run), printed as a ratio; for lambda = 0 and lambda = 0.2 (the
// penalty adds a log per neuron), and for a width that takes the dynamic kernel (H = 21).
// One thread each (NumPy's BLAS pinned to one). Also prints the CPU time per wall time each side got
// and the load average: the machine may be shared, and a ratio measured on a contended core says so.
// Target (issue 3): >= 50x NumPy per step. Both task passes are timed: the default sorted one (O(N + H)
// a step) and the dense one (O(N·H), --kernel dense), whose fraction of one core's float64 FMA peak is
// printed, the peak measured here by independent FMA chains on the widest vectors the build targets.
// usage: toys_relu [--steps N] [--python PATH]
#include <immintrin.h>
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "core/random.hpp"
#include "toys/relu_toy.hpp"

using namespace gaugelab;

namespace {

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

std::string load_average() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

struct Rate {
  double steps_per_s = 0, cores = 0, final_loss = 0;
};

// Steps/s of ReluTrainer::step() alone (no logging), best of 3 timed blocks of `steps`.
Rate time_ours(toys::ReluToyOptions o, long steps) {
  core::Rng data_rng(1), init_rng(2);
  const auto data = toys::make_relu_data(o, data_rng);
  toys::ReluTrainer tr(o, data, toys::init_relu_net(o, init_rng));
  for (int i = 0; i < 200; ++i) tr.step();  // warm-up
  Rate best;
  for (int rep = 0; rep < 3; ++rep) {
    const double c0 = cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    double loss = 0;
    for (long i = 0; i < steps; ++i) loss = tr.step().total;
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double rate = static_cast<double>(steps) / wall;
    if (rate > best.steps_per_s) best = {rate, (cpu_seconds() - c0) / wall, loss};
  }
  return best;
}

// One core's float64 FMA peak (FMAs/s): 16 independent accumulator chains (enough to cover latency x
// throughput on current cores), best of 5 blocks. Each FMA counts once (its 2 flops are not doubled).
double fma_peak_per_s() {
#if defined(__AVX512F__)
  using V = __m512d;
  constexpr int kLanes = 8;
  auto fma = [](V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); };
  auto set = [](double x) { return _mm512_set1_pd(x); };
  auto sum = [](V a) { return _mm512_reduce_add_pd(a); };
#elif defined(__FMA__)
  using V = __m256d;
  constexpr int kLanes = 4;
  auto fma = [](V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); };
  auto set = [](double x) { return _mm256_set1_pd(x); };
  auto sum = [](V a) {
    double t[4];
    _mm256_storeu_pd(t, a);
    return t[0] + t[1] + t[2] + t[3];
  };
#else
  return 0.0;  // no FMA instructions in this build: no peak to compare with
#endif
#if defined(__AVX512F__) || defined(__FMA__)
  constexpr int kChains = 16;
  constexpr long kIters = 20'000'000;
  double best = 0, sink = 0;
  for (int rep = 0; rep < 5; ++rep) {
    V acc[kChains];
    for (int c = 0; c < kChains; ++c) acc[c] = set(1e-3 * c);
    const V a = set(0.999999), b = set(1e-9);
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < kIters; ++i)
      for (int c = 0; c < kChains; ++c) acc[c] = fma(acc[c], a, b);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (int c = 0; c < kChains; ++c) sink += sum(acc[c]);
    best = std::max(best, static_cast<double>(kIters) * kChains * kLanes / wall);
  }
  if (sink == 42.0) std::printf(" ");  // keeps the chains alive
  return best;
#endif
}

// The NumPy reference's steps/s (it times its own loop) and the cores it got.
Rate time_numpy(const std::string& python, const toys::ReluToyOptions& o, long steps) {
  char cmd[512];
  std::snprintf(cmd, sizeof cmd,
                "OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 %s %s/bench/reference/relu_gd.py "
                "--n-train %d --hidden %d --lr %g --lambda %g --eps %g --noise-std %g --init-scale %g --steps %ld",
                python.c_str(), GAUGELAB_SOURCE_DIR, o.n_train, o.hidden, o.lr, o.lambda, o.eps, o.noise_std,
                o.init_scale, steps);
  rusage before{}, after{};
  getrusage(RUSAGE_CHILDREN, &before);
  const auto t0 = std::chrono::steady_clock::now();
  FILE* p = popen(cmd, "r");
  Rate r;
  if (!p) return r;
  std::array<char, 256> line{};
  while (std::fgets(line.data(), line.size(), p)) {
    std::sscanf(line.data(), "steps_per_s %lf", &r.steps_per_s);
    std::sscanf(line.data(), "final_loss %lf", &r.final_loss);
  }
  if (pclose(p) != 0) r.steps_per_s = 0;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  getrusage(RUSAGE_CHILDREN, &after);
  const double cpu = static_cast<double>(after.ru_utime.tv_sec - before.ru_utime.tv_sec) +
                     1e-6 * static_cast<double>(after.ru_utime.tv_usec - before.ru_utime.tv_usec);
  r.cores = cpu / wall;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  long steps = 100000, np_steps = 3000;
  std::string python = "/usr/bin/python3";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--steps") steps = std::atol(argv[i + 1]);
    else if (a == "--python") python = argv[i + 1];
  }
  std::printf("relu toy GD step, N = 200 samples, one thread; load average %s\n", load_average().c_str());
  const double peak = fma_peak_per_s();
  std::printf("  one core's float64 FMA peak, measured: %.1f G FMA/s\n", peak / 1e9);
  bool ok = true;
  for (const auto& [hidden, lambda] : {std::pair{20, 0.0}, std::pair{20, 0.2}, std::pair{21, 0.0}}) {
    toys::ReluToyOptions o;
    o.hidden = hidden;
    o.lambda = lambda;
    const Rate ours = time_ours(o, steps);  // the default, sorted task pass
    o.kernel = "dense";
    const Rate dense = time_ours(o, steps);
    const Rate ref = time_numpy(python, o, np_steps);
    if (ref.steps_per_s <= 0) {
      std::printf("  H = %d, lambda = %g: NumPy reference failed (%s)\n", hidden, lambda, python.c_str());
      ok = false;
      continue;
    }
    // The wall-time ratio, and the same per core each side actually got (they may differ on a
    // shared machine; the second is the code's ratio, the first what a user waiting saw).
    auto per_core = [](const Rate& a, const Rate& b) { return (a.steps_per_s / a.cores) / (b.steps_per_s / b.cores); };
    std::printf("  H = %d%s, lambda = %-4g: gaugelab %9.0f steps/s (%.2f cores), NumPy %7.0f steps/s (%.2f cores): "
                "%.1fx, per core received %.1fx (target >= 50x)\n",
                hidden, hidden == 20 ? " (fixed-size kernel)" : " (dynamic kernel)   ", lambda, ours.steps_per_s,
                ours.cores, ref.steps_per_s, ref.cores, ours.steps_per_s / ref.steps_per_s, per_core(ours, ref));
    std::printf("      --kernel dense %9.0f steps/s (%.2f cores): %.1fx NumPy per core; the sorted pass is %.2fx it\n",
                dense.steps_per_s, dense.cores, per_core(dense, ref), per_core(ours, dense));
    // FMA-unit work per step of the dense pass: per sample and neuron, 2 FMAs forward (z = w1·x + b1,
    // p += w2·relu(z)) and, backward, z again (1 FMA), a masked add and a masked FMA: 5 slots (the add
    // counted as one). The sorted pass does O(N + H) work, so its speed is not a fraction of this peak.
    if (peak > 0)
      std::printf("      dense pass's fraction of the FMA peak: %.0f %% (5·N·H = %d FMA slots a step, per core received)\n",
                  100.0 * dense.steps_per_s / dense.cores * 5.0 * o.n_train * hidden / peak, 5 * o.n_train * hidden);
  }
  return ok ? 0 : 1;
}
