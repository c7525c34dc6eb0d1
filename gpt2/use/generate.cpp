// `gaugelab generate`: sampling from a checkpoint (greedy, temperature, top-k), seeded; token ids
// always, text when the GPT-2 tokenizer is available and the vocabulary is GPT-2's.
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>
#include <stdexcept>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/multinomial.h>
#include <ATen/ops/softmax.h>
#include <ATen/ops/topk.h>

#include "data/tokenizer.hpp"
#include "gpt2/use/loaded_model.hpp"
#include "io/options.hpp"
#include "io/run_log.hpp"

namespace gaugelab::gpt2 {

namespace {

// The tokenizer if its files are there and it matches the ids the model reads (`vocab`), else nothing (with a
// note). --prompt needs it: one line naming what is missing, or the checkpoint the tokenizer cannot feed.
std::optional<data::Gpt2Tokenizer> find_tokenizer(const GenerateOptions& o, std::int64_t vocab, bool own) {
  const std::string path = o.vocab_dir.empty() ? data::Gpt2Tokenizer::default_ranks_path() : o.vocab_dir;
  if (!std::filesystem::exists(path)) {
    if (!o.prompt.empty())
      throw std::runtime_error("--prompt needs the GPT-2 tokenizer, not found at " + path +
                               " (run the set-up script, or --vocab-dir)");
    std::cerr << "tokenizer  not found at " << path << ": token ids only\n";
    return std::nullopt;
  }
  data::Gpt2Tokenizer tok = o.vocab_dir.empty() ? data::Gpt2Tokenizer::from_tiktoken(path)
                                                : data::Gpt2Tokenizer::from_vocab_dir(path);
  if (static_cast<std::int64_t>(tok.vocab_size()) != vocab) {
    if (!o.prompt.empty())
      throw std::runtime_error(
          "--prompt: checkpoint " + o.checkpoint + " reads " + std::to_string(vocab) +
          (own ? " token ids of its own tokenizer" : " token ids and carries no GPT-2 id map") +
          ", and the tokenizer at " + path + " has " + std::to_string(tok.vocab_size()) +
          (own ? " (give its encoder.json + vocab.bpe with --vocab-dir, or --prompt-tokens)"
               : " (give --prompt-tokens; a --compact-vocab checkpoint re-written by an older gaugelab lost its map: "
                 "write it again from the trained checkpoint)"));
    std::cerr << "tokenizer  has " << tok.vocab_size() << " tokens, the model " << vocab << ": token ids only\n";
    return std::nullopt;
  }
  std::cerr << "tokenizer  " << path << "\n";
  return tok;
}

// The next token from the last position's logits [V] (float32, CPU).
std::int64_t pick(const at::Tensor& logits, const GenerateOptions& o, at::Generator& gen) {
  if (o.temperature == 0.0) return logits.argmax().item<std::int64_t>();
  at::Tensor l = logits.div(o.temperature);
  if (o.top_k > 0 && o.top_k < l.size(0)) {
    const at::Tensor kth = std::get<0>(at::topk(l, o.top_k)).select(0, o.top_k - 1);
    l = l.masked_fill(l.lt(kth), -std::numeric_limits<float>::infinity());
  }
  return at::multinomial(at::softmax(l, 0), 1, /*replacement=*/false, gen).item<std::int64_t>();
}

}  // namespace

std::vector<std::vector<std::int64_t>> run_generate(const GenerateOptions& o, io::Provenance prov) {
  if (o.temperature < 0) throw io::UsageError("--temperature must be >= 0 (0 = greedy)");
  if (!o.prompt.empty() && !o.prompt_tokens.empty()) throw io::UsageError("give --prompt or --prompt-tokens, not both");
  if (!o.run.out.empty()) io::prepare_output_path(o.run.out, o.run.force, {o.checkpoint, o.vocab_dir});
  prov.threads = apply_torch_threads(o.run.threads);
  std::cerr << "threads    " << prov.threads << "\n";
  LoadedModel lm = load_for_run(o.checkpoint, o.model);
  const ModelConfig& cfg = lm.model->config();
  // The tokenizer must cover the ids users see: GPT-2's, also for a compact model (translated at its edge).
  const std::optional<data::Gpt2Tokenizer> tok =
      find_tokenizer(o, lm.ids.compact() ? kGpt2Vocab : cfg.vocab_size, lm.vocab.own);

  std::vector<std::int64_t> prompt;
  if (!o.prompt.empty()) {
    for (auto id : tok->encode(o.prompt, data::SpecialTokens::allowed)) prompt.push_back(static_cast<std::int64_t>(id));
  } else if (!o.prompt_tokens.empty()) {
    prompt = parse_token_ids(o.prompt_tokens, lm.ids, "--prompt-tokens");
  } else if (lm.ids.compact()) {
    prompt = {lm.ids.contains(50256) ? 50256 : lm.ids.ids().front()};  // <|endoftext|> when the data had it
  } else {
    prompt = {cfg.vocab_size > 50256 ? 50256 : 0};  // <|endoftext|>: start of a document
  }
  for (std::int64_t& id : prompt) id = lm.ids.to_model(id, "the prompt");  // GPT-2 ids -> the model's (compact) ids

  at::NoGradGuard no_grad;
  auto gen = at::make_generator<at::CPUGeneratorImpl>(o.run.seed);
  std::vector<std::vector<std::int64_t>> samples;
  const auto t_start = std::chrono::steady_clock::now();
  auto shown = t_start;
  for (std::int64_t s = 0; s < o.samples; ++s) {
    std::vector<std::int64_t> seq = prompt;
    for (std::int64_t step = 0; step < o.max_new_tokens; ++step) {
      if (const auto now = std::chrono::steady_clock::now(); now - shown > std::chrono::seconds(10)) {
        shown = now;  // a long generation says where it is
        std::cerr << "generating sample " << s + 1 << " of " << o.samples << ", token " << step + 1 << " of "
                  << o.max_new_tokens << ", " << std::lround(std::chrono::duration<double>(now - t_start).count())
                  << " s\n";
      }
      const std::size_t ctx = std::min<std::size_t>(seq.size(), static_cast<std::size_t>(cfg.block_size));
      const std::vector<std::int64_t> window(seq.end() - static_cast<std::ptrdiff_t>(ctx), seq.end());
      at::Tensor logits;
      {
        AutocastScope autocast(lm.device, lm.precision);
        logits = lm.model->logits(token_tensor(window, lm.device));
      }
      seq.push_back(pick(logits.select(1, logits.size(1) - 1).squeeze(0).to(at::kCPU), o, gen));
    }
    for (std::int64_t& id : seq) id = lm.ids.to_gpt2(id);  // back to GPT-2 ids for printing, decoding and the log
    std::cout << "sample " << s << " ids:";
    for (std::int64_t id : seq) std::cout << " " << id;
    std::cout << "\n";
    if (tok) {
      std::vector<data::TokenId> ids(seq.begin(), seq.end());
      std::cout << "sample " << s << " text: " << tok->decode(ids) << "\n";
    }
    samples.push_back(std::move(seq));
  }
  if (!o.run.out.empty()) {
    prov.kind = "gpt2/generate";
    io::RunLog log = io::RunLog::create(o.run.out, prov, o.run.force);
    const auto len = static_cast<std::uint64_t>(samples.empty() ? 0 : samples[0].size());
    log.declare_array("tokens", {static_cast<std::uint64_t>(samples.size()), len}, io::DType::i64);
    log.start();
    std::vector<std::int64_t> flat;
    for (const auto& s : samples) flat.insert(flat.end(), s.begin(), s.end());
    log.write_array("tokens", flat.data(), flat.size());
    log.set_summary("prompt_tokens", static_cast<std::int64_t>(prompt.size()));
    log.close();
    std::cout << "log        " << o.run.out << "\n";
  }
  return samples;
}

}  // namespace gaugelab::gpt2
