#include "io/cpu_features.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

namespace gaugelab::io {

std::string cpu_bf16_matmul_flags(std::string_view cpuinfo) {
  std::istringstream lines{std::string(cpuinfo)};
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    const std::size_t colon = line.find(':');
    std::istringstream words(colon == std::string::npos ? std::string() : line.substr(colon + 1));
    std::string w, found;
    while (words >> w)
      if (std::find(kCpuBf16MatmulFlags.begin(), kCpuBf16MatmulFlags.end(), w) != kCpuBf16MatmulFlags.end())
        found += (found.empty() ? "" : " ") + w;
    return found.empty() ? "-" : found;
  }
  return "-";
}

std::string cpu_bf16_matmul_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::ostringstream text;
  text << in.rdbuf();
  return cpu_bf16_matmul_flags(text.str());
}

}  // namespace gaugelab::io
