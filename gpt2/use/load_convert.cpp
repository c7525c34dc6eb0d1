// `gaugelab export` and `import`, and the helpers every model verb shares (loaded_model.hpp).
#include <cstdio>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include <ATen/ops/from_blob.h>

#include "gpt2/model/checkpoint.hpp"
#include "gpt2/model/interchange.hpp"
#include "gpt2/model/model_dir.hpp"
#include <nlohmann/json.hpp>
#include "gpt2/use/loaded_model.hpp"
#include "gpt2/model/vocab_layout.hpp"
#include "gpt2/model/vocab_ids.hpp"
#include "io/options.hpp"

namespace gaugelab::gpt2 {

LoadedModel load_for_run(const std::string& checkpoint, const ModelRunOptions& o) {
  if (checkpoint.empty()) throw io::UsageError("no checkpoint given");
  LoadedModel out;
  out.device = parse_device(o.device);
  out.precision = o.precision;
  ModelDir source = read_model_dir(checkpoint, out.device, ModelDirKinds::any, LrmPlacement::parse(o.multipliers));
  out.model = std::move(source.model);
  out.model->train(false);
  std::cerr << "model      " << checkpoint << ": " << describe_model(*out.model) << "\n"
            << "runs on    " << out.device.str() << ", " << precision_name(out.precision) << "\n";
  out.vocab = source.vocabulary();
  out.ids = TokenIds(out.vocab, out.model->config().vocab_size, checkpoint);
  if (out.ids.compact())
    std::cerr << "vocabulary compact: " << out.vocab.ids.size()
              << " ids (trained with --compact-vocab); ids in and out are GPT-2's\n";
  if (!out.vocab.trained.empty())
    std::cerr << "vocabulary laid over GPT-2's ids from " << out.vocab.trained.size()
              << " trained ids (export --vocab full): the others have logit 0 and share the softmax, as in "
                 "transformers; `import` restores the compact model\n";
  return out;
}

std::vector<std::int64_t> parse_token_ids(const std::vector<std::string>& text, const TokenIds& ids,
                                          const std::string& what) {
  std::vector<std::int64_t> out;
  for (const std::string& s : text) {
    const std::int64_t id = io::parse_int(s, what);
    try {
      ids.to_model(id, what);
    } catch (const std::runtime_error& e) {
      throw io::UsageError(e.what());  // a flag's value: a usage error
    }
    out.push_back(id);
  }
  return out;
}

at::Tensor token_tensor(const std::vector<std::int64_t>& ids, c10::Device device) {
  std::vector<std::int64_t> copy = ids;
  return at::from_blob(copy.data(), {1, static_cast<std::int64_t>(copy.size())}, at::kLong).clone().to(device);
}

void run_export(const ExportOptions& o) {
  safetensors::DType dtype;
  if (o.dtype == "F32") dtype = safetensors::DType::F32;
  else if (o.dtype == "BF16") dtype = safetensors::DType::BF16;
  else if (o.dtype == "F16") dtype = safetensors::DType::F16;
  else throw io::UsageError("--dtype must be F32, BF16 or F16");
  io::prepare_output_path(o.out, o.force, {o.checkpoint});
  ModelDir source = read_model_dir(o.checkpoint, c10::Device(c10::kCPU));
  std::unique_ptr<GPT> model = std::move(source.model);
  std::cerr << "model      " << o.checkpoint << ": " << describe_model(*model) << "\n";
  const std::int64_t V = model->config().vocab_size;
  Vocabulary vocab = source.vocabulary();
  // A Hugging Face GPT-2 applies no id map: transformers takes the rows' index for the GPT-2 id. A model whose
  // rows are not GPT-2's ids is written only in a layout transformers reads right, as the flag says.
  if (vocab.compact()) {
    const std::string K = std::to_string(vocab.ids.size());
    if (o.vocab != "full")
      throw io::UsageError(o.checkpoint + " has a compact vocabulary of " + K +
                           " trained ids (--compact-vocab), which transformers would read as GPT-2 ids 0.." +
                           std::to_string(vocab.ids.size() - 1) + "; --vocab full lays its rows at their GPT-2 ids "
                           "among 50257 (ids its data never had get logit 0, so transformers' loss is not the "
                           "checkpoint's; `import` of that export restores the checkpoint exactly)");
    model = expand_to_gpt2_vocab(*model, vocab.ids);
    vocab = Vocabulary{{}, vocab.ids};
    std::cerr << "vocabulary " << o.checkpoint << " was trained on " << K
              << " GPT-2 ids (--compact-vocab); exported over all 50257 with their rows at their ids and the others 0 "
                 "(logit 0 for ids its data never had; config.json gaugelab_trained_ids lists the trained ones)\n";
  } else if (V < kGpt2Vocab && !vocab.own && o.vocab != "own") {
    throw io::UsageError(o.checkpoint + " has " + std::to_string(V) +
                         " token rows and no GPT-2 id map, which transformers would read as GPT-2 ids 0.." +
                         std::to_string(V - 1) + ": if it was trained with --compact-vocab, an older gaugelab "
                         "dropped its map (write it again from the trained checkpoint); if its ids are its own "
                         "tokenizer's (train --vocab-size), export with --vocab own");
  } else if (V < kGpt2Vocab) {
    vocab.own = true;  // said by the checkpoint or by --vocab own: a reader of the export is told too
  }
  export_hf(*model, o.out, vocab, dtype);
  std::cout << "exported " << o.checkpoint << " -> " << o.out << "/model.safetensors + config.json (" << o.dtype
            << ", multipliers merged into the weights)\n";
}

void run_import(const ImportOptions& o) {
  const LrmPlacement lrm = LrmPlacement::parse(o.multipliers);
  io::prepare_output_path(o.out, o.force, {o.source});
  ModelDir source = read_model_dir(o.source, c10::Device(c10::kCPU), ModelDirKinds::hugging_face, lrm);
  std::unique_ptr<GPT> model = std::move(source.model);
  std::cerr << "model      " << o.source << ": " << describe_model(*model) << "\n";
  Vocabulary vocab = source.vocabulary();
  if (!vocab.trained.empty()) {  // an export --vocab full of a compact model: the compact model back, exactly
    if (auto compact = restore_compact(*model, vocab.trained)) {
      std::cerr << "vocabulary compact again: " << vocab.trained.size()
                << " trained ids (gaugelab_trained_ids; the other rows, all 0 as export wrote them, dropped)\n";
      model = std::move(compact);
      vocab = Vocabulary{vocab.trained, {}};
    } else {
      std::cerr << "vocabulary kept over all " << model->config().vocab_size << " ids: rows outside the "
                << vocab.trained.size() << " ids of gaugelab_trained_ids are no longer 0 (trained since the export)\n";
      vocab = Vocabulary{};
    }
  } else if (!vocab.compact() && !vocab.own && model->config().vocab_size < kGpt2Vocab) {
    vocab.own = true;  // a Hugging Face model of its own tokenizer: its ids are that tokenizer's, none was lost
    std::cerr << "vocabulary " << model->config().vocab_size << " ids of the model's own tokenizer (not GPT-2's)\n";
  }
  save_checkpoint(o.out, *model, vocab);
  std::cout << "imported " << o.source << " -> checkpoint " << o.out << " (multipliers " << lrm.spec()
            << ", all at 1)\n";
}

}  // namespace gaugelab::gpt2
