// What the verbs of api.hpp share: loading a model for a run and reading token ids.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>

#include "gpt2/model/model.hpp"
#include "gpt2/model/vocab_ids.hpp"
#include "gpt2/use/api.hpp"
#include "gpt2/model/runtime.hpp"

namespace gaugelab::gpt2 {

struct LoadedModel {
  std::unique_ptr<GPT> model;
  c10::Device device = c10::Device(c10::kCPU);
  Precision precision = Precision::fp32;
  // The vocabulary stored beside the weights (a writer of a copy passes it on), and the translation of the ids
  // users and files speak (GPT-2's) to the model's rows: a --compact-vocab model's K renumbered ids.
  Vocabulary vocab;
  TokenIds ids;
};

/// Loads `checkpoint` (ours or Hugging Face's) onto the requested device, in eval mode, and prints
/// one line describing it to stderr.
LoadedModel load_for_run(const std::string& checkpoint, const ModelRunOptions& options);

/// --data as given: a token file as is (judged by its first bytes, whatever its name), or a prepared
/// directory's val.bin; anything else is a usage error naming the flag.
std::string token_file_of(const std::string& data);

/// --batches x --batch-size windows of T + 1 tokens must fit the distinct windows of the token file
/// (more only repeat windows, and --batches 1e12 once ran for ever): else a usage error naming --batches.
/// T = 0 checks the loosest bound (one window per token) before the model, and so T, is known.
void check_window_count(const std::string& data, std::int64_t batch_size, std::int64_t batches, std::int64_t T);

/// Mean next-token loss of lm over `batches` fixed [batch_size, T] batches whose windows are spread
/// evenly over the token file (the same windows for every model: comparable across checkpoints);
/// per-batch losses are appended to `per_batch`. Ids are translated for a --compact-vocab model; a file with
/// a token the model has no row for is refused first, in one line naming both.
/// A progress line goes to stderr every 10 s.
double validation_loss(const LoadedModel& lm, const std::string& data, std::int64_t batch_size, std::int64_t batches,
                       std::int64_t T, std::vector<double>& per_batch);

/// Token ids from text ("464" ...), each one the model has a row for (`ids`); `what` names the flag.
std::vector<std::int64_t> parse_token_ids(const std::vector<std::string>& text, const TokenIds& ids,
                                          const std::string& what);

/// [1, n] int64 tensor on `device`.
at::Tensor token_tensor(const std::vector<std::int64_t>& ids, c10::Device device);

}  // namespace gaugelab::gpt2
