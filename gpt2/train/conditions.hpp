// The training conditions of `gaugelab train --condition KEY`, one row each: the one place a condition
// is declared. The trainer's optimizer groups, its per-step hooks, the settings printout, the option
// checks, the log's summary, the grid scripts (which pass the key) and the analysis (which reads the
// key, label and title from the log) all read this table; nothing rebuilds a condition from flags.
//
// Adding a condition: one row here (key, title, flag bundle, Q/K decay, needs-Q/K-rows, hooks, the
// condition it is compared with, the optimizers it runs under), one hook file if it needs a new per-step hook (hook_registry.hpp says how),
// one test. QK-Clip was added that way (qk_clip.cpp, tests/train/test_train_qk_clip.cpp).
//
// No LibTorch here: the front door (cli/verb_train.cpp) reads the table for --help and the choices.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/update_rule_table.hpp"
#include "gpt2/train/hook_registry.hpp"  // StepHookKind: the hooks a row names

namespace gaugelab::gpt2 {

struct TrainOptions;

/// A flag the condition fixes, with its value (as the command line spells it).
struct FlagValue {
  const char* flag;
  const char* value;
};

struct Condition {
  const char* key;                   // --condition KEY; the log's summary "condition"
  const char* title;                 // "B: GaugeFix": legends, tables, the settings line
  const char* acts_on;               // the group or quantity it acts on, and whether the function is kept
  std::vector<FlagValue> bundle;     // flags this condition fixes; giving one with another value is refused
  bool decays_qk;                    // λ_lrm (--wd-multipliers) on the Q/K multipliers (seed 000 §4.1)
  bool needs_qk_rows;                // needs row multipliers on q and k (per-head scales)
  std::vector<StepHookKind> hooks;   // in the order they run
  const char* compared_with;         // the condition its difference is taken against ("" for the references)
  std::vector<core::RuleKind> optimizers = {core::RuleKind::adamw, core::RuleKind::muon};  // the --optimizer
                                     // values it runs under (the projections: AdamW only); the grids read this too
};

/// Every condition, in the order tables and figures list them.
const std::vector<Condition>& conditions();
/// The row of `key`; throws io::UsageError naming the keys when there is none.
const Condition& condition(std::string_view key);
/// Every key, in table order (the --condition choices).
std::vector<std::string> condition_keys();
bool has_hook(const Condition& c, StepHookKind hook);
/// The keys of the conditions that run `hook`, in table order (help texts, errors and mode rules name these,
/// never a typed list).
std::vector<std::string> condition_keys_with(StepHookKind hook);
/// Keys as a text list, comma-separated ("X, Y, Z").
std::string key_list(const std::vector<std::string>& keys);

/// How a run is named in figures and tables: its condition `c` (the row of o.condition) under its optimizer and start. The label
/// prefixes "M" for --optimizer muon and "o" for a gauge-offset start (--qk-gauge-init > 0), so "oMB" is
/// condition B under Muon from an offset start; reference is the label of the run it is compared with
/// (the same optimizer and start, the row's compared_with); empty for a reference itself.
struct ConditionLabel {
  std::string key, label, title, reference;
  int index = 0;  // the row's place in conditions()
};
ConditionLabel condition_label(const Condition& c, const TrainOptions& o);

/// The table as JSON rows (key, title, acts_on, bundle, decays_qk, needs_qk_rows, hooks, compared_with,
/// optimizers): what gaugelab.torch (through the torch library) and the analysis' grids (through
/// `gaugelab train --describe-conditions`, analysis/conditions.json) read instead of declaring the rows again.
std::string conditions_json();

/// The condition's one-line description for the settings printout, with the settings its hooks read.
std::string describe_condition(const Condition& c, const TrainOptions& o);

}  // namespace gaugelab::gpt2
