// Building a run: its data directory (synthetic:N prepared into OUT/data) and its model (fresh from the
// options, or --init-from weights).
#include "gpt2/train/build_run.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <tuple>

#include <ATen/core/grad_mode.h>

#include "data/prepare.hpp"
#include "gpt2/model/model_dir.hpp"
#include "gpt2/model/vocab_layout.hpp"
#include "io/options.hpp"

namespace gaugelab::gpt2 {

namespace fs = std::filesystem;

std::string resolve_data_dir(const std::string& data, const std::string& out, bool rank0) {
  const std::optional<std::int64_t> docs = synthetic_docs(data);
  if (!docs) return data;
  const std::string dir = out + "/data";
  if (rank0 && !(fs::exists(dir + "/train.bin") && fs::exists(dir + "/val.bin"))) {
    data::PrepareOptions p;
    p.synthetic = true;
    p.synthetic_options.n_docs = static_cast<std::size_t>(*docs);
    p.out_dir = dir;
    p.write_llmc = false;
    p.progress = false;
    p.force = true;
    const data::PrepareResult r = data::run_prepare(p);
    std::cout << "data       synthetic corpus: " << r.train.tokens << " train + " << r.val.tokens << " val tokens -> "
              << dir << "\n";
  }
  return dir;
}

ModelConfig build_model_config(const TrainOptions& o, std::int64_t compact_vocab_size) {
  ModelConfig mc = ModelConfig::preset(o.model);
  if (o.n_layer > 0) mc.n_layer = o.n_layer;
  if (o.n_head > 0) mc.n_head = o.n_head;
  if (o.n_embd > 0) mc.n_embd = o.n_embd;
  if (o.block_size > 0) mc.block_size = o.block_size;
  if (o.vocab_size > 0) mc.vocab_size = o.vocab_size;
  if (compact_vocab_size > 0) mc.vocab_size = compact_vocab_size;
  mc.lrm = LrmPlacement::parse(o.multipliers);
  mc.dropout = o.dropout;
  mc.bias = o.bias;
  mc.gelu = o.gelu;
  mc.qk_norm = o.qk_norm;
  try {
    mc.validate();
  } catch (const std::exception& e) {
    throw io::UsageError(std::string("model: ") + e.what());
  }
  return mc;
}

// The options a start from weights reads, taken once.
InitFrom init_from_options(const TrainOptions& o) {
  InitFrom w;
  w.dir = o.init_from;
  w.multipliers = o.multipliers;
  w.n_layer = o.n_layer, w.n_head = o.n_head, w.n_embd = o.n_embd, w.block_size = o.block_size;
  w.vocab_size = o.vocab_size;
  w.dropout = o.dropout;
  w.data = o.data;
  w.compact_vocab = o.compact_vocab;
  return w;
}

// --init-from DIR: the weights (and architecture) of our checkpoint or a Hugging Face GPT-2 directory.
// Multipliers: as stored when the checkpoint's placement is --multipliers; otherwise the stored ones are
// merged into their weights (the function is unchanged) and --multipliers' placement starts at 1. A
// Hugging Face directory has none: --multipliers' placement at 1. Size flags that disagree with DIR,
// and a compact vocabulary that differs from the data's, are refused with one line; a model over GPT-2
// ids with a --compact-vocab corpus keeps the rows of the corpus's ids (vocab_layout.hpp).
std::unique_ptr<GPT> init_from_weights(const InitFrom& w, const VocabMap& vocab, c10::Device device) {
  const LrmPlacement want = LrmPlacement::parse(w.multipliers);
  ModelDir source = read_model_dir(w.dir, c10::Device(c10::kCPU), ModelDirKinds::any, want);
  std::vector<std::int32_t> ids;
  for (const std::int64_t id : source.vocabulary().ids) ids.push_back(static_cast<std::int32_t>(id));
  std::unique_ptr<GPT> m = std::move(source.model);
  if (ids.empty() && !vocab.ids.empty()) {
    // A model over GPT-2 ids fine-tuned on a --compact-vocab corpus: keep the rows of the corpus's ids.
    const std::vector<std::int64_t> keep(vocab.ids.begin(), vocab.ids.end());
    const TokenIds rows(Vocabulary{}, m->config().vocab_size, w.dir);
    try {
      rows.to_model(*std::max_element(keep.begin(), keep.end()), "--init-from with --data " + w.data);
    } catch (const std::runtime_error& e) {
      throw io::UsageError(e.what());
    }
    m = select_vocab_rows(*m, keep);
    ids = vocab.ids;
  }
  const ModelConfig& c = m->config();
  for (const auto& [flag, given, have] : {std::tuple{"n-layer", w.n_layer, c.n_layer}, {"n-head", w.n_head, c.n_head},
                                          {"n-embd", w.n_embd, c.n_embd}, {"block-size", w.block_size, c.block_size},
                                          {"vocab-size", w.vocab_size, c.vocab_size}})
    if (given > 0 && given != have)
      throw io::UsageError(std::string("--init-from ") + w.dir + " has " + flag + " " + std::to_string(have) +
                           ", --" + flag + " says " + std::to_string(given) + " (leave size flags out with --init-from)");
  if (ids != vocab.ids)
    throw io::UsageError("--init-from " + w.dir + ": its vocabulary (" + vocabulary_name(ids.size()) +
                         ") is not the one --data " + w.data + " gives this run (" + vocabulary_name(vocab.ids.size()) +
                         (w.compact_vocab ? ")" : "; --compact-vocab reads the data's ids as a compact vocabulary)"));
  if (c.lrm.spec() != want.spec()) {  // re-place the multipliers: merge, then copy every other tensor
    m->merge_multipliers();
    ModelConfig nc = c;
    nc.lrm = want;
    try {
      nc.validate();
    } catch (const std::exception& e) {
      throw io::UsageError(std::string("--init-from with --multipliers ") + w.multipliers + ": " + e.what());
    }
    auto placed = std::make_unique<GPT>(nc, 0, /*initialise=*/false);  // multipliers 1; weights copied below
    std::map<std::string, at::Tensor> src;
    for (auto& [name, t] : m->named_parameters()) src.emplace(name, t);
    at::NoGradGuard no_grad;
    placed->visit([&](const std::string& name, at::Tensor& t, ParamRole role) {
      const bool mult = role == ParamRole::multiplier_qk || role == ParamRole::multiplier_other;
      if (!mult && src.count(name)) t.copy_(src.at(name));
    });
    m = std::move(placed);
  }
  m->set_dropout(w.dropout);
  m->to(device);
  return m;
}

}  // namespace gaugelab::gpt2
