// The CPU's bf16 matmul instructions, read from /proc/cpuinfo's text: the one reading the trainer logs (cpu_bf16),
// `gaugelab info` prints and the grid runner asks for before a grid declared for such a CPU.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>

#include "io/cpu_features.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using gaugelab::io::cpu_bf16_matmul_flags;
using gaugelab::io::kCpuBf16MatmulFlags;

TEST_CASE("cpu features: the bf16 matmul flags of the first flags line, in its order, or -") {
  CHECK(cpu_bf16_matmul_flags("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16 avx512_vnni\n") ==
        "avx512_bf16");
  CHECK(cpu_bf16_matmul_flags("flags\t\t: fpu sse2 amx_bf16 amx_tile avx512_bf16\n") == "amx_bf16 avx512_bf16");
  CHECK(cpu_bf16_matmul_flags("flags\t\t: fpu sse2 avx2 avx512f avx512_vnni\n") == "-");
  CHECK(cpu_bf16_matmul_flags("flags\t\t: avx512_bf16x amx_bf16_tile\n") == "-");  // whole words only
  CHECK(cpu_bf16_matmul_flags("processor : 0\n") == "-");                           // no flags line
  CHECK(cpu_bf16_matmul_flags("flags: fpu\nflags: avx512_bf16\n") == "-");          // the first line's only
  CHECK(cpu_bf16_matmul_flags("flags without a colon avx512_bf16\n") == "-");
  CHECK(cpu_bf16_matmul_flags("") == "-");
  // This machine's: "-", or words of the table, each once.
  const std::string here = cpu_bf16_matmul_flags();
  INFO(here);
  if (here != "-") {
    std::istringstream words(here);
    std::set<std::string> seen;
    for (std::string w; words >> w;) {
      CHECK(std::find(kCpuBf16MatmulFlags.begin(), kCpuBf16MatmulFlags.end(), w) != kCpuBf16MatmulFlags.end());
      CHECK(seen.insert(w).second);
    }
    CHECK(!seen.empty());
  }
}

}  // namespace GAUGELAB_TU
