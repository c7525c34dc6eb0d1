// The W_eff kernels (gpt2/model/cuda/lrm_weight_kernel.hpp) at GPT-2 124M's matrices as model/lrm.cpp and
// model/lrm_weight_bf16.cpp call them: W̄ [out, in] float32; r [out] when a group has row (or scalar)
// multipliers; c [groups, in] when one has column multipliers, with groups = 3 for c_attn's q, k, v and 1
// elsewhere (and 1 whenever c is absent); the LM head's padded vocabulary; the widest input the backward takes.
#include <cstdint>
#include <string>
#include <vector>

#include "gpt2/model/cuda/lrm_weight_kernel.hpp"
#include "tests/cuda/check_device.hpp"
#include "tests/cuda/check_harness.hpp"
#include "tests/cuda/kernel_reference.hpp"

namespace gaugelab::kcheck {

namespace {

namespace k = gaugelab::gpt2::cuda;

struct Shape {
  std::int64_t out, in, groups;
  bool r, c;
  const char* role;
};

std::string flags_of(const Shape& s) {
  std::string f = s.r && s.c ? "r,c" : (s.r ? "r" : "c");
  return f + ",groups " + std::to_string(s.groups) + " (" + s.role + ")";
}

std::vector<Shape> shapes(bool small) {
  constexpr std::int64_t d = 768, wide = k::kLrmWeightMaxIn;
  if (!small)
    return {
        {3 * d, d, 3, true, true, "c_attn: q, k, v each r and c"},
        {3 * d, d, 1, true, false, "c_attn: row multipliers only"},
        {3 * d, d, 3, false, true, "c_attn: column multipliers only"},
        {d, d, 1, true, true, "attn c_proj"},
        {4 * d, d, 1, true, true, "mlp c_fc"},
        {d, 4 * d, 1, true, true, "mlp c_proj"},
        {50304, d, 1, true, true, "lm_head over the padded vocabulary"},
        {3 * 256, wide, 3, true, true, "widest input: 48 KB of shared memory"},
    };
  // 768 rows in 3 groups: 2-row chunks, 128 chunks per group over the 32 lanes of the chunk sum; 40 columns take
  // two 32-column blocks there; 260 columns wrap the 256 threads; 4096 rows take 16-row chunks.
  return {
      {3 * 256, 40, 3, true, true, "2-row chunks, 3 groups"},
      {3 * 256, 40, 1, true, false, "row multipliers only"},
      {3 * 256, 40, 3, false, true, "column multipliers only"},
      {512, 260, 1, true, true, "columns wrap the threads"},
      {4096, 24, 1, true, true, "16-row chunks"},
      {6, wide, 3, true, true, "widest input: 48 KB of shared memory"},
  };
}

struct Inputs {
  std::vector<float> w, r, c;      // [out, in]; [out] or empty; [groups, in] or empty
  std::vector<std::uint16_t> g;    // bf16 [out, in]: dL/dW_eff
};

// W̄ at GPT-2's initial scale, multipliers around 1 (of either sign now and then), G of any sign.
Inputs make_inputs(const Shape& s, std::uint64_t seed) {
  Inputs in;
  const auto n = static_cast<std::size_t>(s.out * s.in);
  in.w.resize(n);
  in.g.resize(n);
  parallel_blocks(s.out, [&](std::int64_t, std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) {
      Rng rng(seed, static_cast<std::uint64_t>(i));
      for (std::int64_t j = 0; j < s.in; ++j) {
        const auto at = static_cast<std::size_t>(i * s.in + j);
        in.w[at] = static_cast<float>(0.02 * rng.normal());
        in.g[at] = ref::float_to_bf16(static_cast<float>(1e-3 * rng.normal()));
      }
    }
  });
  Rng rng(seed, ~0ull);
  if (s.r)
    for (std::int64_t i = 0; i < s.out; ++i) in.r.push_back(static_cast<float>(1.0 + 0.3 * rng.normal()));
  if (s.c)
    for (std::int64_t j = 0; j < s.groups * s.in; ++j) in.c.push_back(static_cast<float>(1.0 + 0.3 * rng.normal()));
  return in;
}

struct Reference {
  std::vector<double> e, dw, dr, dc;
};

Reference reference(const Shape& s, const Inputs& in) {
  const std::vector<double> w = widen_f32(in.w), r = widen_f32(in.r), c = widen_f32(in.c), g = widen_bf16(in.g);
  const double* rp = s.r ? r.data() : nullptr;
  const double* cp = s.c ? c.data() : nullptr;
  Reference out;
  const auto n = static_cast<std::size_t>(s.out * s.in), nc = static_cast<std::size_t>(s.groups * s.in);
  out.e.resize(n);
  out.dw.resize(n);
  out.dr.assign(static_cast<std::size_t>(s.out), 0.0);
  const std::int64_t blocks = block_count(s.out);
  std::vector<std::vector<double>> pc(static_cast<std::size_t>(blocks));
  parallel_blocks(s.out, [&](std::int64_t blk, std::int64_t b, std::int64_t e) {
    auto& part = pc[static_cast<std::size_t>(blk)];
    part.assign(cp != nullptr ? nc : 0, 0.0);
    ref::lrm_weight_forward(w.data(), rp, cp, s.out, s.in, s.groups, b, e, out.e.data());
    ref::lrm_weight_backward(g.data(), w.data(), rp, cp, s.out, s.in, s.groups, b, e, out.dw.data(), out.dr.data(),
                             cp != nullptr ? part.data() : nullptr);
  });
  out.dc.assign(cp != nullptr ? nc : 0, 0.0);
  for (const auto& part : pc)
    for (std::size_t k2 = 0; k2 < part.size(); ++k2) out.dc[k2] += part[k2];
  return out;
}


void run_shape(const Shape& sh, std::uint64_t seed, const Options& opt, CaseResult& r) {
  const std::int64_t n = sh.out * sh.in;
  const auto un = static_cast<std::size_t>(n);
  const Inputs in = make_inputs(sh, seed);
  auto w = DeviceArray<float>::from(in.w), rr = DeviceArray<float>::from(in.r), cc = DeviceArray<float>::from(in.c);
  auto g = DeviceArray<std::uint16_t>::from(in.g);
  DeviceArray<std::uint16_t> e(un);
  DeviceArray<float> dw(un), dr(sh.r ? static_cast<std::size_t>(sh.out) : 0),
      dc(sh.c ? static_cast<std::size_t>(sh.groups * sh.in) : 0);
  // As the model's autograd Function: scratch only with c.
  DeviceArray<float> scratch(sh.c ? static_cast<std::size_t>(k::lrm_weight_scratch_floats(sh.out, sh.in, sh.groups)) : 0);
  void* st = device_stream();
  const float* rp = sh.r ? rr.get() : nullptr;
  const float* cp = sh.c ? cc.get() : nullptr;
  auto forward = [&] { return k::lrm_weight_forward(w.get(), rp, cp, e.get(), sh.out, sh.in, sh.groups, st); };
  auto backward = [&] {
    return k::lrm_weight_backward(g.get(), w.get(), rp, cp, dw.get(), sh.r ? dr.get() : nullptr,
                                  sh.c ? dc.get() : nullptr, sh.c ? scratch.get() : nullptr, sh.out, sh.in, sh.groups,
                                  st);
  };

  std::vector<std::uint16_t> e_runs[2];
  struct Bwd {
    std::vector<float> dw, dr, dc;
  } b[2];
  for (int run = 0; run < 2; ++run) {
    const unsigned char fill = run == 0 ? kFirstFill : kSecondFill;
    const std::string which = run == 0 ? ", run 1" : ", run 2";
    e.fill(fill);
    check_launch(forward(), "forward" + which);
    e_runs[run] = e.to_host();
    dw.fill(fill), dr.fill(fill), dc.fill(fill), scratch.fill(fill);
    check_launch(backward(), "backward" + which);
    b[run] = {dw.to_host(), dr.to_host(), dc.to_host()};
  }
  r.rerun_checked = true;
  compare_reruns(r, "fwd w_eff", e_runs[0], e_runs[1]);
  compare_reruns(r, "bwd dw", b[0].dw, b[1].dw);
  compare_reruns(r, "bwd dr", b[0].dr, b[1].dr);
  compare_reruns(r, "bwd dc", b[0].dc, b[1].dc);

  const Reference ref_out = reference(sh, in);
  const std::vector<std::uint16_t>& e0 = e_runs[0];
  r.checks.push_back({"w_eff", true, elem_rel_err(n, values_of_bf16(e0), ref_out.e.data(), kU16), kTolBf16Elementwise, true});
  r.checks.push_back({"dw", true, elem_rel_err(n, values_of(b[0].dw), ref_out.dw.data()), kTolF32Elementwise});
  if (sh.r) r.checks.push_back({"dr", false, scale_rel_err(sh.out, values_of(b[0].dr), ref_out.dr.data()), kTolF32Reduction});
  if (sh.c)
    r.checks.push_back(
        {"dc", false, scale_rel_err(sh.groups * sh.in, values_of(b[0].dc), ref_out.dc.data()), kTolF32Reduction});

  // Timing: bytes of each array once (dc's per-chunk partials written and read once).
  const double dn = static_cast<double>(n), dro = sh.r ? static_cast<double>(sh.out) : 0.0,
               dcn = sh.c ? static_cast<double>(sh.groups * sh.in) : 0.0;
  const double fwd_bytes = dn * (4 + 2) + 4 * (dro + dcn);
  const double bwd_bytes = dn * (2 + 4 + 4) + 8 * (dro + dcn) + 8.0 * static_cast<double>(scratch.size());
  const double fwd_ms = device_time_ms([&] { check_return(forward(), "forward (timed)"); }, {}, opt.warmup, opt.reps);
  const double bwd_ms = device_time_ms([&] { check_return(backward(), "backward (timed)"); }, {}, opt.warmup, opt.reps);
  r.timings = {{"fwd", fwd_ms, fwd_bytes}, {"bwd", bwd_ms, bwd_bytes}};
}

// An input wider than kLrmWeightMaxIn: the backward refuses it (cudaErrorInvalidValue) without a launch.
void run_guard(CaseResult& r) {
  constexpr std::int64_t out = 4, in = k::kLrmWeightMaxIn + 1;
  const auto n = static_cast<std::size_t>(out * in);
  DeviceArray<std::uint16_t> g(n);
  DeviceArray<float> w(n), rr(out), cc(in), dw(n), dr(out), dc(in), scratch(n);
  g.fill(0), w.fill(0), rr.fill(0), cc.fill(0);
  const int rc = k::lrm_weight_backward(g.get(), w.get(), rr.get(), cc.get(), dw.get(), dr.get(), dc.get(),
                                        scratch.get(), out, in, 1, device_stream());
  device_sync("after the refused backward");
  r.expect_refusal = device_error_text(device_invalid_value_code());
  r.note = "refused: " + (rc == 0 ? std::string("no (returned 0)") : device_error_text(rc));
  if (rc != device_invalid_value_code()) r.error = "expected a refusal with " + r.expect_refusal + ", got " + r.note;
}

}  // namespace

void lrm_weight_cases(Reporter& rep) {
  const Options& opt = rep.options();
  std::uint64_t seed = 0x4c524d;  // "LRM"
  for (const Shape& sh : shapes(opt.small)) {
    run_case(rep, "lrm_weight_fwd_bwd", std::to_string(sh.out) + "x" + std::to_string(sh.in), flags_of(sh),
             [&](CaseResult& r) { run_shape(sh, seed, opt, r); });
    ++seed;
  }
  run_case(rep, "lrm_weight_bwd_guard", "4x" + std::to_string(k::kLrmWeightMaxIn + 1), "(wider than the backward takes)",
           [&](CaseResult& r) { run_guard(r); });
}

}  // namespace gaugelab::kcheck
