// Writes each fuzz target's seed corpus, made by the project's own writers so the seeds are the files
// the readers meet in use: `make_fuzz_seeds DIR` fills DIR/<target>/ (replacing what is there).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <zlib.h>

#include "data/token_files.hpp"
#include "gpt2/model/hf_config.hpp"
#include "io/options.hpp"
#include "io/provenance.hpp"
#include "io/run_flags.hpp"
#include "io/run_log.hpp"
#include "toys/toy.hpp"
#include "toys/toy_runner.hpp"

namespace fs = std::filesystem;
namespace gpt2 = gaugelab::gpt2;
namespace st = gaugelab::gpt2::safetensors;

namespace {

void put(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + p.string());
}
void put(const fs::path& p, const std::vector<std::uint8_t>& bytes) {
  put(p, std::string(bytes.begin(), bytes.end()));
}

st::TensorData tensor(const std::string& name, std::vector<std::int64_t> shape, st::DType t = st::DType::F32) {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(n) * st::dtype_size(t));
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(i * 37u);
  return {name, t, std::move(shape), std::move(bytes)};
}

// A tiny GPT-2 in Hugging Face layout: every tensor import reads (1 layer, d 8, 2 heads, context 4, vocab 16).
std::vector<st::TensorData> tiny_hf_tensors(const gpt2::ModelConfig& c, bool prefix) {
  const std::string p = prefix ? "transformer." : "";
  const std::int64_t d = c.n_embd;
  std::vector<st::TensorData> t = {tensor(p + "wte.weight", {c.vocab_size, d}), tensor(p + "wpe.weight", {c.block_size, d}),
                                   tensor(p + "ln_f.weight", {d}), tensor(p + "ln_f.bias", {d})};
  for (std::int64_t l = 0; l < c.n_layer; ++l) {
    const std::string h = p + "h." + std::to_string(l) + ".";
    for (const char* ln : {"ln_1", "ln_2"}) {
      t.push_back(tensor(h + ln + ".weight", {d}));
      t.push_back(tensor(h + ln + ".bias", {d}));
    }
    t.push_back(tensor(h + "attn.c_attn.weight", {d, 3 * d}));
    t.push_back(tensor(h + "attn.c_attn.bias", {3 * d}));
    t.push_back(tensor(h + "attn.c_proj.weight", {d, d}));
    t.push_back(tensor(h + "attn.c_proj.bias", {d}));
    t.push_back(tensor(h + "mlp.c_fc.weight", {d, 4 * d}, st::DType::BF16));
    t.push_back(tensor(h + "mlp.c_fc.bias", {4 * d}, st::DType::F16));
    t.push_back(tensor(h + "mlp.c_proj.weight", {4 * d, d}));
    t.push_back(tensor(h + "mlp.c_proj.bias", {d}));
  }
  return t;
}

std::string gzip(const std::string& text) {
  z_stream z{};
  if (deflateInit2(&z, 6, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY) != Z_OK) throw std::runtime_error("zlib");
  std::string out(compressBound(text.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

void make(const fs::path& root) {
  auto dir = [&](const char* name) {
    const fs::path d = root / name;
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
  };
  {  // safetensors
    const fs::path d = dir("safetensors");
    put(d / "two.safetensors", st::serialize({tensor("a", {2, 3}), tensor("b", {4}, st::DType::BF16)}, {{"format", "pt"}}));
    put(d / "empty.safetensors", st::serialize({}));
    put(d / "scalar.safetensors", st::serialize({tensor("s", {}, st::DType::F16)}));
  }
  gpt2::ModelConfig c;
  c.n_layer = 1, c.n_head = 2, c.n_embd = 8, c.block_size = 4, c.vocab_size = 16;
  {  // hf_import: [2-byte n][config.json][model.safetensors]
    const fs::path d = dir("hf_import");
    int k = 0;
    for (const bool prefix : {false, true}) {
      for (std::int64_t layers : {1, 2}) {
        c.n_layer = layers;
        const std::string cfg = gpt2::hf_config_json(c).dump();
        std::string bytes{static_cast<char>(cfg.size() & 0xff), static_cast<char>(cfg.size() >> 8)};
        bytes += cfg;
        const auto w = st::serialize(tiny_hf_tensors(c, prefix));
        bytes.append(w.begin(), w.end());
        put(d / ("tiny" + std::to_string(k++) + ".bin"), bytes);
      }
    }
    c.n_layer = 1;
  }
  {  // model_config: our checkpoints' config.json
    const fs::path d = dir("model_config");
    put(d / "nano.json", gpt2::ModelConfig::preset("nano").to_json().dump());
    put(d / "gpt2.json", gpt2::ModelConfig::preset("gpt2").to_json().dump(1));
    gpt2::ModelConfig q = gpt2::ModelConfig::preset("tiny");
    q.qk_norm = gpt2::QkNorm::rms;
    q.bias = false;
    put(d / "tiny_qknorm.json", q.to_json().dump());
  }
  {  // token_files
    const fs::path d = dir("token_files");
    const std::vector<gaugelab::data::TokenId> ids = {50256, 464, 2068, 7586, 0, 1, 50256, 13};
    gaugelab::data::write_token_file((d / "nanogpt.bin").string(), ids, gaugelab::data::TokenFileFormat::nanogpt);
    gaugelab::data::write_token_file((d / "llmc.bin").string(), ids, gaugelab::data::TokenFileFormat::llmc);
  }
  {  // tokenizer: text, the special token, invalid UTF-8, numbers, contractions
    const fs::path d = dir("tokenizer");
    put(d / "prose.txt", std::string("To be, or not to be, that is the question:\nWhether 'tis nobler in the mind"));
    put(d / "special.txt", std::string("end<|endoftext|>start <|endoftext|><|endof"));
    put(d / "bytes.txt", std::string("\xff\xfe caf\xc3\xa9 \xe2\x82 12345 I'll we've   \t\n\n"));
  }
  {  // options: INI files for `toy relu` / `toy factor-matrix`
    const fs::path d = dir("options");
    put(d / "relu.ini", std::string("# a relu run\nhidden = 8\nlr = 0.01\nsteps = 100\ninit = small\nsave-data = true\n"));
    put(d / "matrix.ini", std::string("m = 4\nn = 3\nr = 2\nseeds = 2\nout = x.h5\n"));
    put(d / "bad.ini", std::string("[section]\nlr = -1\nunknown = 3\n"));
  }
  {  // corpus_reader: [mode byte][file]; bit 0 JSONL, bit 1 paragraphs, bit 2 field "content"
    const fs::path d = dir("corpus_reader");
    const std::string text = "First doc.\n\nSecond para.<|endoftext|>Third doc\n";
    const std::string jsonl = "{\"text\": \"one\"}\n\n{\"text\": \"two <|endoftext|>\", \"content\": \"c\"}\n";
    put(d / "text", std::string(1, '\x02') + text);
    put(d / "jsonl", std::string(1, '\x01') + jsonl);
    put(d / "text.gz", std::string(1, '\x00') + gzip(text));
    put(d / "jsonl.gz", std::string(1, '\x05') + gzip(jsonl));
  }
  {  // run_log: a real `toy relu` log (series, tables, arrays, summary), and a small one of every kind of
     // group. The toy's logs are ~187 KB, most of it chunks of its defaults (1024 rows a series chunk): the
     // reader then parses ~4 ms per input (~230 executions per CPU-s). The small one holds every group in chunks
     // of 4 rows (~12 KB), so most mutations stay cheap and still reach every reader path.
    const fs::path d = dir("run_log");
    {
      gaugelab::io::RunLogOptions small;
      small.series_chunk = small.heads_chunk = small.table_chunk = small.array_chunk = 4;
      small.flush_interval_s = 0;
      gaugelab::io::Provenance prov{"toy/relu", {"gaugelab", "toy", "relu"}, {{"steps", 3}}, 1, 1};
      auto log = gaugelab::io::RunLog::create((d / "small.h5").string(), prov, true, small);
      log.declare_series({"loss", "drift"});
      log.declare_heads({"s_q"}, 2, 2);
      log.declare_table("points", {{"name", gaugelab::io::DType::str, 8}, {"k", gaugelab::io::DType::i64},
                                   {"v", gaugelab::io::DType::f64}});
      log.declare_array("w", {2, 3});
      log.declare_rows_array("traj", {2}, gaugelab::io::DType::i64);
      log.start();
      gaugelab::core::Mat<double> m(2, 2);
      const double w[6] = {1, 2, 3, 4, 5, 6};
      const std::int64_t traj[4] = {1, 2, 3, 4};
      log.write_array("w", w, 6);
      for (std::int64_t step = 0; step < 3; ++step) {
        log.append_series(step, {1.0 / (1.0 + static_cast<double>(step)), 1e-3 * static_cast<double>(step)});
        m.setConstant(static_cast<double>(step));
        log.append_heads(step, {m});
        log.append_row("points", {std::string("p") + std::to_string(step), step, 0.5 * static_cast<double>(step)});
        log.append_array_rows("traj", traj, 2);
      }
      log.set_summary("final_loss", 0.25);
      log.set_summary("steps", std::int64_t{3});
      log.set_summary("verdict", std::string("stable"));
      log.close();
    }
    for (const std::string& seeds : {"1", "2"}) {
      auto toy = gaugelab::toys::make_toy("relu");
      gaugelab::io::Options opts("toy relu", toy->summary());
      gaugelab::io::RunFlags flags;
      gaugelab::io::add_run_flags(opts, flags, "log");
      toy->declare(opts);
      const std::string out = (d / ("relu" + seeds + ".h5")).string();
      opts.parse({"--out", out, "--force", "--steps", "20", "--log-every", "5", "--hidden", "3", "--n-train", "6",
                  "--n-val", "4", "--gauges", "1", "--save-data", "--seeds", seeds, "--threads", "1"});
      gaugelab::io::Provenance prov{"toy/relu", {"gaugelab", "toy", "relu"}, opts.to_json(), flags.seed, 1};
      gaugelab::toys::run_toy(*toy, flags, prov);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_fuzz_seeds DIR\n";
    return 2;
  }
  try {
    make(argv[1]);
  } catch (const std::exception& e) {
    std::cerr << "make_fuzz_seeds: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
