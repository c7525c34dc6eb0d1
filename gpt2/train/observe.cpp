// The observe station of the loop: what a sampled step measures of the heads.
#include "gpt2/train/observe.hpp"

#include <algorithm>
#include <limits>

#include "gpt2/train/gaugefix.hpp"

namespace gaugelab::gpt2 {

void observe_heads(TrainRun& run, const LoopState& loop, StepWork& s) {
  s.row.attn_logit_max = s.row.logz_mean = std::numeric_limits<double>::quiet_NaN();
  if (!s.sample) return;
  TrainState& st = run.state;
  QkScales scales;
  if (run.has_heads) {
    scales = qk_head_scales(*run.model);
    const DriftValues d = qk_drift(scales);
    s.row.drift_max = d.max, s.row.drift_mean = d.mean;
    st.final_drift_max = d.max, st.final_drift_mean = d.mean;
    st.max_drift_max = std::max(st.max_drift_max, d.max);
  }
  run.model->train(false);
  // [L, H] on the CPU each: max |q·k|/√d_h (Wortsman's growth quantity) and max q·k/√d_h (what QK-Clip bounds)
  const auto [attn, attn_signed] = run.model->attention_logit_maxima(loop.probe);
  s.row.attn_logit_max = attn.max().item<double>();
  s.row.logz_mean = run.model->log_partition_mean(loop.probe);
  run.model->train(true);
  if (run.dist.rank == 0)
    run.log->append_heads(s.row.step, scales.s_q, scales.s_k, attn, qk_effective_log_ratio(*run.model), attn_signed);
}

}  // namespace gaugelab::gpt2
