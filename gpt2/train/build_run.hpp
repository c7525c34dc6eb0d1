// Building a run (build_run.cpp): its data directory, its model (fresh, or --init-from weights), the check
// that one micro-batch fits in memory, and the one-line message of a step that ran out of device memory.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include <c10/core/Device.h>

#include "gpt2/model/config.hpp"
#include "gpt2/model/model.hpp"
#include "gpt2/train/api.hpp"
#include "gpt2/train/data_loader.hpp"

namespace gaugelab::gpt2 {

std::string resolve_data_dir(const TrainOptions& o, bool rank0);
ModelConfig build_model_config(const TrainOptions& o, std::int64_t compact_vocab_size);
std::unique_ptr<GPT> init_from_weights(const TrainOptions& o, const VocabMap& vocab, c10::Device device);
void check_activation_memory(const ModelConfig& mc, std::int64_t batch_size, c10::Device device);
/// A device allocation that failed inside a step (c10::OutOfMemoryError: CUDA's caching allocator) as one line
/// naming the micro-batch and the flags to lower; `what` is LibTorch's message, its first line kept.
std::runtime_error out_of_memory_error(const std::string& what, std::int64_t batch_size, std::int64_t tokens,
                                       std::int64_t grad_accum, c10::Device device);

}  // namespace gaugelab::gpt2
