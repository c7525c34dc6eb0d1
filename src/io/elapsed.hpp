// Wall-clock seconds since a steady-clock instant: the `seconds` summaries and progress lines of every verb.
#pragma once

#include <chrono>

namespace gaugelab::io {

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace gaugelab::io
