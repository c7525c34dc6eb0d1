#include "gpt2/model/model_dir.hpp"

#include <filesystem>
#include <stdexcept>

#include "gpt2/model/checkpoint.hpp"
#include "gpt2/model/interchange.hpp"
#include "gpt2/model/json_file.hpp"

namespace gaugelab::gpt2 {

Vocabulary ModelDir::vocabulary() const { return vocabulary_of(config, vocab_size, dir + "/config.json"); }

ModelDir read_model_dir(const std::string& dir, c10::Device device, ModelDirKinds accept,
                        const LrmPlacement& lrm_for_hf) {
  if (accept == ModelDirKinds::any && !std::filesystem::is_directory(dir))
    throw std::runtime_error(dir + ": not a checkpoint directory");
  ModelDir d;
  d.dir = dir;
  d.config = read_json_file(dir + "/config.json");
  d.checkpoint = accept == ModelDirKinds::checkpoint ||
                 (accept == ModelDirKinds::any && is_checkpoint_config(d.config));  // hugging_face: never ours
  d.model = d.checkpoint ? checkpoint_model(d.config, dir, device) : import_hf(d.config, dir, lrm_for_hf, device);
  d.vocab_size = d.model->config().vocab_size;
  return d;
}

}  // namespace gaugelab::gpt2
