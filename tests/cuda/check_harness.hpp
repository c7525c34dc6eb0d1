// The kernel check's harness (plain C++): the tolerances and why, seeded inputs, the two error measures, the
// bit-for-bit rerun, one report line per case and the tally. The cases are in check_<kernel>.cpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <vector>

namespace gaugelab::kcheck {

// ---- Tolerances: from the roundings each output goes through, never fitted to a measurement ----
// u32 = 2^-24: one float32 rounding (round to nearest) moves a value by at most u32 of itself.
constexpr double kU32 = 0x1p-24;
// u16 = 2^-8: one bf16 rounding (8 significant bits, to nearest even) moves a value by at most u16 of itself.
constexpr double kU16 = 0x1p-8;
// Products and single adds in float32, compared element by element (the residual sum s = x + branch, W_eff's
// dW = G·c·r): at most two roundings, each ≤ u32 of the value; 4·u32 leaves one rounding of room.
constexpr double kTolF32Elementwise = 4 * kU32;
// Float32 sums reduced in a fixed tree (LayerNorm's row statistics and dx over ≤ 6144 columns; dγ, dβ over
// ≤ 12 288 rows; W_eff's dr over ≤ 12 280 columns and dc over a group's rows; the CE row's log-sum-exp over
// 50 257 columns), measured against the output's scale (max |reference|). The longest chain of float32
// additions is ≤ ~250 (6144/32 per lane + 5 butterfly steps; 1024/8 block partials + 8; 12 280/256 per thread
// + 5 + 8), so same-signed terms err by ≤ 250·u32 ≈ 1.5e-5 of the scale and random-signed ones far less; the
// fast intrinsics of the CE kernel (__expf, __logf: a few ulp each) stay below 1e-5 of each probability.
// 1e-4 is above any such rounding and below what an indexing or partition error gives: one term missed or
// counted twice among N ≤ 12 288 random ones moves an output by ~1/(3·√N) ≳ 3e-3 of its scale.
constexpr double kTolF32Reduction = 1e-4;
// Outputs rounded to bf16 once after a float32 computation (W_eff, LayerNorm's y and dx_bf16, the CE gradient)
// are measured beyond that rounding: |a − ref| − u16·|ref| (the rounding moves a value by ≤ u16 of itself), which
// is ≤ (1 + u16) times the float32 computation's own error. So the tolerance is the float32 one times (1 + u16),
// and a wrong element shows however small it is next to the rounding of its neighbours.
constexpr double kTolBf16Elementwise = (1 + kU16) * kTolF32Elementwise;
constexpr double kTolBf16 = (1 + kU16) * kTolF32Reduction;

// ---- inputs ----

/// A fixed-seed generator (splitmix64): the same stream on every machine and run.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  Rng(std::uint64_t seed, std::uint64_t stream) : s_(seed ^ (stream * 0xd1b54a32d192ed03ull + 0x8bb84b93962eacc9ull)) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1p-53; }  // [0, 1)
  double normal() {  // Box–Muller, one value per call
    const double u1 = 1.0 - uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  std::int64_t below(std::int64_t n) { return static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(n)); }

 private:
  std::uint64_t s_;
};

/// Runs fn(begin, end) over [0, n) split into a fixed number of blocks (a function of n alone), on up to 16
/// threads. fn must write disjoint outputs per block; per-block results combined by the caller in block order
/// are then the same on every machine.
void parallel_blocks(std::int64_t n, const std::function<void(std::int64_t block, std::int64_t begin, std::int64_t end)>& fn);
/// The number of blocks parallel_blocks splits n into.
std::int64_t block_count(std::int64_t n);

/// n values of f(i) in parallel.
std::vector<double> widen(std::int64_t n, const std::function<double(std::int64_t)>& f);
/// float32 and bf16 arrays widened to double (exact).
std::vector<double> widen_f32(const std::vector<float>& v);
std::vector<double> widen_bf16(const std::vector<std::uint16_t>& v);
/// Values rounded to bf16 bits.
std::vector<std::uint16_t> to_bf16(const std::vector<float>& v);

// ---- error measures; NaN or infinite results read +inf, so that they fail every tolerance ----
// `rounding`: 0 for float32 outputs; kU16 for bf16 outputs, whose one rounding (≤ u16·|ref|) is taken off first.

/// One element's excess max(0, |a − ref| − rounding·|ref|).
inline double excess(double a, double ref, double rounding) {
  const double d = std::abs(a - ref);
  if (d == 0) return 0;
  if (std::isnan(d)) return std::numeric_limits<double>::infinity();
  return std::max(0.0, d - rounding * std::abs(ref));
}
/// One element's excess / |ref| (0 where equal, +inf where ref = 0 ≠ a).
inline double elem_rel(double a, double ref, double rounding) {
  const double e = excess(a, ref, rounding);
  return e == 0 ? 0.0 : e / std::abs(ref);
}
/// max_i excess_i / max_i |ref_i|: the error relative to the output's scale (for outputs with cancellation).
double scale_rel_err(std::int64_t n, const std::function<double(std::int64_t)>& a, const double* ref, double rounding = 0);
/// max_i excess_i / |ref_i|: element by element.
double elem_rel_err(std::int64_t n, const std::function<double(std::int64_t)>& a, const double* ref, double rounding = 0);
/// Whether two arrays are equal bit for bit.
bool same_bits(const void* a, const void* b, std::size_t bytes);
/// Element i of a float32 or bf16 host array, as double (for the measures above).
std::function<double(std::int64_t)> values_of(const std::vector<float>& v);
std::function<double(std::int64_t)> values_of_bf16(const std::vector<std::uint16_t>& v);

// ---- results ----

struct OutputCheck {
  std::string name;
  bool elementwise;  // false: relative to the output's scale
  double err, tol;
  bool bf16 = false;  // measured beyond one bf16 rounding
  bool ok() const { return err <= tol; }  // false for NaN
};

struct Timing {
  std::string what;  // "fwd", "bwd", "ce"
  double ms;
  double bytes;  // each array read or written once: the least the kernel must move
};

struct CaseResult {
  std::string kernel, shape, flags;
  std::vector<OutputCheck> checks;
  bool rerun_checked = false;
  std::vector<std::string> rerun_diffs;  // outputs whose second run differed from the first, bit for bit
  std::vector<Timing> timings;
  std::string expect_refusal;  // a guard case: what it expected (the refusal), and got (in `note`)
  std::string note;
  std::string error;           // a device error, or a guard's unexpected answer
  bool passed() const;
  std::string id() const { return kernel + " " + shape + " " + flags; }
};

struct Options {
  bool small = false;    // --small: few rows, each partition and chunk boundary still crossed (sanitizers)
  bool verbose = false;  // --verbose: a line per output under each case
  std::string only;      // --only SUBSTR: the cases whose "kernel shape flags" contains it
  int warmup = 3, reps = 20;
};

/// Prints one line per case (and, with --verbose or on failure, one per output beneath it), and tallies.
class Reporter {
 public:
  explicit Reporter(const Options& o) : opt_(o) {}
  bool wanted(const std::string& id) const { return opt_.only.empty() || id.find(opt_.only) != std::string::npos; }
  void report(const CaseResult& r);
  int passed() const { return passed_; }
  int failed() const { return failed_; }
  const Options& options() const { return opt_; }
  /// Whether a case of `kernel` was reported (passed or failed).
  bool ran(const std::string& kernel) const { return kernels_.count(kernel) > 0; }

 private:
  const Options& opt_;
  int passed_ = 0, failed_ = 0;
  std::set<std::string> kernels_;
};

/// Runs body(result) for the case {kernel, shape, flags} unless --only leaves it out; an exception thrown by the
/// body (a DeviceError names the step and the CUDA error) becomes the case's error. Then reports it.
void run_case(Reporter& rep, const std::string& kernel, const std::string& shape, const std::string& flags,
              const std::function<void(CaseResult&)>& body);

/// Notes `name` in r.rerun_diffs unless the two runs' outputs are equal bit for bit.
template <class T>
void compare_reruns(CaseResult& r, const char* name, const std::vector<T>& first, const std::vector<T>& second) {
  if (first.size() != second.size() || !same_bits(first.data(), second.data(), first.size() * sizeof(T)))
    r.rerun_diffs.push_back(name);
}

/// Fill bytes for the two runs of a kernel: every output starts as NaN before the first (an element the kernel
/// never writes fails the comparison) and as another pattern before the second (it fails the bitwise rerun).
constexpr unsigned char kFirstFill = 0xff, kSecondFill = 0x5a;

// The three kernels' cases (check_layer_norm.cpp, check_lrm_weight.cpp, check_lm_head_ce.cpp).
void layer_norm_cases(Reporter& rep);
void lrm_weight_cases(Reporter& rep);
void lm_head_ce_cases(Reporter& rep);

}  // namespace gaugelab::kcheck
