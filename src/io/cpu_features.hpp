// What this machine's CPU can do that a run's arithmetic depends on: its bf16 matmul instructions. One table, read by
// the trainer (logged in each run's summary as cpu_bf16), by `gaugelab info` (its "cpu bf16" line) and, through
// that line, by the grid runner that refuses a grid declared for such a CPU elsewhere.
#pragma once

#include <array>
#include <string>
#include <string_view>

namespace gaugelab::io {

/// The /proc/cpuinfo flags that give a CPU bf16 dot products accumulated in float32 (what native bf16 is on the
/// CPU, as on a GPU's tensor cores).
inline constexpr std::array<std::string_view, 2> kCpuBf16MatmulFlags = {"avx512_bf16", "amx_bf16"};

/// Those of kCpuBf16MatmulFlags among the first "flags" line of `cpuinfo` (/proc/cpuinfo's text), space-separated in
/// that line's order, or "-" when it has none (or no flags line).
std::string cpu_bf16_matmul_flags(std::string_view cpuinfo);

/// The same for this machine's /proc/cpuinfo ("-" when it cannot be read).
std::string cpu_bf16_matmul_flags();

}  // namespace gaugelab::io
