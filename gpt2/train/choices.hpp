// The choices of `gaugelab train` (api.hpp TrainOptions), each an enum with its one table of words
// (core/choice.hpp): declare_train_options binds the field to the table, so the word is parsed once where the
// option is declared, --help lists the table's words, a wrong word is refused naming them, and the log and
// config.json record the word from the same row. The code compares the enum, never a string.
//
// The choices whose enum belongs to a lower floor use that floor's enum and table: --optimizer core::RuleKind
// (update_rule_table.hpp), --state-transport core::TransportMode (transport_mode.hpp), --grad-projection
// GradProjection (ops/grad_projection.hpp), --gelu, --qk-norm, --precision, --bf16-mode, --attention and the kernel
// flags (model/choices.hpp), --dist-backend (dist/dist_backend.hpp).
//
// No LibTorch here: the front door (cli/verb_train.cpp) reads these through api.hpp.
#pragma once

#include "core/choice.hpp"
#include "core/transport_mode.hpp"
#include "core/update_rule_table.hpp"
#include "gpt2/dist/dist_backend.hpp"
#include "gpt2/model/choices.hpp"
#include "gpt2/ops/grad_projection.hpp"

namespace gaugelab::gpt2 {

/// --fit-micro-batch, --cuda-graph.
enum class Switch { off, on };
inline const core::ChoiceTable<Switch>& switch_choices() {
  static const core::ChoiceTable<Switch> t = {{"on", Switch::on}, {"off", Switch::off}};
  return t;
}

/// --optimizer: the rule of the hidden matrices (AdamW on the rest either way).
inline const core::ChoiceTable<core::RuleKind>& optimizer_choices() {
  static const core::ChoiceTable<core::RuleKind> t = {{"adamw", core::RuleKind::adamw}, {"muon", core::RuleKind::muon}};
  return t;
}

/// --muon-qkv: W_Q, W_K, W_V orthogonalised apart, or c_attn as one matrix.
enum class MuonQkv { split, fused };
inline const core::ChoiceTable<MuonQkv>& muon_qkv_choices() {
  static const core::ChoiceTable<MuonQkv> t = {{"split", MuonQkv::split}, {"fused", MuonQkv::fused}};
  return t;
}

/// --quotient: condition E's full opposite Grams or their diagonals.
enum class QuotientGram { full, diagonal };
inline const core::ChoiceTable<QuotientGram>& quotient_choices() {
  static const core::ChoiceTable<QuotientGram> t = {{"full", QuotientGram::full}, {"diagonal", QuotientGram::diagonal}};
  return t;
}

/// --quotient-scale: the corrected blocks as they come, or at the raw increment's RMS (Erms).
enum class QuotientScale { none, rms };
inline const core::ChoiceTable<QuotientScale>& quotient_scale_choices() {
  static const core::ChoiceTable<QuotientScale> t = {{"none", QuotientScale::none}, {"rms", QuotientScale::rms}};
  return t;
}

/// --grad-projection (the enum and its table: ops/grad_projection.hpp).
inline const core::ChoiceTable<GradProjection>& grad_projection_choices() { return grad_projection_table(); }

/// --projection-target: what --grad-projection projects.
enum class ProjectionTarget { gradient, update };
inline const core::ChoiceTable<ProjectionTarget>& projection_target_choices() {
  static const core::ChoiceTable<ProjectionTarget> t = {{"gradient", ProjectionTarget::gradient},
                                                        {"update", ProjectionTarget::update}};
  return t;
}

/// --gaugefix-mode: one factor per head, per coordinate, or per head at equal effective norms (Beff).
enum class GaugeFixMode { head, coordinate, effective };
inline const core::ChoiceTable<GaugeFixMode>& gaugefix_mode_choices() {
  static const core::ChoiceTable<GaugeFixMode> t = {
      {"head", GaugeFixMode::head}, {"coordinate", GaugeFixMode::coordinate}, {"effective", GaugeFixMode::effective}};
  return t;
}

/// --magnitude: the control of s_Q·s_K (D: weight decay, Dcap: a cap).
enum class Magnitude { wd, cap };
inline const core::ChoiceTable<Magnitude>& magnitude_choices() {
  static const core::ChoiceTable<Magnitude> t = {{"wd", Magnitude::wd}, {"cap", Magnitude::cap}};
  return t;
}

/// --qk-clip-on: what carries QK-Clip's factor (qk_clip.hpp).
enum class QkClipOn { weights, multipliers };
inline const core::ChoiceTable<QkClipOn>& qk_clip_on_choices() {
  static const core::ChoiceTable<QkClipOn> t = {{"weights", QkClipOn::weights}, {"multipliers", QkClipOn::multipliers}};
  return t;
}

/// --state-transport: how GaugeFix moves the Adam moments (the enum and its table: core/transport_mode.hpp).
inline const core::ChoiceTable<core::TransportMode>& state_transport_choices() { return core::transport_mode_choices(); }

/// --spike-on: the gradient norm the instability rule watches.
enum class SpikeOn { total, clipped, multipliers };
inline const core::ChoiceTable<SpikeOn>& spike_on_choices() {
  static const core::ChoiceTable<SpikeOn> t = {
      {"total", SpikeOn::total}, {"clipped", SpikeOn::clipped}, {"multipliers", SpikeOn::multipliers}};
  return t;
}

/// The word of a choice (logs, the settings printout, messages), from its table.
inline const char* word(Switch v) { return core::choice_name(switch_choices(), v); }
inline const char* word(core::RuleKind v) { return core::choice_name(optimizer_choices(), v); }
inline const char* word(MuonQkv v) { return core::choice_name(muon_qkv_choices(), v); }
inline const char* word(QuotientGram v) { return core::choice_name(quotient_choices(), v); }
inline const char* word(QuotientScale v) { return core::choice_name(quotient_scale_choices(), v); }
inline const char* word(GradProjection v) { return core::choice_name(grad_projection_choices(), v); }
inline const char* word(ProjectionTarget v) { return core::choice_name(projection_target_choices(), v); }
inline const char* word(GaugeFixMode v) { return core::choice_name(gaugefix_mode_choices(), v); }
inline const char* word(Magnitude v) { return core::choice_name(magnitude_choices(), v); }
inline const char* word(QkClipOn v) { return core::choice_name(qk_clip_on_choices(), v); }
inline const char* word(core::TransportMode v) { return core::choice_name(state_transport_choices(), v); }
inline const char* word(SpikeOn v) { return core::choice_name(spike_on_choices(), v); }

}  // namespace gaugelab::gpt2
