// Building a run (build_run.cpp): its data directory and its model (fresh, or --init-from weights). Whether its
// micro-batch fits in memory: micro_batch.hpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <c10/core/Device.h>

#include "gpt2/model/config.hpp"
#include "gpt2/model/model.hpp"
#include "gpt2/train/api.hpp"
#include "gpt2/train/data_loader.hpp"

namespace gaugelab::gpt2 {

/// The directory a run reads: `data` (--data) as given, or for synthetic:N the corpus rank 0 prepares into
/// `out`/data when it is not there yet.
std::string resolve_data_dir(const std::string& data, const std::string& out, bool rank0);
ModelConfig build_model_config(const TrainOptions& o, std::int64_t compact_vocab_size);

/// What a start from weights (--init-from) reads of the options, gathered once by init_from_options: the loading
/// takes this, not the whole options.
struct InitFrom {
  std::string dir;          // --init-from: our checkpoint or a Hugging Face GPT-2 directory
  std::string multipliers;  // --multipliers: the placement the run trains (LrmPlacement spec)
  std::int64_t n_layer = 0, n_head = 0, n_embd = 0, block_size = 0, vocab_size = 0;  // size flags given; 0: none
  double dropout = 0.0;     // --dropout, set on the loaded model
  std::string data;         // --data, named where the vocabularies disagree
  bool compact_vocab = false;
};
InitFrom init_from_options(const TrainOptions& o);
/// The model of `w.dir` on `device`, its multipliers placed as `w.multipliers` says and its vocabulary checked
/// against the data's (`vocab`); see build_run.cpp.
std::unique_ptr<GPT> init_from_weights(const InitFrom& w, const VocabMap& vocab, c10::Device device);

}  // namespace gaugelab::gpt2
