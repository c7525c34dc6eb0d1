// The value a training run's summary keeps for a quantity never measured (no validation yet, no drift check before
// the run stopped): a quiet NaN, which the log reader and the analysis read as missing.
#pragma once

#include <limits>

namespace gaugelab::gpt2 {

inline double not_measured() { return std::numeric_limits<double>::quiet_NaN(); }

}  // namespace gaugelab::gpt2
