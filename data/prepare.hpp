// `gaugelab prepare` as a library function: corpus files (or the synthetic corpus) -> GPT-2 token
// files for training.
//
// Pipeline: documents are read in order (every input file in the order given, see corpus_reader.hpp
// for what a document is), gathered into batches of about `batch_bytes` of text, each batch is
// tokenised in parallel with OpenMP (documents are independent; results are written in document
// order, so the output is byte-identical for any thread count), and every document is written as
// <|endoftext|> followed by its tokens (llm.c's convention: the token stream of each split starts
// with <|endoftext|> and the token also separates documents).
//
// Split: with `val_inputs`, by file (those files are validation, `inputs` training: a held-out-work split);
// otherwise document i (0-based over the whole input) goes to validation iff
//     floor((i+1)·f + φ) > floor(i·f + φ),   f = val_fraction, φ ∈ [0,1) drawn from `seed`,
// which puts exactly floor(n·f + φ) of the first n documents in validation, evenly spread (one in
// every 1/f), deterministically, independent of threads and batches, and unchanged for earlier
// documents when more input is appended.
//
// Outputs in out_dir (each written as NAME.tmp and renamed when everything succeeded):
//   train.bin, val.bin                       nanoGPT raw uint16          (write_nanogpt)
//   <name>_train_NNNNNN.bin, <name>_val_...  llm.c shards, shard_tokens each, the last one shorter
//                                            (write_llmc; a split always has shard 000000)
//   meta.json                                tokenizer, counts, split rule, seed, sources, files
// Existing outputs (any of the above names) make it refuse unless `force`; with `force`, llm.c shards
// of the same name left over from an earlier, longer run are removed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/synthetic_corpus.hpp"

namespace gaugelab::data {

struct PrepareOptions {
  std::vector<std::string> inputs;      // text / JSONL files, each optionally gzip-compressed
  std::vector<std::string> val_inputs;  // files held out whole: all their documents go to validation, and
                                        // then every document of `inputs` goes to training (val_fraction unused)
  bool synthetic = false;               // tokenise the built-in synthetic corpus instead of inputs
  SyntheticCorpusOptions synthetic_options;  // used only when synthetic
  std::string out_dir;                  // required; created if missing
  std::string name = "corpus";          // llm.c shard prefix (letters, digits, '.', '_', '-')
  std::string ranks_path;               // gpt2.tiktoken; empty = Gpt2Tokenizer::default_ranks_path()
  std::string vocab_dir;                // non-empty: encoder.json + vocab.bpe from here instead
  std::string input_format = "auto";    // auto | text | jsonl (auto: by file name, see corpus_reader.hpp)
  std::string json_field = "text";      // JSONL field holding the document
  bool split_paragraphs = false;        // text inputs: blank lines also separate documents
  double val_fraction = 0.01;           // share of documents in validation, in [0, 1)
  std::uint64_t seed = 1337;            // chooses the split's phase φ (which documents are val)
  std::uint64_t shard_tokens = 100000000;  // llm.c tokens per shard (llm.c's FineWeb value), <= 2^31-1
  bool write_nanogpt = true;            // train.bin / val.bin
  bool write_llmc = true;               // llm.c shards
  std::uint64_t batch_bytes = 16u << 20;  // text gathered per parallel batch (memory ~ 4x this)
  int threads = 0;                      // OpenMP threads; 0 = omp_get_max_threads()
  bool progress = true;                 // a progress line on stderr (MB/s), at most every interval
  double progress_interval_s = 1.0;
  bool force = false;                   // replace existing outputs

  /// Throws io::UsageError naming the offending option (flag-style, e.g. "--val-fraction").
  void validate() const;
};

struct PrepareSplit {
  std::uint64_t documents = 0;
  std::uint64_t tokens = 0;            // including one <|endoftext|> per document
  std::vector<std::string> files;      // paths written (nanoGPT file first, then llm.c shards)
};

struct PrepareResult {
  PrepareSplit train, val;
  std::uint64_t bytes_in = 0;          // uncompressed text bytes tokenised
  double seconds = 0.0;
  int threads = 0;
  std::string meta_path;
};

/// Runs the pipeline above. Throws std::runtime_error (one line naming the file) on bad input or
/// I/O failure; nothing is left under the output names then (temporary files are removed).
PrepareResult run_prepare(const PrepareOptions& options);

/// The split rule above: is document `index` in the validation split?
bool is_validation_document(std::uint64_t index, double val_fraction, std::uint64_t seed);

}  // namespace gaugelab::data
