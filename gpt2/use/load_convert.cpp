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
  out.precision = parse_precision(o.precision);
  out.model = load_any_model(checkpoint, out.device, LrmPlacement::parse(o.multipliers));
  out.model->train(false);
  std::cerr << "model      " << checkpoint << ": " << describe_model(*out.model) << "\n"
            << "runs on    " << out.device.str() << ", " << precision_name(out.precision) << "\n";
  out.vocab_ids = stored_vocab_ids(checkpoint, out.model->config().vocab_size);
  out.model_id_of = model_ids_of(out.vocab_ids);
  if (out.compact())
    std::cerr << "vocabulary compact: " << out.vocab_ids.size()
              << " ids (trained with --compact-vocab); ids in and out are GPT-2's\n";
  return out;
}

std::int64_t LoadedModel::id_bound() const {
  if (!compact()) return model->config().vocab_size;
  std::int64_t mx = 0;
  for (const std::int64_t id : vocab_ids) mx = std::max(mx, id);
  return mx + 1;
}

std::int64_t LoadedModel::to_model(std::int64_t id, const std::string& what) const {
  return to_model_id(id, vocab_ids, model_id_of, what);
}

std::vector<std::int64_t> parse_token_ids(const std::vector<std::string>& ids, std::int64_t vocab, const std::string& what) {
  std::vector<std::int64_t> out;
  for (const std::string& s : ids) {
    const std::int64_t id = io::parse_int(s, what);
    if (id < 0 || id >= vocab)
      throw io::UsageError(what + ": token id " + s + " is outside the model's vocabulary [0, " + std::to_string(vocab) + ")");
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
  auto model = load_any_model(o.checkpoint, c10::Device(c10::kCPU));
  std::cerr << "model      " << o.checkpoint << ": " << describe_model(*model) << "\n";
  const std::vector<std::int64_t> ids = stored_vocab_ids(o.checkpoint, model->config().vocab_size);
  if (!ids.empty() && o.vocab == "gpt2") {
    // A Hugging Face user feeds GPT-2 ids: place the K trained rows at their ids (vocab_expand.hpp).
    model = expand_to_gpt2_vocab(*model, ids);
    std::cerr << "vocabulary " << o.checkpoint << " was trained on " << ids.size()
              << " GPT-2 ids (--compact-vocab); exported over all 50257 with their rows at their ids and the others 0 "
                 "(logit 0 for ids its data never had; config.json gaugelab_trained_ids lists the trained ones)\n";
  }
  export_hf(*model, o.out, dtype);
  if (!ids.empty()) {  // keep the id table with the export, so our verbs (and a user) can map back
    nlohmann::json cfg = read_json_file(o.out + "/config.json");
    // Laid out over GPT-2 ids the model needs no translation: the trained ids are kept for masking only,
    // under a key our readers do not take for a compact model's id map (gaugelab_vocab_ids).
    cfg[o.vocab == "gpt2" ? "gaugelab_trained_ids" : "gaugelab_vocab_ids"] = ids;
    write_json_file(o.out + "/config.json", cfg);
    if (o.vocab == "compact")
      std::cerr << "warning: " << o.checkpoint << " has a compact vocabulary of " << ids.size()
                << " renumbered ids, exported as they are (--vocab compact); config.json gaugelab_vocab_ids maps them "
                   "to GPT-2 ids (gaugelab's verbs apply it, transformers does not: feed it renumbered ids)\n";
  }
  std::cout << "exported " << o.checkpoint << " -> " << o.out << "/model.safetensors + config.json (" << o.dtype
            << ", multipliers merged into the weights)\n";
}

void run_import(const ImportOptions& o) {
  const LrmPlacement lrm = LrmPlacement::parse(o.multipliers);
  io::prepare_output_path(o.out, o.force, {o.source});
  auto model = import_hf(o.source, lrm, c10::Device(c10::kCPU));
  std::cerr << "model      " << o.source << ": " << describe_model(*model) << "\n";
  const std::vector<std::int64_t> ids = stored_vocab_ids(o.source, model->config().vocab_size);
  nlohmann::json extra = nlohmann::json::object();
  if (!ids.empty()) extra["gaugelab_vocab_ids"] = ids;
  const std::vector<std::int64_t> trained = trained_ids(o.source);  // an export laid out over GPT-2 ids
  if (!trained.empty()) extra["gaugelab_trained_ids"] = trained;
  save_checkpoint(o.out, *model, extra);
  std::cout << "imported " << o.source << " -> checkpoint " << o.out << " (multipliers " << lrm.spec()
            << ", all at 1)\n";
}

}  // namespace gaugelab::gpt2
