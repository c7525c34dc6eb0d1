// The LM head's cross-entropy kernel (gpt2/model/cuda/lm_head_ce_kernel.hpp) as model/lm_head_loss.cpp calls it
// for GPT-2 124M: a chunk of 4096 rows of bf16 logits over the vocabulary 50 257 padded to ld 50 304 (16-byte
// loads), targets −1 for ignored rows (scale 0), scale 1/n_valid otherwise; with and without the gradient written
// in place. Also ld = vocab (a vocabulary padded to no multiple of 8: the scalar path).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpt2/model/cuda/lm_head_ce_kernel.hpp"
#include "tests/cuda/check_device.hpp"
#include "tests/cuda/check_harness.hpp"
#include "tests/cuda/kernel_reference.hpp"

namespace gaugelab::kcheck {

namespace {

namespace k = gaugelab::gpt2::cuda;

struct Shape {
  std::int64_t rows, vocab, ld;
  const char* role;
};

std::vector<Shape> shapes(bool small) {
  if (!small) return {{4096, 50257, 50304, "a chunk of GPT-2's padded logits"}, {512, 50257, 50257, "unpadded: scalar path"}};
  // 9001 columns: 1125 16-byte loads wrap the 1024 threads (and 9001 the scalar path's), a scalar tail of 1.
  return {{5, 9001, 9008, "padded: 16-byte loads"}, {5, 9001, 9001, "unpadded: scalar path"}};
}

constexpr std::uint16_t kPadNaN = 0xffff;  // padding columns: NaN or huge, never to be read into the result
constexpr float kPadHuge = 1e4f;

struct Inputs {
  std::vector<std::uint16_t> logits;  // bf16 [rows, ld]
  std::vector<std::int64_t> targets;  // [rows], −1 ignored
  std::vector<float> scale;           // [rows]: 1/n_valid, 0 for an ignored row
};

// Logits N(0, 1) with one hot column per row placed where a partition or tail error would show (the first and
// last columns, each side of a 16-byte load, the scalar tail); targets on the hot column, anywhere, the last
// column, column 0, or ignored (−1). The hot logit is ln(2·vocab·e^½) (bf16), twice the mass of the others
// (Σ e^x ≈ vocab·e^½): its probability ≈ 2/3, so a lost or doubled hot column moves the loss by O(1), and
// p − 1 at a hot target keeps a third of its size (no cancellation in the gradient's float32).
Inputs make_inputs(const Shape& s, std::uint64_t seed) {
  Inputs in;
  in.logits.resize(static_cast<std::size_t>(s.rows * s.ld));
  in.targets.resize(static_cast<std::size_t>(s.rows));
  const std::int64_t v = s.vocab, tail = std::min(v - v % 8, v - 1);  // the scalar tail's first column
  const std::int64_t hot_at[] = {0, 7, 8, v - 1, v - 2, tail, tail - 1, -1};
  const float hot_logit = ref::bf16_to_float(ref::float_to_bf16(
      static_cast<float>(std::log(2.0 * static_cast<double>(v)) + 0.5)));
  parallel_blocks(s.rows, [&](std::int64_t, std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) {
      Rng g(seed, static_cast<std::uint64_t>(i));
      std::uint16_t* row = in.logits.data() + i * s.ld;
      std::int64_t hot = hot_at[i % 8];
      if (hot < 0) hot = g.below(v);
      for (std::int64_t j = 0; j < v; ++j)
        row[j] = j == hot ? ref::float_to_bf16(hot_logit) : ref::float_to_bf16(static_cast<float>(g.normal()));
      for (std::int64_t j = v; j < s.ld; ++j) row[j] = i % 2 == 0 ? kPadNaN : ref::float_to_bf16(kPadHuge);
      const std::int64_t pick[] = {hot, g.below(v), v - 1, -1, 0};
      in.targets[static_cast<std::size_t>(i)] = pick[(i / 8 + i) % 5];
    }
  });
  std::int64_t valid = 0;
  for (const std::int64_t t : in.targets) valid += t >= 0 ? 1 : 0;
  for (const std::int64_t t : in.targets) in.scale.push_back(t >= 0 ? static_cast<float>(1.0 / static_cast<double>(valid)) : 0.f);
  return in;
}

// Per row: the reference's lse and loss.
struct Reference {
  std::vector<double> lse, loss;
};

Reference reference(const Shape& s, const Inputs& in) {
  Reference out;
  out.lse.resize(static_cast<std::size_t>(s.rows));
  out.loss.resize(static_cast<std::size_t>(s.rows));
  parallel_blocks(s.rows, [&](std::int64_t, std::int64_t b, std::int64_t e) {
    std::vector<double> x(static_cast<std::size_t>(s.vocab));
    for (std::int64_t i = b; i < e; ++i) {
      for (std::int64_t j = 0; j < s.vocab; ++j)
        x[static_cast<std::size_t>(j)] = ref::bf16_to_float(in.logits[static_cast<std::size_t>(i * s.ld + j)]);
      const double lse = ref::ce_row_lse(x.data(), s.vocab);
      out.lse[static_cast<std::size_t>(i)] = lse;
      out.loss[static_cast<std::size_t>(i)] = ref::ce_row_loss(x.data(), lse, in.targets[static_cast<std::size_t>(i)]);
    }
  });
  return out;
}

// The gradient written over the logits against the reference's, element by element (padding must be 0).
double grad_err(const Shape& s, const Inputs& in, const Reference& rf, const std::vector<std::uint16_t>& grad) {
  std::vector<double> worst(static_cast<std::size_t>(block_count(s.rows)), 0.0);
  parallel_blocks(s.rows, [&](std::int64_t blk, std::int64_t b, std::int64_t e) {
    std::vector<double> x(static_cast<std::size_t>(s.ld)), rg(static_cast<std::size_t>(s.ld));
    double m = 0;
    for (std::int64_t i = b; i < e; ++i) {
      const auto ui = static_cast<std::size_t>(i);
      for (std::int64_t j = 0; j < s.vocab; ++j)
        x[static_cast<std::size_t>(j)] = ref::bf16_to_float(in.logits[static_cast<std::size_t>(i * s.ld + j)]);
      ref::ce_row_grad(x.data(), rf.lse[ui], s.vocab, s.ld, in.targets[ui], double{in.scale[ui]}, rg.data());
      for (std::int64_t j = 0; j < s.ld; ++j) {
        const double err = elem_rel(ref::bf16_to_float(grad[static_cast<std::size_t>(i * s.ld + j)]),
                                    rg[static_cast<std::size_t>(j)], kU16);
        if (!(err <= m)) m = err;
      }
    }
    worst[static_cast<std::size_t>(blk)] = m;
  });
  double m = 0;
  for (const double w : worst) m = std::max(m, w);
  return m;
}

std::int64_t changed(const std::vector<std::uint16_t>& a, const std::vector<std::uint16_t>& b) {
  std::int64_t n = 0;
  for (std::size_t i = 0; i < a.size(); ++i) n += a[i] != b[i] ? 1 : 0;
  return n;
}

void run_shape(const Shape& sh, const Inputs& in, const Reference& rf, bool write_grad, const Options& opt,
               CaseResult& r) {
  const auto n = static_cast<std::size_t>(sh.rows * sh.ld), rows = static_cast<std::size_t>(sh.rows);
  const auto pristine = DeviceArray<std::uint16_t>::from(in.logits);
  DeviceArray<std::uint16_t> logits(n);
  const auto targets = DeviceArray<std::int64_t>::from(in.targets);
  const auto scale = DeviceArray<float>::from(in.scale);
  DeviceArray<float> loss(rows);
  auto restore = [&] { device_copy(logits.get(), pristine.get(), logits.bytes()); };
  auto launch = [&] {
    return k::lm_head_ce_rows_bf16(logits.get(), sh.rows, sh.vocab, sh.ld, targets.get(), scale.get(), loss.get(),
                                   write_grad, device_stream());
  };
  std::vector<float> loss_runs[2];
  std::vector<std::uint16_t> out_runs[2];
  for (int run = 0; run < 2; ++run) {
    restore();
    loss.fill(run == 0 ? kFirstFill : kSecondFill);
    check_launch(launch(), run == 0 ? "run 1" : "run 2");
    loss_runs[run] = loss.to_host();
    out_runs[run] = logits.to_host();
  }
  r.rerun_checked = true;
  compare_reruns(r, "row_loss", loss_runs[0], loss_runs[1]);
  if (write_grad) compare_reruns(r, "grad", out_runs[0], out_runs[1]);

  r.checks.push_back({"row_loss", false, scale_rel_err(sh.rows, values_of(loss_runs[0]), rf.loss.data()), kTolF32Reduction});
  if (write_grad)
    r.checks.push_back({"grad", true, grad_err(sh, in, rf, out_runs[0]), kTolBf16, true});
  else  // the logits left as they were, bit for bit: the count of changed elements must be 0
    r.checks.push_back({"logits changed (count)", true, static_cast<double>(changed(out_runs[0], in.logits)), 0.0});

  // Timing, each run on restored logits: the logits read once (and the gradient written once), targets, scale, loss.
  const double bytes = 2.0 * static_cast<double>(sh.rows * sh.vocab) + (write_grad ? 2.0 * static_cast<double>(n) : 0.0) +
                       16.0 * static_cast<double>(sh.rows);
  const double ms = device_time_ms([&] { check_return(launch(), "timed run"); }, restore, opt.warmup, opt.reps);
  r.timings = {{"ce", ms, bytes}};
}

}  // namespace

void lm_head_ce_cases(Reporter& rep) {
  const Options& opt = rep.options();
  std::uint64_t seed = 0x4345;  // "CE"
  for (const Shape& sh : shapes(opt.small)) {
    ++seed;
    const std::string shape = std::to_string(sh.rows) + "x" + std::to_string(sh.vocab) + " ld " + std::to_string(sh.ld);
    // The inputs and the reference made once for both runs (with and without the gradient), inside the first
    // case that runs, so that a failure there is reported as that case's.
    std::optional<Inputs> in;
    std::optional<Reference> rf;
    auto run = [&](bool write_grad, CaseResult& r) {
      if (!in) {
        in = make_inputs(sh, seed);
        rf = reference(sh, *in);
      }
      run_shape(sh, *in, *rf, write_grad, opt, r);
    };
    run_case(rep, "lm_head_ce", shape, std::string("write_grad (") + sh.role + ")",
             [&](CaseResult& r) { run(true, r); });
    if (sh.ld != sh.vocab)  // the loss alone at the padded (production) shape
      run_case(rep, "lm_head_ce", shape, std::string("loss only (") + sh.role + ")", [&](CaseResult& r) { run(false, r); });
  }
}

}  // namespace gaugelab::kcheck
