// Hugging Face interchange and our checkpoints: agreement with transformers' GPT2LMHeadModel (the
// checked-in fixture, and transformers loading our export), export -> import round trips, errors.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <ATen/core/grad_mode.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/randint.h>
#include <nlohmann/json.hpp>

#include "gpt2/model/checkpoint.hpp"
#include "gpt2/model/interchange.hpp"
#include "gpt2/model/model_dir.hpp"
#include "gpt2/model/safetensors.hpp"
#include "gpt2/model/tensor_bytes.hpp"
#include "gpt2_test_helpers.hpp"
#include "gpt2_catch.hpp"  // last: see there
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab::gpt2;
using gaugelab::test::max_rel_diff;
using gaugelab::test::nano_config;
namespace fs = std::filesystem;

namespace {

// float32 forward against a float64 reference on the same weights: float32 rounding through two
// layers is ~1e-7 relative; 1e-5 leaves room for summation order while catching any formula
// difference (a wrong GELU, LN epsilon or attention scale moves logits by 1e-3 or more).
constexpr double kFp32Tol = 1e-5;

const std::string kFixture = std::string(GAUGELAB_SOURCE_DIR) + "/tests/fixtures/gpt2";

std::string scratch(const std::string& name) {
  const std::string dir = std::string(GAUGELAB_BINARY_DIR) + "/test_gpt2_scratch/" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

nlohmann::json reference() { return read_json_file(kFixture + "/reference.json"); }

at::Tensor tokens_of(const nlohmann::json& ref) {
  std::vector<std::int64_t> flat;
  for (const auto& row : ref["tokens"])
    for (const auto& t : row) flat.push_back(t.get<std::int64_t>());
  const auto b = static_cast<std::int64_t>(ref["tokens"].size());
  return at::from_blob(flat.data(), {b, static_cast<std::int64_t>(flat.size()) / b}, at::kLong).clone();
}

at::Tensor random_tokens(std::int64_t vocab, std::int64_t b, std::int64_t t) {
  return at::randint(vocab, {b, t}, at::TensorOptions().dtype(at::kLong));
}

// The Hugging Face directory DIR imported on the CPU as import does (a Hugging Face directory alone, so its
// refusals are the importer's), multipliers placed as `lrm` says.
std::unique_ptr<GPT> imported(const std::string& dir, const LrmPlacement& lrm = LrmPlacement{}) {
  return read_model_dir(dir, c10::Device(c10::kCPU), ModelDirKinds::hugging_face, lrm).model;
}

}  // namespace

TEST_CASE("imported Hugging Face GPT-2 reproduces transformers' logits and loss", "[gpt2][interchange]") {
  const nlohmann::json ref = reference();
  auto model = imported(kFixture);
  CHECK(model->config().vocab_size == 500);
  CHECK(model->config().padded_vocab() == 512);
  at::NoGradGuard no_grad;
  const at::Tensor idx = tokens_of(ref);
  const at::Tensor logits = model->logits(idx);
  std::vector<double> expect = ref["logits"].get<std::vector<double>>();
  const at::Tensor want = at::from_blob(expect.data(), logits.sizes(), at::kDouble);
  const double err = max_rel_diff(logits.to(at::kDouble), want);
  WARN("fixture logits max relative difference " << err);
  CHECK(err < kFp32Tol);
  const std::int64_t T = idx.size(1);
  const double loss = model->loss(idx.narrow(1, 0, T - 1), idx.narrow(1, 1, T - 1)).item<double>();
  CHECK(loss == Approx(ref["loss"].get<double>()).epsilon(kFp32Tol));
}

TEST_CASE("exporting an imported model writes Hugging Face's tensors back bit for bit", "[gpt2][interchange]") {
  auto model = imported(kFixture);
  const std::string dir = scratch("reexport");
  export_hf(*model, dir, Vocabulary{});
  const safetensors::File theirs = safetensors::read_file(kFixture + "/model.safetensors");
  const safetensors::File ours = safetensors::read_file(dir + "/model.safetensors");
  CHECK(ours.tensors.size() == theirs.tensors.size());
  for (const auto& [name, view] : theirs.tensors) {
    INFO(name);
    const safetensors::TensorView& mine = ours.at(name.substr(std::string("transformer.").size()));
    REQUIRE(mine.shape == view.shape);
    REQUIRE(mine.nbytes == view.nbytes);
    CHECK(std::equal(mine.data, mine.data + mine.nbytes, view.data));
  }
  const nlohmann::json cfg = read_json_file(dir + "/config.json");
  CHECK(cfg["n_positions"] == 32);
  CHECK(cfg["activation_function"] == "gelu_new");
}

TEST_CASE("export merges multipliers exactly, import gives multipliers at 1 and the same logits", "[gpt2][interchange][lrm]") {
  for (const char* spec : {"default", "all:scalar", "all:row+column,lm_head:column"}) {
    INFO(spec);
    ModelConfig c = nano_config();
    c.lrm = LrmPlacement::parse(spec);
    GPT model(c, 21);
    gaugelab::test::randomize_multipliers(model, 22);
    gaugelab::test::randomize_biases_norms(model, 23);
    const std::string dir = scratch("roundtrip");
    export_hf(model, dir, Vocabulary{});
    auto back = imported(dir, c.lrm);
    back->visit([](const std::string& name, at::Tensor& t, ParamRole role) {
      if (role == ParamRole::multiplier_qk || role == ParamRole::multiplier_other) {
        INFO(name);
        CHECK(t.eq(1).all().item<bool>());
      }
    });
    at::NoGradGuard no_grad;
    const at::Tensor idx = random_tokens(c.vocab_size, 2, 20);
    const at::Tensor a = model.logits(idx), b = back->logits(idx);
    // The exported weight is the very W_eff the forward forms, so untied maps give identical logits;
    // the tied head's column multipliers are folded into ln_f (one float32 rounding).
    if (c.lrm[LrmSite::lm_head] == LrmMode::none) CHECK(a.equal(b));
    CHECK(max_rel_diff(b, a) < 1e-6);
  }
}

TEST_CASE("transformers loads our export and computes our logits", "[gpt2][interchange][python]") {
#ifdef GAUGELAB_TORCH_PYTHON
  ModelConfig c = nano_config();
  c.lrm = LrmPlacement::parse("all:row+column");
  c.tied_head = false;  // exercises lm_head.weight and tie_word_embeddings false
  c.lrm[LrmSite::lm_head] = LrmMode::row_column;
  GPT model(c, 31);
  gaugelab::test::randomize_multipliers(model, 32);
  gaugelab::test::randomize_biases_norms(model, 33);
  const std::string dir = scratch("to_transformers");
  export_hf(model, dir, Vocabulary{});
  at::NoGradGuard no_grad;
  const at::Tensor idx = random_tokens(c.vocab_size, 2, 24);
  const at::Tensor logits = model.logits(idx).contiguous();
  nlohmann::json ours;
  for (std::int64_t i = 0; i < idx.size(0); ++i) {
    nlohmann::json row = nlohmann::json::array();
    for (std::int64_t t = 0; t < idx.size(1); ++t) row.push_back(idx[i][t].item<std::int64_t>());
    ours["tokens"].push_back(row);
  }
  ours["logits"] = std::vector<float>(logits.data_ptr<float>(), logits.data_ptr<float>() + logits.numel());
  write_json_file(dir + "/ours.json", ours);
  const std::string cmd = std::string(GAUGELAB_TORCH_PYTHON) + " -W ignore " + GAUGELAB_SOURCE_DIR +
                          "/tests/reference/check_gpt2_export.py " + dir + " " + dir + "/ours.json " +
                          std::to_string(kFp32Tol) + " > " + dir + "/check.txt 2>&1";
  const int rc = std::system(cmd.c_str());
  std::ifstream in(dir + "/check.txt");
  const std::string out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  INFO(out);
  WARN("transformers vs ours: " << out.substr(out.rfind("max_rel_diff") == std::string::npos ? 0 : out.rfind("max_rel_diff")));
  CHECK(rc == 0);
#else
  WARN("no Python beside the torch wheel: transformers check not run");
#endif
}

TEST_CASE("checkpoints round-trip every parameter and the caller's extra keys", "[gpt2][checkpoint]") {
  ModelConfig c = nano_config();
  c.lrm = LrmPlacement::parse("q:row,k:row,v:scalar,mlp_in:column,lm_head:scalar");
  GPT model(c, 41);
  gaugelab::test::randomize_multipliers(model, 42);
  const std::string dir = scratch("ckpt");
  save_checkpoint(dir, model, Vocabulary{}, {{"step", 17}});
  ModelDir ck = read_model_dir(dir, c10::Device(c10::kCPU), ModelDirKinds::checkpoint);
  CHECK(ck.config["step"] == 17);
  CHECK(ck.model->config().lrm.spec() == c.lrm.spec());
  auto a = model.named_parameters(), b = ck.model->named_parameters();
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO(a[i].first);
    CHECK(a[i].first == b[i].first);
    CHECK(a[i].second.equal(b[i].second));
    CHECK(b[i].second.requires_grad());
  }
  CHECK(read_model_dir(kFixture, c10::Device(c10::kCPU)).model->config().n_embd == 64);
  CHECK_THROWS_WITH(save_checkpoint(dir, model, Vocabulary{}, {{"model", 1}}), Catch::Contains("reserved"));
}

TEST_CASE("read_model_dir: one read of config.json decides the format, and the vocabulary outlives the model",
          "[gpt2][checkpoint]") {
  const c10::Device cpu(c10::kCPU);
  ModelConfig c = nano_config();
  const std::string dir = scratch("model_dir");
  Vocabulary v;
  v.ids = {5, 7, 9};
  c.vocab_size = 3;
  GPT compact(c, 44);
  save_checkpoint(dir, compact, v, {{"step", 9}});
  ModelDir ck = read_model_dir(dir, cpu);
  CHECK(ck.checkpoint);
  CHECK(ck.dir == dir);
  CHECK(ck.config["step"] == 9);
  CHECK(ck.vocab_size == 3);
  const std::unique_ptr<GPT> taken = std::move(ck.model);  // the trainer moves it out, then asks for the map
  CHECK(taken->config().vocab_size == 3);
  CHECK(ck.vocabulary().ids == v.ids);
  CHECK(read_model_dir(dir, cpu, ModelDirKinds::checkpoint).checkpoint);

  ModelDir hf = read_model_dir(kFixture, cpu);  // a Hugging Face export: imported
  CHECK(!hf.checkpoint);
  CHECK(hf.model->config().n_embd == 64);
  CHECK(hf.vocab_size == hf.model->config().vocab_size);
  // --resume takes our checkpoints alone; with any kind, a path that is no directory is refused first.
  CHECK_THROWS_WITH(read_model_dir(kFixture, cpu, ModelDirKinds::checkpoint),
                    Catch::Contains(kFixture + "/config.json: not a gaugelab-gpt2 checkpoint"));
  CHECK_THROWS_WITH(read_model_dir(kFixture + "/config.json", cpu), Catch::Contains("not a checkpoint directory"));
  const std::string empty = scratch("model_dir_empty");
  CHECK_THROWS_WITH(read_model_dir(empty, cpu), Catch::Contains(empty + "/config.json"));
  // The format test is the config's: a config.json whose "format" is another word is read as a Hugging Face one.
  nlohmann::json other = read_json_file(dir + "/config.json");
  other["format"] = "something-else";
  CHECK(!is_checkpoint_config(other));
  CHECK(is_checkpoint_config(read_json_file(dir + "/config.json")));
}

TEST_CASE("bad interchange directories are refused with a message naming the problem", "[gpt2][interchange]") {
  const std::string dir = scratch("bad");
  const nlohmann::json good_cfg = read_json_file(kFixture + "/config.json");
  auto import = [&] { return imported(dir); };
  CHECK_THROWS_WITH(import(), Catch::Contains("config.json") && Catch::Contains("cannot read"));

  nlohmann::json cfg = good_cfg;
  cfg["activation_function"] = "relu";
  write_json_file(dir + "/config.json", cfg);
  CHECK_THROWS_WITH(import(), Catch::Contains("activation_function 'relu'"));
  cfg = good_cfg;
  cfg.erase("n_embd");
  write_json_file(dir + "/config.json", cfg);
  CHECK_THROWS_WITH(import(), Catch::Contains("missing 'n_embd'"));

  write_json_file(dir + "/config.json", good_cfg);
  const safetensors::File f = safetensors::read_file(kFixture + "/model.safetensors");
  auto rewrite = [&](const std::string& drop, const std::string& reshape, bool add_extra, bool add_buffer) {
    std::vector<safetensors::TensorData> ts;
    for (const auto& [name, v] : f.tensors) {
      if (name == drop) continue;
      at::Tensor t = to_float_tensor(v);
      if (name == reshape) t = t.narrow(0, 0, t.size(0) - 1);
      ts.push_back(to_tensor_data(name, t));
    }
    if (add_extra) ts.push_back(to_tensor_data("transformer.h.0.attn.q_proj.weight", to_float_tensor(f.at("transformer.ln_f.bias"))));
    if (add_buffer) ts.push_back(to_tensor_data("transformer.h.0.attn.bias", to_float_tensor(f.at("transformer.ln_f.bias"))));
    safetensors::write_file(dir + "/model.safetensors", ts);
  };
  rewrite("transformer.h.1.mlp.c_fc.bias", "", false, false);
  CHECK_THROWS_WITH(import(), Catch::Contains("'h.1.mlp.c_fc.bias' is missing"));
  rewrite("", "transformer.wpe.weight", false, false);
  CHECK_THROWS_WITH(import(), Catch::Contains("'wpe.weight' has shape [31, 64], expected [32, 64]"));
  rewrite("", "", true, false);
  CHECK_THROWS_WITH(import(), Catch::Contains("unexpected tensor 'h.0.attn.q_proj.weight'"));
  rewrite("", "", false, true);  // the old causal-mask buffer is ignored
  CHECK(import()->config().n_layer == 2);
}

TEST_CASE("bf16 and f16 exports re-import within their rounding", "[gpt2][interchange]") {
  auto model = imported(kFixture, LrmPlacement::none());
  at::NoGradGuard no_grad;
  const at::Tensor idx = random_tokens(500, 1, 16);
  const at::Tensor ref = model->logits(idx);
  // Weight rounding of 2^-9 (bf16) and 2^-12 (f16) through two layers: a few multiples at most.
  for (auto [dtype, tol] : {std::pair{safetensors::DType::BF16, 3e-2}, std::pair{safetensors::DType::F16, 5e-3}}) {
    const std::string dir = scratch("lowp");
    export_hf(*model, dir, Vocabulary{}, dtype);
    const double err = max_rel_diff(imported(dir, LrmPlacement::none())->logits(idx), ref);
    INFO(safetensors::dtype_name(dtype) << " error " << err);
    CHECK(err < tol);
    CHECK(err > 0.0);
  }
}

}  // namespace GAUGELAB_TU
