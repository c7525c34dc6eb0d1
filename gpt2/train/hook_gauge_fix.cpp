// The GaugeFix hooks (the conditions whose row lists gauge_fix or qk_cap): every --gaugefix-every steps, after the update,
//   gauge_fix  the per-head Q/K multiplier gauge (R+)^h moved to s_Q = s_K (or, --gaugefix-mode
//              coordinate, the full diagonal gauge per coordinate; effective, the per-head gauge moved to
//              equal norms of the effective Q and K maps, gaugefix.hpp), the V/O pair too with --gaugefix-vo,
//              the Adam moments transported as --state-transport says (gaugefix.hpp);
//   qk_cap     then each head's s_Q·s_K capped at --qk-cap (Dcap's magnitude control: not a gauge move).
#include "gpt2/train/hook_gauge_fix.hpp"

#include "core/transport_mode.hpp"
#include "gpt2/train/gaugefix.hpp"
#include "gpt2/train/step_hook.hpp"

namespace gaugelab::gpt2 {

namespace {

class GaugeFixHook : public StepHook {
 public:
  explicit GaugeFixHook(const TrainOptions& o) : transport_(o.state_transport) {}
  bool after_update(const StepContext& c) override {
    const TrainOptions& o = c.options;
    if ((c.it + 1) % o.gaugefix_every != 0) return false;
    if (o.gaugefix_mode == GaugeFixMode::coordinate) gauge_fix_coordinates(c.model, o.gaugefix_eps);
    else if (o.gaugefix_mode == GaugeFixMode::effective) gauge_fix_effective(c.model, o.gaugefix_eps);
    else gauge_fix(c.model, o.gaugefix_eps, transport_, c.moments);
    if (o.gaugefix_vo) gauge_fix_vo(c.model, o.gaugefix_eps);
    return true;
  }

 private:
  core::TransportMode transport_;
};

class QkCapHook : public StepHook {
 public:
  bool after_update(const StepContext& c) override {
    if ((c.it + 1) % c.options.gaugefix_every != 0) return false;  // the cap follows the fix's cadence
    cap_qk_product(c.model, c.options.qk_cap);
    return true;
  }
};

}  // namespace

std::unique_ptr<StepHook> make_gauge_fix_hook(const TrainOptions& o) { return std::make_unique<GaugeFixHook>(o); }
std::unique_ptr<StepHook> make_qk_cap_hook(const TrainOptions&) { return std::make_unique<QkCapHook>(); }

}  // namespace gaugelab::gpt2
