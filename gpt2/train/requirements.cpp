// The model's requirements (requirements.hpp), one row each.
#include "gpt2/train/requirements.hpp"

#include <algorithm>
#include <stdexcept>

#include "gpt2/model/head_projection.hpp"
#include "gpt2/train/gaugefix.hpp"
#include "io/options.hpp"

namespace gaugelab::gpt2 {

const std::vector<ModelNeed>& model_needs() {
  using P = ModelPart;
  static const std::vector<ModelNeed> rows = {
      {P::qk_rows, [](const Condition&, const TrainOptions& o, bool fresh) {
         return std::string(fresh && o.qk_gauge_init > 0 ? "--qk-gauge-init" : "");
       }},
      {P::vo, [](const Condition&, const TrainOptions& o, bool) { return std::string(o.gaugefix_vo ? "--gaugefix-vo" : ""); }},
      {P::projectable, [](const Condition&, const TrainOptions& o, bool) {
         return o.grad_projection == GradProjection::none ? std::string() : "--grad-projection " + std::string(word(o.grad_projection));
       }},
      {P::qk_rows, [](const Condition& c, const TrainOptions&, bool) {
         return c.needs_qk_rows ? "--condition " + std::string(c.key) : std::string();
       }},
      {P::qk_rows, [](const Condition& c, const TrainOptions& o, bool) {
         return std::string(has_hook(c, StepHookKind::qk_clip) && o.qk_clip_on == QkClipOn::multipliers
                                ? "--qk-clip-on multipliers"
                                : "");
       }},
  };
  return rows;
}

std::string missing_part(ModelPart part, const ModelConfig& mc) {
  switch (part) {
    case ModelPart::qk_rows: return has_qk_row_multipliers(mc) ? "" : "needs row multipliers on q and k";
    case ModelPart::vo:
      return has_vo_multipliers(mc) ? "" : "needs row multipliers on v and columns on attn_out";
    case ModelPart::projectable:
      try {
        require_projectable(mc);
        return "";
      } catch (const std::invalid_argument& e) {
        return e.what();
      }
  }
  return "";
}

void check_model_needs(const Condition& c, const TrainOptions& o, const ModelConfig& mc, bool fresh) {
  if (std::find(c.optimizers.begin(), c.optimizers.end(), o.optimizer) == c.optimizers.end()) {
    std::string allowed;
    for (const core::RuleKind k : c.optimizers) allowed += (allowed.empty() ? "" : " or ") + std::string(word(k));
    throw io::UsageError("--condition " + std::string(c.key) + " runs under --optimizer " + allowed + ", not " +
                         word(o.optimizer));
  }
  for (const ModelNeed& n : model_needs()) {
    const std::string asked_by = n.asked_by(c, o, fresh);
    if (asked_by.empty()) continue;
    const std::string why = missing_part(n.part, mc);
    if (!why.empty()) throw io::UsageError(asked_by + ": " + why + " (--multipliers '" + mc.lrm.spec() + "')");
  }
}

}  // namespace gaugelab::gpt2
