// The residual add + LayerNorm kernels (gpt2/model/cuda/residual_layer_norm_kernel.hpp) at the shapes and with
// the arguments GPT-2 124M gives them (model/residual_layer_norm.cpp, model/model.cpp): x [B·T, 768] float32,
// the branch in bf16; the block's ln_1/ln_2 with a branch and the stream's gradient ds, the first ln_1 without a
// branch (s = x: no sum, no ds, no bf16 dx), ln_f (its sum used by nothing: ds null), a bias-free model (β null),
// and the widest row the backward takes.
#include <cstdint>
#include <string>
#include <vector>

#include "gpt2/model/cuda/residual_layer_norm_kernel.hpp"
#include "tests/cuda/check_device.hpp"
#include "tests/cuda/check_harness.hpp"
#include "tests/cuda/kernel_reference.hpp"

namespace gaugelab::kcheck {

namespace {

namespace k = gaugelab::gpt2::cuda;

constexpr float kEps = 1e-5f;  // GPT-2's layer_norm_eps, as the model passes it (float)

struct Shape {
  std::int64_t rows, cols;
  bool branch, beta, ds;  // the branch's bf16 gradient (dx_bf16) is asked for exactly when there is a branch
  const char* role;
};

std::string flags_of(const Shape& s) {
  return std::string(s.branch ? "branch" : "no-branch") + (s.beta ? ",beta" : ",no-beta") + (s.ds ? ",ds" : ",no-ds") +
         " (" + s.role + ")";
}

std::vector<Shape> shapes(bool small) {
  constexpr std::int64_t kRows = 12 * 1024, kD = 768, kWide = k::kResidualLayerNormMaxCols;
  if (!small)
    return {
        {kRows, kD, true, true, true, "a block's ln_1/ln_2"},
        {kRows, kD, false, true, false, "the first ln_1: s = x"},
        {kRows, kD, true, false, true, "bias-free model"},
        {kRows, kD, true, true, false, "ln_f: its sum unused"},
        {2051, kWide, true, true, true, "widest row, grid-stride wraps twice"},
        {7, kWide, true, true, true, "widest row, few rows"},
    };
  // 4100 rows of 33: 1024 blocks × 4 warps leave rows 4096.. to a second pass, 33 columns wrap the 32 lanes and
  // take two 32-column blocks in the partial sums; 9 rows cross the forward's 8-row blocks.
  return {
      {4100, 33, true, true, true, "grid-stride and lane wrap"},
      {9, kD, false, true, false, "the first ln_1: s = x"},
      {9, kD, true, false, true, "bias-free model"},
      {9, kD, true, true, false, "ln_f: its sum unused"},
      {3, kWide, true, true, true, "widest row"},
  };
}

struct Inputs {
  std::vector<float> x, gamma, beta, ds;  // [rows, cols], [cols], [cols] or empty, [rows, cols] or empty
  std::vector<std::uint16_t> branch, dy;  // bf16 [rows, cols] (branch empty without one)
};

// Rows with their own offset and spread (a residual stream's), γ around 1, small β; gradients of any sign.
Inputs make_inputs(const Shape& s, std::uint64_t seed) {
  const std::int64_t n = s.rows * s.cols;
  Inputs in;
  in.x.resize(static_cast<std::size_t>(n));
  in.dy.resize(static_cast<std::size_t>(n));
  if (s.branch) in.branch.resize(static_cast<std::size_t>(n));
  if (s.ds) in.ds.resize(static_cast<std::size_t>(n));
  parallel_blocks(s.rows, [&](std::int64_t, std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) {
      Rng g(seed, static_cast<std::uint64_t>(i));
      const double offset = 0.5 * g.normal(), spread = 0.5 + 2.5 * g.uniform();
      for (std::int64_t c = 0; c < s.cols; ++c) {
        const auto at = static_cast<std::size_t>(i * s.cols + c);
        in.x[at] = static_cast<float>(offset + spread * g.normal());
        in.dy[at] = ref::float_to_bf16(static_cast<float>(0.05 * g.normal()));
        if (s.branch) in.branch[at] = ref::float_to_bf16(static_cast<float>(0.5 * g.normal()));
        if (s.ds) in.ds[at] = static_cast<float>(0.05 * g.normal());
      }
    }
  });
  Rng g(seed, ~0ull);
  for (std::int64_t c = 0; c < s.cols; ++c) {
    in.gamma.push_back(static_cast<float>(1.0 + 0.2 * g.normal()));
    if (s.beta) in.beta.push_back(static_cast<float>(0.1 * g.normal()));
  }
  return in;
}

// The reference's forward and backward over row blocks in parallel; dγ, dβ summed over the blocks in order.
struct Reference {
  std::vector<double> s, y, mean, rstd, dx, dgamma, dbeta;
};

void reference_forward(const Shape& sh, const Inputs& in, Reference& r) {
  const std::int64_t n = sh.rows * sh.cols;
  r.s = widen(n, [&](std::int64_t i) {
    const auto at = static_cast<std::size_t>(i);
    return double{in.x[at]} + (sh.branch ? double{ref::bf16_to_float(in.branch[at])} : 0.0);
  });
  const std::vector<double> gamma = widen_f32(in.gamma), beta = widen_f32(in.beta);
  r.y.resize(static_cast<std::size_t>(n));
  r.mean.resize(static_cast<std::size_t>(sh.rows));
  r.rstd.resize(static_cast<std::size_t>(sh.rows));
  parallel_blocks(sh.rows, [&](std::int64_t, std::int64_t b, std::int64_t e) {
    ref::layer_norm_forward(r.s.data() + b * sh.cols, gamma.data(), sh.beta ? beta.data() : nullptr, e - b, sh.cols,
                            double{kEps}, r.y.data() + b * sh.cols, r.mean.data() + b, r.rstd.data() + b);
  });
}

// At the kernel's own s, mean and rstd (the forward's outputs on the card, as the backward takes them).
void reference_backward(const Shape& sh, const Inputs& in, const std::vector<double>& s, const std::vector<double>& mean,
                        const std::vector<double>& rstd, Reference& r) {
  const std::vector<double> dy = widen_bf16(in.dy), ds = widen_f32(in.ds), gamma = widen_f32(in.gamma);
  r.dx.resize(s.size());
  const std::int64_t blocks = block_count(sh.rows);
  std::vector<std::vector<double>> pg(static_cast<std::size_t>(blocks)), pb(static_cast<std::size_t>(blocks));
  parallel_blocks(sh.rows, [&](std::int64_t blk, std::int64_t b, std::int64_t e) {
    auto& g = pg[static_cast<std::size_t>(blk)];
    auto& bb = pb[static_cast<std::size_t>(blk)];
    g.assign(static_cast<std::size_t>(sh.cols), 0.0);
    bb.assign(static_cast<std::size_t>(sh.cols), 0.0);
    const std::int64_t off = b * sh.cols;
    ref::layer_norm_backward(s.data() + off, mean.data() + b, rstd.data() + b, dy.data() + off,
                             sh.ds ? ds.data() + off : nullptr, gamma.data(), e - b, sh.cols, r.dx.data() + off,
                             g.data(), bb.data());
  });
  r.dgamma.assign(static_cast<std::size_t>(sh.cols), 0.0);
  r.dbeta.assign(static_cast<std::size_t>(sh.cols), 0.0);
  for (std::int64_t blk = 0; blk < blocks; ++blk)
    for (std::int64_t c = 0; c < sh.cols; ++c) {
      r.dgamma[static_cast<std::size_t>(c)] += pg[static_cast<std::size_t>(blk)][static_cast<std::size_t>(c)];
      r.dbeta[static_cast<std::size_t>(c)] += pb[static_cast<std::size_t>(blk)][static_cast<std::size_t>(c)];
    }
}


void run_shape(const Shape& sh, std::uint64_t seed, const Options& opt, CaseResult& r) {
  const std::int64_t n = sh.rows * sh.cols;
  const auto un = static_cast<std::size_t>(n), rows = static_cast<std::size_t>(sh.rows),
             cols = static_cast<std::size_t>(sh.cols);
  const Inputs in = make_inputs(sh, seed);
  auto x = DeviceArray<float>::from(in.x), gamma = DeviceArray<float>::from(in.gamma),
       beta = DeviceArray<float>::from(in.beta), ds = DeviceArray<float>::from(in.ds);
  auto branch = DeviceArray<std::uint16_t>::from(in.branch), dy = DeviceArray<std::uint16_t>::from(in.dy);
  DeviceArray<float> sum(sh.branch ? un : 0), mean(rows), rstd(rows), dx(un), dgamma(cols), dbeta(sh.beta ? cols : 0);
  DeviceArray<std::uint16_t> y(un), dxb(sh.branch ? un : 0);
  DeviceArray<float> scratch(static_cast<std::size_t>(k::residual_layer_norm_scratch_floats(sh.rows, sh.cols)));
  void* st = device_stream();

  auto forward = [&] {
    return k::residual_layer_norm_forward(x.get(), sh.branch ? branch.get() : nullptr, gamma.get(),
                                          sh.beta ? beta.get() : nullptr, sh.branch ? sum.get() : nullptr, y.get(),
                                          mean.get(), rstd.get(), sh.rows, sh.cols, kEps, st);
  };
  const float* s_dev = sh.branch ? sum.get() : x.get();
  auto backward = [&] {
    return k::residual_layer_norm_backward(s_dev, mean.get(), rstd.get(), dy.get(), sh.ds ? ds.get() : nullptr,
                                           gamma.get(), dx.get(), sh.branch ? dxb.get() : nullptr, dgamma.get(),
                                           sh.beta ? dbeta.get() : nullptr, scratch.get(), sh.rows, sh.cols, st);
  };

  // Forward, twice from NaN- and pattern-filled outputs.
  struct Fwd {
    std::vector<float> sum, mean, rstd;
    std::vector<std::uint16_t> y;
  } f[2];
  for (int run = 0; run < 2; ++run) {
    const unsigned char fill = run == 0 ? kFirstFill : kSecondFill;
    sum.fill(fill), y.fill(fill), mean.fill(fill), rstd.fill(fill);
    check_launch(forward(), std::string("forward, run ") + (run == 0 ? "1" : "2"));
    f[run] = {sum.to_host(), mean.to_host(), rstd.to_host(), y.to_host()};
  }
  r.rerun_checked = true;
  compare_reruns(r, "fwd sum", f[0].sum, f[1].sum);
  compare_reruns(r, "fwd y", f[0].y, f[1].y);
  compare_reruns(r, "fwd mean", f[0].mean, f[1].mean);
  compare_reruns(r, "fwd rstd", f[0].rstd, f[1].rstd);

  Reference ref_out;
  reference_forward(sh, in, ref_out);
  if (sh.branch) r.checks.push_back({"sum", true, elem_rel_err(n, values_of(f[0].sum), ref_out.s.data()), kTolF32Elementwise});
  r.checks.push_back({"y", false, scale_rel_err(n, values_of_bf16(f[0].y), ref_out.y.data(), kU16), kTolBf16, true});
  r.checks.push_back({"mean", false, scale_rel_err(sh.rows, values_of(f[0].mean), ref_out.mean.data()), kTolF32Reduction});
  r.checks.push_back({"rstd", false, scale_rel_err(sh.rows, values_of(f[0].rstd), ref_out.rstd.data()), kTolF32Reduction});

  // Backward at the forward's outputs on the card (the second run's, which the device holds), twice.
  struct Bwd {
    std::vector<float> dx, dgamma, dbeta;
    std::vector<std::uint16_t> dxb;
  } b[2];
  for (int run = 0; run < 2; ++run) {
    const unsigned char fill = run == 0 ? kFirstFill : kSecondFill;
    dx.fill(fill), dxb.fill(fill), dgamma.fill(fill), dbeta.fill(fill), scratch.fill(fill);
    check_launch(backward(), std::string("backward, run ") + (run == 0 ? "1" : "2"));
    b[run] = {dx.to_host(), dgamma.to_host(), dbeta.to_host(), dxb.to_host()};
  }
  compare_reruns(r, "bwd dx", b[0].dx, b[1].dx);
  compare_reruns(r, "bwd dx_bf16", b[0].dxb, b[1].dxb);
  compare_reruns(r, "bwd dgamma", b[0].dgamma, b[1].dgamma);
  compare_reruns(r, "bwd dbeta", b[0].dbeta, b[1].dbeta);

  reference_backward(sh, in, sh.branch ? widen_f32(f[1].sum) : widen_f32(in.x), widen_f32(f[1].mean),
                     widen_f32(f[1].rstd), ref_out);
  r.checks.push_back({"dx", false, scale_rel_err(n, values_of(b[0].dx), ref_out.dx.data()), kTolF32Reduction});
  if (sh.branch)
    r.checks.push_back(
        {"dx_bf16", false, scale_rel_err(n, values_of_bf16(b[0].dxb), ref_out.dx.data(), kU16), kTolBf16, true});
  r.checks.push_back(
      {"dgamma", false, scale_rel_err(sh.cols, values_of(b[0].dgamma), ref_out.dgamma.data()), kTolF32Reduction});
  if (sh.beta)
    r.checks.push_back({"dbeta", false, scale_rel_err(sh.cols, values_of(b[0].dbeta), ref_out.dbeta.data()), kTolF32Reduction});

  // Timing: bytes of each array once (the backward's block partials written and read once).
  const double dn = static_cast<double>(n), dr = static_cast<double>(sh.rows), dc = static_cast<double>(sh.cols);
  const double fwd_bytes = dn * (4 + 2 + (sh.branch ? 2 + 4 : 0)) + dr * 8 + dc * 4 * (sh.beta ? 2 : 1);
  const double bwd_bytes = dn * (4 + 2 + 4 + (sh.ds ? 4 : 0) + (sh.branch ? 2 : 0)) + dr * 8 +
                           dc * 4 * (sh.beta ? 3 : 2) + 2.0 * 4 * static_cast<double>(scratch.size());
  const double fwd_ms = device_time_ms([&] { check_return(forward(), "forward (timed)"); }, {}, opt.warmup, opt.reps);
  const double bwd_ms = device_time_ms([&] { check_return(backward(), "backward (timed)"); }, {}, opt.warmup, opt.reps);
  r.timings = {{"fwd", fwd_ms, fwd_bytes}, {"bwd", bwd_ms, bwd_bytes}};
}

// A row wider than kResidualLayerNormMaxCols: the backward refuses it (cudaErrorInvalidValue) without a launch.
void run_guard(CaseResult& r) {
  constexpr std::int64_t rows = 2, cols = k::kResidualLayerNormMaxCols + 1;
  const auto n = static_cast<std::size_t>(rows * cols);
  DeviceArray<float> s(n), mean(rows), rstd(rows), gamma(cols), dx(n), dgamma(cols), dbeta(cols), scratch(4 * cols);
  DeviceArray<std::uint16_t> dy(n), dxb(n);
  s.fill(0), mean.fill(0), rstd.fill(0), gamma.fill(0), dy.fill(0);
  const int rc = k::residual_layer_norm_backward(s.get(), mean.get(), rstd.get(), dy.get(), nullptr, gamma.get(),
                                                 dx.get(), dxb.get(), dgamma.get(), dbeta.get(), scratch.get(), rows,
                                                 cols, device_stream());
  device_sync("after the refused backward");
  r.expect_refusal = device_error_text(device_invalid_value_code());
  r.note = "refused: " + (rc == 0 ? std::string("no (returned 0)") : device_error_text(rc));
  if (rc != device_invalid_value_code()) r.error = "expected a refusal with " + r.expect_refusal + ", got " + r.note;
}

}  // namespace

void layer_norm_cases(Reporter& rep) {
  const Options& opt = rep.options();
  std::uint64_t seed = 0x4c4e;  // "LN"
  for (const Shape& sh : shapes(opt.small)) {
    run_case(rep, "ln_fwd_bwd", std::to_string(sh.rows) + "x" + std::to_string(sh.cols), flags_of(sh),
             [&](CaseResult& r) { run_shape(sh, seed, opt, r); });
    ++seed;
  }
  run_case(rep, "ln_bwd_guard", "2x" + std::to_string(k::kResidualLayerNormMaxCols + 1), "(wider than the backward takes)",
           [&](CaseResult& r) { run_guard(r); });
}

}  // namespace gaugelab::kcheck
