// Resuming a run: the settings it must share with the checkpoint it continues (the identity options of
// declare_train_options) and its planned schedule. The checkpoint itself is loaded by checkpoints.cpp.
#include "gpt2/train/resume.hpp"

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "io/options.hpp"

namespace gaugelab::gpt2 {

// Settings a resumed run must share with the run it continues are the options declared identity() (they
// decide the data order, the model, or the optimizer's trajectory); anything else (max-iters, cadences,
// threads) may change.
void check_resume_options(const nlohmann::json& saved, const nlohmann::json& now) {
  if (!saved.is_object() || !now.is_object()) return;
  for (const std::string& key : train_identity_keys())
    if (saved.contains(key) && now.contains(key) && saved[key] != now[key])
      throw io::UsageError("--resume: --" + key + " was " + saved[key].dump() + " in the run being resumed, now " +
                           now[key].dump() + " (start a new run in another --out to change it)");
  const std::vector<std::string> transient = train_transient_keys();
  for (const auto& [key, value] : now.items())
    if (saved.contains(key) && saved[key] != value && key != "max-iters" &&  // max-iters: resumed_schedule says it
        std::find(transient.begin(), transient.end(), key) == transient.end())
      std::cerr << "train: resume: " << key << " changed " << saved[key].dump() << " -> " << value.dump() << "\n";
}

// The schedule of a resumed run is the one its first launch planned (config.json trainer.schedule). A
// changed --max-iters moves the cosine's end only when lr-decay-iters is 0; that is refused unless
// --replan, which re-plans the cosine to the new end from the step reached, with a line saying so.
LrSchedule resumed_schedule(const TrainOptions& o, const nlohmann::json& saved, const LrSchedule& now, bool rank0) {
  if (!saved.contains("schedule") || !saved["schedule"].is_object()) return now;  // checkpoints from before
  const nlohmann::json& s = saved["schedule"];
  LrSchedule planned{s.at("lr").get<double>(), s.at("min_lr").get<double>(), s.at("warmup").get<std::int64_t>(),
                     s.at("decay_iters").get<std::int64_t>()};
  const std::int64_t old_max = s.value("max_iters", o.max_iters);
  if (planned.decay_iters == now.decay_iters) return planned;
  if (!o.replan)
    throw io::UsageError("--resume: --max-iters " + std::to_string(o.max_iters) + " moves the cosine's end from step " +
                         std::to_string(planned.decay_iters) + " (the run's --max-iters " + std::to_string(old_max) +
                         ") to " + std::to_string(now.decay_iters) +
                         "; add --replan to re-plan it, or give --lr-decay-iters " + std::to_string(planned.decay_iters) +
                         " to keep it");
  if (rank0)
    std::cerr << "train: resume: --replan: the cosine now reaches min-lr at step " << now.decay_iters << " (was "
              << planned.decay_iters << "); the lr changes from the next step on\n";
  return now;
}

}  // namespace gaugelab::gpt2
