// The stations of a run's set-up, each in its own file; setup_train (setup.cpp) calls them in order:
//   resume.cpp     which checkpoint a resumed run continues, what it must share with it, its schedule,
//                  and the checkpoint's trainer state (TrainState as JSON)
//   build_run.cpp  the data directory, the model (fresh, or --init-from weights), the memory check
//   report.cpp     the settings printout at the start and the summary at the end
//   matmul_peak.cpp  the MFU denominator measured on the run's device
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "gpt2/model/checkpoint.hpp"
#include "gpt2/model/safetensors.hpp"
#include "gpt2/train/setup.hpp"

namespace gaugelab::gpt2 {

// --- resume.cpp ---
/// Refuses a changed identity option (declare_train_options' identity marks) naming it; reports any
/// other changed setting on stderr.
void check_resume_options(const nlohmann::json& saved, const nlohmann::json& now);
LrSchedule resumed_schedule(const TrainOptions& o, const nlohmann::json& saved, const LrSchedule& now, bool rank0);
std::tuple<std::optional<std::string>, std::optional<Checkpoint>, std::optional<safetensors::File>>
newest_loadable_checkpoint(const std::string& out, c10::Device device, bool rank0);
bool failed_before_first_step(const std::string& out);

// --- build_run.cpp ---
std::string resolve_data_dir(const TrainOptions& o, bool rank0);
ModelConfig build_model_config(const TrainOptions& o, std::int64_t compact_vocab_size);
std::unique_ptr<GPT> init_from_weights(const TrainOptions& o, const VocabMap& vocab, c10::Device device);
void check_activation_memory(const ModelConfig& mc, std::int64_t batch_size, c10::Device device);

// --- report.cpp ---
void print_settings(const TrainRun& r, const std::string& resumed_from);

}  // namespace gaugelab::gpt2
