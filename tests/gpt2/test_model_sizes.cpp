// Hostile sizes are refused before anything is allocated or overflows: integer-typed sizes in our
// config.json (4.9 was read as 4, 1e300 converted with undefined behaviour), bounds that keep the padded
// vocabulary and parameter counts inside int64, and a Hugging Face export whose config.json claims sizes
// its tensors do not have (a small file claiming gpt2-xl allocated 6.8 GB before any shape was checked).
// Also the two vocabulary layouts (model/vocab_layout.hpp) against each other.
#include <filesystem>
#include <fstream>
#include <string>

#include <ATen/TensorOperators.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/randint.h>
#include <nlohmann/json.hpp>

#include "gpt2/model/interchange.hpp"
#include "gpt2/model/model_dir.hpp"
#include "gpt2/model/vocab_layout.hpp"
#include "gpt2_test_helpers.hpp"
#include "gpt2_catch.hpp"  // last: see there
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab::gpt2;

namespace {

nlohmann::json nano_json() { return gaugelab::test::nano_config().to_json(); }

std::string scratch(const std::string& name) {
  const std::string dir = std::string(GAUGELAB_BINARY_DIR) + "/test_gpt2_scratch/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("config bounds: sizes must be integers in range, named in one line", "[gpt2][config]") {
  struct Case {
    const char* key;
    nlohmann::json value;
    const char* says;
  };
  const Case cases[] = {
      {"n_head", 4.9, "'n_head' must be an integer"},
      {"n_layer", 1e300, "'n_layer' must be an integer"},
      {"vocab_size", INT64_MAX, "vocab_size must be in [1, 16777216]"},
      {"vocab_size", static_cast<std::uint64_t>(UINT64_MAX), "'vocab_size' is out of range"},
      {"n_layer", 1000000000, "n_layer must be in [1, 4096]"},
      {"n_embd", -64, "n_embd must be in [1, 65536]"},
      {"block_size", "1024", "'block_size' must be an integer"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.key, c.value.dump());
    nlohmann::json j = nano_json();
    j[c.key] = c.value;
    CHECK_THROWS_WITH(ModelConfig::from_json(j), Catch::Contains(c.says));
  }
  CHECK_NOTHROW(ModelConfig::from_json(nano_json()));  // the unchanged config still reads
}

TEST_CASE("config bounds: an export whose config.json claims other sizes is refused before allocating",
          "[gpt2][config]") {
  const ModelConfig c = gaugelab::test::nano_config();
  GPT model(c, 5);
  const std::string dir = scratch("hostile_sizes");
  export_hf(model, dir, Vocabulary{});
  const nlohmann::json good = read_json_file(dir + "/config.json");
  struct Case {
    const char* key;
    std::int64_t value;
    const char* says;
  };
  const Case cases[] = {
      {"n_layer", 48, "tensor 'h.47.attn.c_attn.weight' is missing"},
      {"n_embd", 1600, "tensor 'wte.weight' has shape"},
      {"vocab_size", 50257, "tensor 'wte.weight' has shape"},
      {"n_layer", 1, "holds more layers than config.json's n_layer 1"},
  };
  for (const Case& k : cases) {
    CAPTURE(k.key, k.value);
    nlohmann::json j = good;
    j[k.key] = k.value;
    if (std::string(k.key) == "n_embd") j["n_head"] = 25;  // keep n_embd a multiple of n_head
    std::ofstream(dir + "/config.json") << j.dump();
    CHECK_THROWS_WITH(read_model_dir(dir, c10::Device(c10::kCPU), ModelDirKinds::hugging_face, LrmPlacement::none()),
                      Catch::Contains(k.says));
  }
}

TEST_CASE("vocab layout: a compact model laid over GPT-2 ids keeps its logits there, and selecting them back is "
          "the same model", "[gpt2][vocab]") {
  ModelConfig c = gaugelab::test::nano_config();  // 500 compact ids
  c.bias = true;
  GPT compact(c, 9);
  gaugelab::test::randomize_multipliers(compact, 10);
  std::vector<std::int64_t> ids;
  for (std::int64_t k = 0; k < c.vocab_size; ++k) ids.push_back(50256 - 97 * k);  // distinct GPT-2 ids, unordered
  auto wide = expand_to_gpt2_vocab(compact, ids);
  REQUIRE(wide->config().vocab_size == 50257);
  const at::Tensor idx_c = at::randint(0, c.vocab_size, {2, 12}, at::TensorOptions().dtype(at::kLong));
  const at::Tensor map = at::from_blob(ids.data(), {c.vocab_size}, at::kLong).clone();
  at::NoGradGuard no_grad;
  const at::Tensor lc = compact.logits(idx_c);                             // [2, 12, K]
  const at::Tensor lw = wide->logits(map.index_select(0, idx_c.flatten()).view({2, 12}));  // [2, 12, 50257]
  CHECK(gaugelab::test::max_rel_diff(lw.index_select(2, map), lc) < 1e-6);  // trained ids: the same logits
  // the others: rows 0, logit exactly 0
  const at::Tensor mask = at::ones({50257}, at::TensorOptions().dtype(at::kBool)).index_fill_(0, map, false);
  CHECK(lw.index_select(2, mask.nonzero().flatten()).abs().max().item<double>() == 0.0);
  auto back = select_vocab_rows(*wide, ids);
  auto a = compact.named_parameters(), b = back->named_parameters();
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CAPTURE(a[i].first);
    CHECK(a[i].second.equal(b[i].second));
  }
  CHECK_THROWS_AS(select_vocab_rows(*wide, {50257}), std::invalid_argument);
}

}  // namespace GAUGELAB_TU
