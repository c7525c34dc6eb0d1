// The collective backend of data parallelism (--dist-backend), an enum with its one table of words
// (core/choice.hpp). No LibTorch here: the trainer's LibTorch-free options (train/api.hpp) hold it.
#pragma once

#include "core/choice.hpp"

namespace gaugelab::gpt2 {

/// auto (nccl on CUDA devices, gloo otherwise: resolve_backend, data_parallel.hpp), gloo or nccl.
enum class DistBackend { automatic, gloo, nccl };
inline const core::ChoiceTable<DistBackend>& dist_backend_choices() {
  static const core::ChoiceTable<DistBackend> t = {
      {"auto", DistBackend::automatic}, {"gloo", DistBackend::gloo}, {"nccl", DistBackend::nccl}};
  return t;
}
inline const char* word(DistBackend v) { return core::choice_name(dist_backend_choices(), v); }

}  // namespace gaugelab::gpt2
