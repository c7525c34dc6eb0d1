// The parity table (ggml's test-backend-ops, for this project): each row pairs one LibTorch tensor
// operation of the GPT-2 tier with its reference in the core (Eigen, float64), run on the same inputs,
// and states the tolerance of their agreement and why it is that. test_parity.cpp runs every row on
// the CPU, and on CUDA too when gpt2::cuda_present() (the tensor op on the GPU with the same inputs copied
// there, its result copied back and compared with the same core reference); a row marked cuda_only runs on
// CUDA alone.
//
// Adding an op is one row: a ParityRow in one of the parity_rows_*.cpp files (grouped by topic).
#pragma once

#include <functional>
#include <vector>

#include <c10/core/Device.h>

namespace gaugelab::parity {

struct ParityRow {
  const char* op;         // the tensor operation (gpt2::...), unique in the table
  const char* reference;  // its core reference (core::...)
  const char* shapes;     // the inputs' shapes
  const char* dtype;      // the tensor op's dtype against the reference's
  double tolerance;       // the row passes when max_error(device) <= tolerance
  const char* why;        // the reason for that tolerance
  /// Runs the tensor op on `device` (inputs drawn on the CPU from fixed seeds, copied there) and returns
  /// its largest error against the core reference, in the measure the tolerance is stated in. Throws
  /// std::runtime_error when a side condition of the comparison fails (the inputs do not exercise it,
  /// or an invariant stated with it breaks); the table reports that as a failure of the row.
  std::function<double(c10::Device)> max_error;
  /// Runs on CUDA only (a row at production shapes, whose CPU run would test ATen's ops alone at a cost): the CPU
  /// line says it was skipped.
  bool cuda_only = false;
};

/// Every row, in table order.
const std::vector<ParityRow>& parity_rows();

// The rows of each topic (parity_rows_<topic>.cpp).
std::vector<ParityRow> gauge_rows();       // head gauges, multiplier pairings (gpt2/model/head_gauge.hpp)
std::vector<ParityRow> gaugefix_rows();    // GaugeFix and its state transport (gpt2/train/gaugefix.hpp)
std::vector<ParityRow> projection_rows();  // gradient projection (gpt2/model/head_projection.hpp)
std::vector<ParityRow> quotient_rows();    // condition E's correction (gpt2/train/quotient_update.hpp)
std::vector<ParityRow> optimizer_rows();   // Muon (gpt2/train/muon.hpp)
std::vector<ParityRow> qk_clip_rows();     // QK-Clip (gpt2/train/qk_clip.hpp)
std::vector<ParityRow> qk_balance_rows();  // effective Q/K imbalance and its GaugeFix (gpt2/train/gaugefix.hpp)
std::vector<ParityRow> kernel_rows();      // our CUDA kernels against their references (gpt2/model/cuda/)
std::vector<ParityRow> lrm_kernel_rows();  // the multipliers' W_eff kernel (gpt2/model/cuda/lrm_weight_kernel.hpp)

}  // namespace gaugelab::parity
