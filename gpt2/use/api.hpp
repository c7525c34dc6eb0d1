// The GPT-2 tier's verbs as plain functions with LibTorch-free signatures, for the front door
// (cli/verb_model.cpp): eval, generate, export, import. Each prints its settings first and a
// one-screen summary last; errors are std::runtime_error lines the front door prints.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpt2/model/choices.hpp"
#include "io/options.hpp"
#include "io/provenance.hpp"
#include "io/run_flags.hpp"

namespace gaugelab::gpt2 {

/// Where and how a loaded model runs.
struct ModelRunOptions {
  std::string device = "cpu";           // cpu, cuda, cuda:N
  Precision precision = Precision::fp32;  // fp32, or bf16 (autocast; parameters stay float32)
  std::string multipliers = "default";  // placement (config.hpp LrmPlacement::parse) given to a
                                        // Hugging Face directory on load; our checkpoints carry theirs
};

struct EvalOptions {
  std::string checkpoint;            // our checkpoint directory or a Hugging Face export directory
  std::string data;                  // token file (nanoGPT .bin or llm.c shard): mean validation loss
  std::vector<std::string> tokens;   // token ids: the logits of exactly this one sequence
  std::string dump_logits;           // HDF5 file for those logits (/arrays/logits [T, vocab], /arrays/tokens)
  std::int64_t batch_size = 8;       // sequences per validation batch
  std::int64_t seq_len = 0;          // tokens per sequence; 0 = the model's block_size
  std::int64_t batches = 20;         // fixed batches, evenly spread over the token file
  ModelRunOptions model;
  io::RunFlags run;                  // --out: optional HDF5 log of the per-batch losses
};

struct EvalResult {
  double val_loss = 0;          // mean over the batches (data mode), else NaN
  std::int64_t val_tokens = 0;  // predictions averaged
  double sequence_loss = 0;     // next-token loss of --tokens (NaN if fewer than 2 tokens)
};

/// `gaugelab eval`. `prov` carries kind, argv and the resolved options; threads are filled in here.
EvalResult run_eval(const EvalOptions& options, io::Provenance prov);

struct GenerateOptions {
  std::string checkpoint;                // as for eval
  std::vector<std::string> prompt_tokens;  // prompt as token ids
  std::string prompt;                    // prompt as text (needs the GPT-2 tokenizer)
  std::string vocab_dir;                 // encoder.json + vocab.bpe directory; empty: the set-up script's gpt2.tiktoken
  std::int64_t max_new_tokens = 64;      // tokens generated per sample
  std::int64_t samples = 1;              // independent samples
  double temperature = 1.0;              // 0 = greedy (argmax)
  std::int64_t top_k = 0;                // keep the k most likely tokens; 0 = all
  ModelRunOptions model;
  io::RunFlags run;                      // --seed drives sampling; --out: optional HDF5 with the tokens
};

/// `gaugelab generate`: prints the token ids of every sample, and its text when the tokenizer is
/// available and the model's vocabulary is GPT-2's. Returns the samples (prompt included).
std::vector<std::vector<std::int64_t>> run_generate(const GenerateOptions& options, io::Provenance prov);

struct ExportOptions {
  std::string checkpoint;      // our checkpoint (or a Hugging Face directory, re-exported)
  std::string out;             // directory for model.safetensors + config.json
  bool force = false;          // replace an existing --out
  std::string dtype = "F32";   // stored precision: F32 (exact), BF16 or F16
  std::string vocab = "as-stored";  // as-stored: refuses a model whose rows transformers would misread; full: a
                                    // --compact-vocab model's rows at their GPT-2 ids among 50257, the others 0;
                                    // own: a model of fewer rows whose ids are its own tokenizer's, not GPT-2's
};
void run_export(const ExportOptions& options);

struct ImportOptions {
  std::string source;          // Hugging Face directory (model.safetensors + config.json)
  std::string out;             // our checkpoint directory
  bool force = false;          // replace an existing --out
  std::string multipliers = "default";  // placement of the new multipliers (all start at 1)
};
void run_import(const ImportOptions& options);

/// The options of `gaugelab eval`, bound to the fields of `o` (their defaults), declared once
/// (gpt2/use/options.cpp); the front door parses with them.
io::Options eval_options(EvalOptions& o);
/// The options of `gaugelab generate`, bound to the fields of `o` (their defaults), declared once
/// (gpt2/use/options.cpp); the front door parses with them.
io::Options generate_options(GenerateOptions& o);
/// The options of `gaugelab export`, bound to the fields of `o` (their defaults), declared once
/// (gpt2/use/options.cpp); the front door parses with them.
io::Options export_options(ExportOptions& o);
/// The options of `gaugelab import`, bound to the fields of `o` (their defaults), declared once
/// (gpt2/use/options.cpp); the front door parses with them.
io::Options import_options(ImportOptions& o);

}  // namespace gaugelab::gpt2
