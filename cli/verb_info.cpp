// `gaugelab info`: what this build is and what it runs on.
#include <iostream>

#include "io/build_info.hpp"
#include "io/cpu_features.hpp"
#include "io/options.hpp"
#include "io/run_flags.hpp"
#include "verbs.hpp"

#ifdef GAUGELAB_WITH_TORCH
#include "gpt2/model/torch_info.hpp"
#endif

namespace gaugelab::cli {

int verb_info(const Args& args) {
#ifndef GAUGELAB_WITH_TORCH
  exec_torch_build();  // the LibTorch half reports everything below and its LibTorch; returns if absent
#endif
  io::Options opts("info", "Prints the build (version, git sha, build type), the cores OpenMP sees, the CPU's bf16 "
                           "matmul instructions (- for none) and, when built with the GPT-2 tier, the LibTorch "
                           "version and devices.");
  if (!opts.parse(args)) return 0;
  std::cout << "gaugelab   " << io::kVersion << " (git " << io::git_sha() << ", " << io::kBuildType << ")\n"
            << "cores      " << io::available_cores() << "\n"
            << "cpu bf16   " << io::cpu_bf16_matmul_flags() << "\n";
#ifdef GAUGELAB_WITH_TORCH
  std::cout << gpt2::torch_info();
#else
  std::cout << "libtorch   not built (GAUGELAB_WITH_TORCH=OFF)\n";
#endif
  return 0;
}

int not_built(const char* verb, const char* what) {
  exec_torch_build();  // returns only when no `gaugelab-torch` is beside this executable
  std::cerr << "gaugelab " << verb << ": not built yet in this version (" << what << ")\n";
  return 1;
}

}  // namespace gaugelab::cli
