#include "tests/cuda/check_harness.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <exception>
#include <thread>

#include "tests/cuda/kernel_reference.hpp"

namespace gaugelab::kcheck {

std::int64_t block_count(std::int64_t n) { return std::max<std::int64_t>(1, std::min<std::int64_t>(n, 64)); }

void parallel_blocks(std::int64_t n, const std::function<void(std::int64_t, std::int64_t, std::int64_t)>& fn) {
  if (n <= 0) return;
  const std::int64_t blocks = block_count(n);
  const auto hw = static_cast<std::int64_t>(std::max(1u, std::thread::hardware_concurrency()));
  const std::int64_t threads = std::min<std::int64_t>({blocks, hw, 16});
  std::atomic<std::int64_t> next{0};
  std::exception_ptr err;
  std::atomic<bool> failed{false};
  auto work = [&] {
    for (std::int64_t b; !failed && (b = next++) < blocks;) {
      try {
        fn(b, n * b / blocks, n * (b + 1) / blocks);
      } catch (...) {
        if (!failed.exchange(true)) err = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (std::int64_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (err) std::rethrow_exception(err);
}

std::vector<double> widen(std::int64_t n, const std::function<double(std::int64_t)>& f) {
  std::vector<double> out(static_cast<std::size_t>(n));
  parallel_blocks(n, [&](std::int64_t, std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) out[static_cast<std::size_t>(i)] = f(i);
  });
  return out;
}

std::vector<double> widen_f32(const std::vector<float>& v) {
  return widen(static_cast<std::int64_t>(v.size()), [&](std::int64_t i) { return double{v[static_cast<std::size_t>(i)]}; });
}

std::vector<double> widen_bf16(const std::vector<std::uint16_t>& v) {
  return widen(static_cast<std::int64_t>(v.size()),
               [&](std::int64_t i) { return double{ref::bf16_to_float(v[static_cast<std::size_t>(i)])}; });
}

std::vector<std::uint16_t> to_bf16(const std::vector<float>& v) {
  std::vector<std::uint16_t> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = ref::float_to_bf16(v[i]);
  return out;
}

namespace {

// max over blocks of per-block maxima of f(i); NaN propagates as +inf.
double parallel_max(std::int64_t n, const std::function<double(std::int64_t)>& f) {
  std::vector<double> part(static_cast<std::size_t>(block_count(n)), 0.0);
  parallel_blocks(n, [&](std::int64_t blk, std::int64_t b, std::int64_t e) {
    double m = 0;
    for (std::int64_t i = b; i < e; ++i) {
      const double v = f(i);
      if (!(v <= m)) m = std::isnan(v) ? std::numeric_limits<double>::infinity() : v;
    }
    part[static_cast<std::size_t>(blk)] = m;
  });
  return *std::max_element(part.begin(), part.end());
}

double finite_or_inf(double v) { return std::isfinite(v) ? v : std::numeric_limits<double>::infinity(); }

}  // namespace

double scale_rel_err(std::int64_t n, const std::function<double(std::int64_t)>& a, const double* ref, double rounding) {
  const double scale = parallel_max(n, [&](std::int64_t i) { return std::abs(ref[i]); });
  const double worst = parallel_max(n, [&](std::int64_t i) { return excess(a(i), ref[i], rounding); });
  return worst == 0 ? 0.0 : finite_or_inf(worst / scale);
}

double elem_rel_err(std::int64_t n, const std::function<double(std::int64_t)>& a, const double* ref, double rounding) {
  return finite_or_inf(parallel_max(n, [&](std::int64_t i) { return elem_rel(a(i), ref[i], rounding); }));
}

bool same_bits(const void* a, const void* b, std::size_t bytes) { return bytes == 0 || std::memcmp(a, b, bytes) == 0; }

std::function<double(std::int64_t)> values_of(const std::vector<float>& v) {
  return [&v](std::int64_t i) { return double{v[static_cast<std::size_t>(i)]}; };
}

std::function<double(std::int64_t)> values_of_bf16(const std::vector<std::uint16_t>& v) {
  return [&v](std::int64_t i) { return double{ref::bf16_to_float(v[static_cast<std::size_t>(i)])}; };
}

bool CaseResult::passed() const {
  if (!error.empty()) return false;
  for (const OutputCheck& c : checks)
    if (!c.ok()) return false;
  return rerun_diffs.empty();
}

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

void Reporter::report(const CaseResult& r) {
  const bool pass = r.passed();
  std::string line = "kernel-check | " + r.kernel + " | " + r.shape + (r.flags.empty() ? "" : " " + r.flags) + " | ";
  if (!r.error.empty()) {
    line += "error: " + r.error;
  } else if (!r.expect_refusal.empty()) {
    line += r.note;
  } else {
    const OutputCheck* worst = nullptr;
    auto ratio = [](const OutputCheck& c) { return c.err == 0 ? 0.0 : c.err / c.tol; };  // tol 0: exact checks
    for (const OutputCheck& c : r.checks)
      if (worst == nullptr || !(ratio(c) <= ratio(*worst))) worst = &c;
    if (worst != nullptr)
      line += "max rel err " + fmt("%.2e", worst->err) + " (tol " + fmt("%.1e", worst->tol) + ", " + worst->name + ")";
    if (r.rerun_checked)
      line += r.rerun_diffs.empty() ? " | bitwise rerun ok" : " | bitwise rerun DIFFERS";
    for (std::size_t k = 0; k < r.timings.size(); ++k) {
      const Timing& t = r.timings[k];
      line += (k == 0 ? " | " : ", ") + t.what + " " + fmt("%.3f", t.ms) + " ms " +
              fmt("%.0f", t.ms > 0 ? t.bytes / (t.ms * 1e6) : 0.0) + " GB/s";
    }
  }
  line += pass ? " | PASS" : " | FAIL";
  std::printf("%s\n", line.c_str());
  for (const OutputCheck& c : r.checks)
    if (opt_.verbose || !c.ok())
      std::printf("    %s: rel err %.3e (tol %.2e, %s%s)%s\n", c.name.c_str(), c.err, c.tol,
                  c.elementwise ? "element by element" : "of the output's scale",
                  c.bf16 ? ", beyond one bf16 rounding" : "", c.ok() ? "" : "  <- over");
  for (const std::string& d : r.rerun_diffs) std::printf("    %s: the second run differs bit for bit\n", d.c_str());
  std::fflush(stdout);
  (pass ? passed_ : failed_) += 1;
  kernels_.insert(r.kernel);
}

void run_case(Reporter& rep, const std::string& kernel, const std::string& shape, const std::string& flags,
              const std::function<void(CaseResult&)>& body) {
  CaseResult r;
  r.kernel = kernel, r.shape = shape, r.flags = flags;
  if (!rep.wanted(r.id())) return;
  try {
    body(r);
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  rep.report(r);
}

}  // namespace gaugelab::kcheck
