// kernel_check: the three CUDA kernels of gpt2/model/cuda/ against their float64 references, bit-for-bit reruns and
// timings, with no LibTorch (tests/cuda/README.md).
//   kernel_check [--small] [--verbose] [--only SUBSTR] [--reps N]
// Prints one line per case and last "kernel-check: N passed, M failed". Exit 0: every case passed; 1: some case
// failed; 2: bad arguments (or --only matched nothing); 3: no usable device.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gpt2/model/cuda/ops_table.hpp"
#include "tests/cuda/check_device.hpp"
#include "tests/cuda/check_harness.hpp"

namespace {

using namespace gaugelab::kcheck;

int usage(const char* why) {
  std::fprintf(stderr, "kernel_check: %s\nusage: kernel_check [--small] [--verbose] [--only SUBSTR] [--reps N]\n", why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  bool reps_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--small") {
      opt.small = true;
    } else if (a == "--verbose") {
      opt.verbose = true;
    } else if (a == "--only" && i + 1 < argc) {
      opt.only = argv[++i];
    } else if (a == "--reps" && i + 1 < argc) {
      char* end = nullptr;
      const long v = std::strtol(argv[++i], &end, 10);
      if (end == nullptr || *end != '\0' || v < 1 || v > 1000) return usage("--reps takes a count from 1 to 1000");
      opt.reps = static_cast<int>(v);
      reps_given = true;
    } else {
      return usage(("unknown argument '" + a + "'").c_str());
    }
  }
  if (opt.small) {  // the small mode runs under the sanitizers: few timed runs
    opt.warmup = 1;
    if (!reps_given) opt.reps = 3;
  }

  try {
    device_init();
    std::printf("# device: %s\n", device_describe().c_str());
  } catch (const DeviceError& e) {
    std::printf("kernel-check: no usable device (%s)\n", e.what());
    return 3;
  }
  std::printf("# mode: %s; timing: median of %d runs after %d warm-up, each after an L2 flush\n",
              opt.small ? "small (sanitizer shapes)" : "full (GPT-2 124M shapes)", opt.reps, opt.warmup);
  std::fflush(stdout);

  Reporter rep(opt);
  layer_norm_cases(rep);
  lrm_weight_cases(rep);
  lm_head_ce_cases(rep);

  if (rep.passed() + rep.failed() == 0) return usage(("no case matches --only '" + opt.only + "'").c_str());
  int uncovered = 0;  // every CUDA op of the table has its cases (the whole run: --only leaves cases out)
  for (const gaugelab::gpt2::cuda::CudaOp& op : gaugelab::gpt2::cuda::kCudaOps)
    if (opt.only.empty() && !rep.ran(op.check)) {
      std::printf("kernel-check | %s | no case '%s' for this row of gpt2/model/cuda/ops_table.hpp | FAIL\n", op.name,
                  op.check);
      ++uncovered;
    }
  std::printf("kernel-check: %d passed, %d failed\n", rep.passed(), rep.failed() + uncovered);
  return rep.failed() + uncovered == 0 ? 0 : 1;
}
