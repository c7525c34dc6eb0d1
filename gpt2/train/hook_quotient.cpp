// The quotient hook (condition E, seed 003 §3, §7): the attention weights are snapshot before the
// optimizer's step, and right after it each head's Q/K (and V/O) increments are corrected by the
// opposite Gram (quotient_update.hpp): part of the step, so the update ratios see the corrected step.
#include "gpt2/train/hook_quotient.hpp"

#include "gpt2/train/quotient_update.hpp"
#include "gpt2/train/step_hook.hpp"

namespace gaugelab::gpt2 {

namespace {

class QuotientHook : public StepHook {
 public:
  void before_update(const StepContext& c) override { before_ = snapshot_attention(c.model); }
  void correct_update(const StepContext& c) override {
    const TrainOptions& o = c.options;
    QuotientUpdate q;
    q.full = o.quotient == QuotientGram::full && c.it % o.quotient_every == 0;
    q.damping = o.quotient_damping;
    q.vo = o.quotient_vo;
    q.match_rms = o.quotient_scale == QuotientScale::rms;
    correct_attention_increments(c.model, before_, q);
    before_ = AttentionSnapshot{};
  }

 private:
  AttentionSnapshot before_;
};

}  // namespace

std::unique_ptr<StepHook> make_quotient_hook(const TrainOptions&) { return std::make_unique<QuotientHook>(); }

}  // namespace gaugelab::gpt2
