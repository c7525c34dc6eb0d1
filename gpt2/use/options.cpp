// The options of `gaugelab eval, generate, export and import`, declared once in their tier (name, help, range or choices):
// the front door (cli/) parses with them; nothing else repeats them. No LibTorch here.
#include "gpt2/use/api.hpp"
#include "io/choice_option.hpp"
#include "io/options.hpp"

namespace gaugelab::gpt2 {

namespace {

void add_model_run_flags(io::Options& opts, ModelRunOptions& m) {
  opts.add("device", &m.device, "cpu, cuda or cuda:N");
  io::add_choice(opts, "precision", &m.precision, "fp32, or bf16 autocast", precision_choices())
      .add("multipliers", &m.multipliers,
           "multiplier placement given to a Hugging Face checkpoint on load: default, none, or site:mode,... "
           "(sites q k v attn_out mlp_in mlp_out lm_head all; modes none scalar row column row+column)");
}

// What one `generate` may ask for: each token is a forward pass of the model (a million take hours
// for GPT-2 on a CPU), and every sampled id is held until the end (1e8 ids: 800 MB).
constexpr double kMaxNewTokens = 1e6, kMaxSamples = 1e5, kMaxSampledTokens = 1e8;

}  // namespace

io::Options eval_options(EvalOptions& o) {
  io::Options opts("eval", "Mean validation loss of a checkpoint over fixed batches of a token file (--data), "
                           "and/or the logits of one token sequence (--tokens, --dump-logits OUT.h5).");
  opts.add("checkpoint", &o.checkpoint, "our checkpoint directory or a Hugging Face export directory")
      .positional("checkpoint")
      .add("data", &o.data, "token file for the validation loss (nanoGPT .bin or llm.c shard)")
      .add("tokens", &o.tokens, "comma list of token ids: compute the logits of exactly this sequence")
      .add("dump-logits", &o.dump_logits, "HDF5 file for the logits of --tokens (/arrays/logits [T, vocab])")
      .add("batch-size", &o.batch_size, "sequences per batch", io::Range::at_least(1))
      .add("seq-len", &o.seq_len, "tokens per sequence, 0 = the model's context", io::Range::non_negative())
      .add("batches", &o.batches, "fixed batches, evenly spread over the file (at most its distinct windows)",
           io::Range::at_least(1));
  add_model_run_flags(opts, o.model);
  io::add_run_flags(opts, o.run, "optional HDF5 log of the per-batch validation losses");
  return opts;
}

io::Options generate_options(GenerateOptions& o) {
  io::Options opts("generate", "Samples text from a checkpoint: greedy (--temperature 0), temperature and top-k "
                               "sampling, seeded. Prints token ids, and text when the GPT-2 tokenizer is available.");
  opts.add("checkpoint", &o.checkpoint, "our checkpoint directory or a Hugging Face export directory")
      .positional("checkpoint")
      .add("prompt", &o.prompt, "prompt text (needs the GPT-2 tokenizer)")
      .add("prompt-tokens", &o.prompt_tokens, "prompt as a comma list of token ids (default: <|endoftext|>)")
      .add("vocab-dir", &o.vocab_dir, "directory with encoder.json + vocab.bpe (default: the set-up script's gpt2.tiktoken)")
      .add("max-new-tokens", &o.max_new_tokens, "tokens to generate per sample (one forward pass each)",
           io::Range::closed(1, kMaxNewTokens))
      .add("samples", &o.samples, "independent samples", io::Range::closed(1, kMaxSamples))
      .add("temperature", &o.temperature, "softmax temperature, 0 = greedy", io::Range::non_negative())
      .add("top-k", &o.top_k, "sample among the k most likely tokens, 0 = all", io::Range::non_negative());
  add_model_run_flags(opts, o.model);
  io::add_run_flags(opts, o.run, "optional HDF5 file with the sampled tokens (/arrays/tokens)");
  opts.check([&o] {  // every sampled id is kept until the end (printed, logged): 8 bytes each
    if (static_cast<double>(o.samples) * static_cast<double>(o.max_new_tokens) > kMaxSampledTokens)
      throw io::UsageError("--samples " + std::to_string(o.samples) + " x --max-new-tokens " +
                           std::to_string(o.max_new_tokens) + " exceeds " + std::to_string(std::int64_t(kMaxSampledTokens)) +
                           " sampled tokens in all");
  });
  return opts;
}

io::Options export_options(ExportOptions& o) {
  io::Options opts("export", "Writes a checkpoint as Hugging Face GPT-2 (DIR/model.safetensors + DIR/config.json), "
                             "multipliers merged into the weights.");
  opts.add("checkpoint", &o.checkpoint, "our checkpoint directory").positional("checkpoint")
      .add("out", &o.out, "output directory")
      .add("force", &o.force, "replace an existing --out")
      .add("dtype", &o.dtype, "stored precision", {"F32", "BF16", "F16"})
      .add("vocab", &o.vocab,
           "as-stored (a model over GPT-2 ids; others are refused), full (a --compact-vocab model's rows at their "
           "GPT-2 ids among 50257, the others 0: logit 0 for ids its data never had) or own (fewer rows than "
           "GPT-2's, ids of the model's own tokenizer: train --vocab-size)",
           {"as-stored", "full", "own"});
  opts.check([&o] {
    if (o.checkpoint.empty() || o.out.empty()) throw io::UsageError("export: need CHECKPOINT and --out DIR");
  });
  return opts;
}

io::Options import_options(ImportOptions& o) {
  io::Options opts("import", "Reads a Hugging Face GPT-2 directory (model.safetensors + config.json) into our "
                             "checkpoint format, with learnable multipliers placed and set to 1.");
  opts.add("source", &o.source, "Hugging Face directory").positional("source")
      .add("out", &o.out, "checkpoint directory to write")
      .add("force", &o.force, "replace an existing --out")
      .add("multipliers", &o.multipliers, "multiplier placement: default, none, or site:mode,...");
  opts.check([&o] {
    if (o.source.empty() || o.out.empty()) throw io::UsageError("import: need SOURCE and --out CHECKPOINT");
  });
  return opts;
}

}  // namespace gaugelab::gpt2
