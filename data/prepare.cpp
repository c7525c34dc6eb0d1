#include "data/prepare.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <stdexcept>

#include "core/random.hpp"
#include "data/corpus_reader.hpp"
#include "data/token_files.hpp"
#include "data/tokenizer.hpp"
#include "io/writer_lock.hpp"
#include "io/options.hpp"
#include "io/run_flags.hpp"

namespace gaugelab::data {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// ---- where documents come from -------------------------------------------------------------

struct SourceStats {
  std::string path;
  InputFormat format = InputFormat::text;
  bool gzip = false;
  std::uint64_t documents = 0, bytes = 0;
};

class DocumentSource {
 public:
  explicit DocumentSource(const PrepareOptions& o) : o_(o) {}

  /// The next document; `held_out` says it comes from val_inputs.
  bool next(std::string& doc, bool& held_out) {
    held_out = false;
    if (o_.synthetic) {
      if (synthetic_next_ >= o_.synthetic_options.n_docs) return false;
      doc = synthetic_document(o_.synthetic_options, synthetic_next_++);
      bytes_ += doc.size();
      return true;
    }
    for (;;) {
      if (!reader_) {
        if (file_ >= o_.inputs.size() + o_.val_inputs.size()) return false;
        const std::string& path =
            file_ < o_.inputs.size() ? o_.inputs[file_] : o_.val_inputs[file_ - o_.inputs.size()];
        const InputFormat f = o_.input_format == "text"    ? InputFormat::text
                              : o_.input_format == "jsonl" ? InputFormat::jsonl
                                                           : input_format_from_name(path);
        reader_ = std::make_unique<DocumentReader>(path, f, o_.split_paragraphs, o_.json_field);
        stats_.push_back({path, f, reader_->gzip(), 0, 0});
      }
      if (reader_->next(doc)) {
        held_out = file_ >= o_.inputs.size();
        ++stats_.back().documents;
        stats_.back().bytes += doc.size();
        bytes_ += doc.size();
        return true;
      }
      reader_.reset();
      ++file_;
    }
  }

  std::uint64_t bytes() const { return bytes_; }
  const std::vector<SourceStats>& stats() const { return stats_; }

 private:
  const PrepareOptions& o_;
  std::unique_ptr<DocumentReader> reader_;
  std::size_t file_ = 0;
  std::size_t synthetic_next_ = 0;
  std::uint64_t bytes_ = 0;
  std::vector<SourceStats> stats_;
};

// ---- where tokens go ------------------------------------------------------------------------

// Files are written under a temporary name and renamed only when the whole run succeeded.
std::string tmp_name(const std::string& path) { return path + ".tmp"; }

class SplitOutput {
 public:
  SplitOutput(const PrepareOptions& o, const std::string& split) : o_(o), split_(split) {
    if (o.write_nanogpt) {
      const std::string path = (fs::path(o.out_dir) / (split + ".bin")).string();
      nanogpt_ = std::make_unique<TokenFileWriter>(tmp_name(path), TokenFileFormat::nanogpt);
      files_.push_back(path);
    }
  }

  void append(std::span<const TokenId> tokens) {
    if (nanogpt_) nanogpt_->append(tokens);
    if (!o_.write_llmc) return;
    while (!tokens.empty()) {
      if (!shard_ || shard_->count() >= o_.shard_tokens) open_next_shard();
      const std::size_t room = static_cast<std::size_t>(o_.shard_tokens - shard_->count());
      const std::size_t n = std::min(room, tokens.size());
      shard_->append(tokens.first(n));
      tokens = tokens.subspan(n);
    }
  }

  /// Completes every file (a split with no tokens still gets an empty shard 000000).
  std::vector<std::string> finish() {
    if (nanogpt_) nanogpt_->close();
    if (o_.write_llmc && !shard_) open_next_shard();
    if (shard_) shard_->close();
    return files_;
  }

 private:
  void open_next_shard() {
    if (shard_) shard_->close();
    char num[16];
    std::snprintf(num, sizeof num, "%06d", n_shards_++);
    const std::string path = (fs::path(o_.out_dir) / (o_.name + "_" + split_ + "_" + num + ".bin")).string();
    files_.push_back(path);
    shard_ = std::make_unique<TokenFileWriter>(tmp_name(path), TokenFileFormat::llmc);
  }

  const PrepareOptions& o_;
  std::string split_;
  std::unique_ptr<TokenFileWriter> nanogpt_, shard_;
  int n_shards_ = 0;
  std::vector<std::string> files_;
};

// ---- progress -------------------------------------------------------------------------------

class Progress {
 public:
  Progress(bool on, double interval_s) : on_(on), interval_(interval_s), start_(Clock::now()), last_(start_) {}
  void update(std::uint64_t bytes, std::uint64_t docs, std::uint64_t tokens, bool final = false) {
    if (!on_) return;
    const auto now = Clock::now();
    if (!final && std::chrono::duration<double>(now - last_).count() < interval_) return;
    last_ = now;
    const double s = std::max(1e-9, std::chrono::duration<double>(now - start_).count());
    std::fprintf(stderr, "\rprepare: %.1f MB, %.2f MB/s, %llu documents, %llu tokens%s", bytes / 1e6,
                 bytes / 1e6 / s, static_cast<unsigned long long>(docs), static_cast<unsigned long long>(tokens),
                 final ? "\n" : "   ");
    std::fflush(stderr);
  }

 private:
  bool on_;
  double interval_;
  Clock::time_point start_, last_;
};

// ---- output names ---------------------------------------------------------------------------

bool is_our_shard(const PrepareOptions& o, const std::string& filename) {
  static const std::regex six_digits_bin("[0-9]{6}\\.bin");
  for (const char* split : {"train", "val"}) {
    const std::string prefix = o.name + "_" + split + "_";
    if (filename.size() == prefix.size() + 10 && filename.compare(0, prefix.size(), prefix) == 0 &&
        std::regex_match(filename.substr(prefix.size()), six_digits_bin))
      return true;
  }
  return false;
}

// Refuses (without force) if any output name exists; returns existing llm.c shards of this name.
std::vector<fs::path> check_outputs(const PrepareOptions& o) {
  std::vector<fs::path> shards;
  // No output file may be an input, --force or not (the same rule as every verb's --out: io/run_flags.hpp).
  std::vector<std::string> inputs = o.inputs;
  inputs.insert(inputs.end(), o.val_inputs.begin(), o.val_inputs.end());
  if (!fs::exists(o.out_dir)) return shards;
  if (!fs::is_directory(o.out_dir))
    throw io::UsageError("--out " + o.out_dir + ": output path exists and is not a directory");
  std::vector<std::string> fixed = {"meta.json"};
  if (o.write_nanogpt) fixed.insert(fixed.end(), {"train.bin", "val.bin"});
  for (const auto& f : fixed) io::refuse_output_over_inputs((fs::path(o.out_dir) / f).string(), inputs);
  // Nor may the output directory hold an input (its token files would lie among the texts they come from).
  io::refuse_output_over_inputs(o.out_dir, inputs);
  for (const auto& f : fixed) {
    const fs::path p = fs::path(o.out_dir) / f;
    if (fs::exists(p) && !o.force) throw io::UsageError("--out: " + p.string() + " already exists (use --force to replace it)");
  }
  for (const auto& entry : fs::directory_iterator(o.out_dir)) {
    if (!is_our_shard(o, entry.path().filename().string())) continue;
    io::refuse_output_over_inputs(entry.path().string(), inputs);
    if (!o.force) throw io::UsageError("--out: " + entry.path().string() + " already exists (use --force to replace it)");
    shards.push_back(entry.path());
  }
  return shards;
}

// Every string of j with its bytes that are not UTF-8 written as \xNN (io::utf8_safe), as the run logs
// record paths: a file name is legal with any bytes on Linux, JSON holds only UTF-8.
nlohmann::json utf8_safe_strings(const nlohmann::json& j) {
  if (j.is_string()) return io::utf8_safe(j.get<std::string>());
  if (!j.is_structured()) return j;
  nlohmann::json out = j;
  for (auto it = out.begin(); it != out.end(); ++it) *it = utf8_safe_strings(*it);
  return out;
}

nlohmann::json meta_json(const PrepareOptions& o, const Gpt2Tokenizer& tok, const DocumentSource& src,
                         const PrepareResult& r) {
  auto split_json = [&](const PrepareSplit& s) {
    nlohmann::json files = nlohmann::json::array();
    for (const auto& f : s.files) files.push_back(fs::path(f).filename().string());
    return nlohmann::json{{"documents", s.documents}, {"tokens", s.tokens}, {"files", files}};
  };
  nlohmann::json meta = {
      {"format_version", 1},
      {"tokenizer",
       {{"kind", "gpt2-bpe"},
        {"source", tok.vocab().source},
        {"sha256", tok.vocab().sha256},
        {"vocab_size", tok.vocab_size()},
        {"eot", tok.eot()}}},
      {"document_boundary", "each document is <|endoftext|> followed by its tokens"},
      {"token_dtype", "uint16 little-endian"},
      {"split",
       o.val_inputs.empty()
           ? nlohmann::json{{"val_fraction", o.val_fraction},
                            {"seed", o.seed},
                            {"rule", "document i is validation iff floor((i+1)*f + phi) > floor(i*f + phi), phi from seed"}}
           : nlohmann::json{{"held_out_files", o.val_inputs},
                            {"rule", "every document of held_out_files is validation, every other one training"}}},
      {"llmc",
       {{"enabled", o.write_llmc},
        {"name", o.name},
        {"shard_tokens", o.shard_tokens},
        {"magic", kLlmcMagic},
        {"version", kLlmcVersion}}},
      {"nanogpt", o.write_nanogpt},
      {"bytes", r.bytes_in},
      {"train", split_json(r.train)},
      {"val", split_json(r.val)},
  };
  if (o.synthetic) {
    meta["sources"] = nlohmann::json::array({{{"synthetic", o.synthetic_options.to_json()}}});
  } else {
    nlohmann::json sources = nlohmann::json::array();
    for (const auto& s : src.stats())
      sources.push_back({{"path", s.path},
                         {"format", to_string(s.format)},
                         {"gzip", s.gzip},
                         {"documents", s.documents},
                         {"bytes", s.bytes}});
    meta["sources"] = sources;
    meta["input"] = {{"format", o.input_format}, {"json_field", o.json_field}, {"split_paragraphs", o.split_paragraphs}};
  }
  return meta;
}

double split_phase(std::uint64_t seed) {
  return static_cast<double>(core::splitmix64(seed) >> 11) * 0x1.0p-53;
}

// Removes this run's temporary files (their names are known even for files not yet finished).
void remove_temporaries(const PrepareOptions& o) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(o.out_dir, ec)) {
    const std::string f = entry.path().filename().string();
    if (f.size() <= 4 || f.compare(f.size() - 4, 4, ".tmp") != 0) continue;
    const std::string base = f.substr(0, f.size() - 4);
    if (base == "train.bin" || base == "val.bin" || base == "meta.json" || is_our_shard(o, base))
      fs::remove(entry.path(), ec);
  }
}

}  // namespace

bool is_validation_document(std::uint64_t index, double f, std::uint64_t seed) {
  if (f <= 0.0) return false;
  const double phi = split_phase(seed);
  const double i = static_cast<double>(index);
  return std::floor((i + 1.0) * f + phi) > std::floor(i * f + phi);
}

void PrepareOptions::validate() const {
  using io::UsageError;
  if (synthetic && !inputs.empty()) throw UsageError("prepare: give input files or --synthetic, not both");
  if (synthetic && !val_inputs.empty()) throw UsageError("prepare: held-out validation files need input files, not --synthetic");
  if (!synthetic && inputs.empty()) throw UsageError("prepare: no input files (give --input FILE... or --synthetic)");
  if (out_dir.empty()) throw UsageError("prepare: --out-dir is required");
  if (name.empty() || name.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") !=
                          std::string::npos)
    throw UsageError("prepare: --name must be non-empty letters, digits, '.', '_' or '-' (got '" + name + "')");
  if (!ranks_path.empty() && !vocab_dir.empty())
    throw UsageError("prepare: give --ranks-path or --vocab-dir, not both");
  if (input_format != "auto" && input_format != "text" && input_format != "jsonl")
    throw UsageError("prepare: --input-format must be auto, text or jsonl (got '" + input_format + "')");
  if (json_field.empty()) throw UsageError("prepare: --json-field must not be empty");
  if (!(val_fraction >= 0.0 && val_fraction < 1.0))
    throw UsageError("prepare: --val-fraction must be in [0, 1) (got " + std::to_string(val_fraction) + ")");
  if (shard_tokens < 1 || shard_tokens > 0x7FFFFFFFull)
    throw UsageError("prepare: --shard-tokens must be in [1, 2147483647] (an llm.c header holds an int32 count)");
  if (!write_nanogpt && !write_llmc) throw UsageError("prepare: nothing to write (both --nanogpt and --llmc are off)");
  if (batch_bytes < 1) throw UsageError("prepare: --batch-bytes must be >= 1");
  if (threads < 0) throw UsageError("prepare: --threads must be >= 0");
  if (!(progress_interval_s > 0.0)) throw UsageError("prepare: --progress-interval must be > 0");
  if (synthetic) synthetic_options.validate();
}

PrepareResult run_prepare(const PrepareOptions& o) {
  o.validate();
  const auto t0 = Clock::now();
  const std::string ranks = o.ranks_path.empty() ? Gpt2Tokenizer::default_ranks_path() : o.ranks_path;
  const Gpt2Tokenizer tok =
      o.vocab_dir.empty() ? Gpt2Tokenizer::from_tiktoken(ranks) : Gpt2Tokenizer::from_vocab_dir(o.vocab_dir);
  // One writer per output directory: a second prepare into it would mix its shards with ours.
  const bool out_existed = fs::exists(o.out_dir);
  const io::WriterLock lock = io::WriterLock::acquire_dir(o.out_dir, "prepare");
  const std::vector<fs::path> old_shards = check_outputs(o);
  fs::create_directories(o.out_dir);

  PrepareResult r;
  r.threads = o.threads > 0 ? o.threads : omp_get_max_threads();
  try {
    DocumentSource src(o);
    SplitOutput out_train(o, "train"), out_val(o, "val");
    std::vector<std::unique_ptr<EncodeScratch>> scratch(static_cast<std::size_t>(r.threads));
    for (auto& s : scratch) s = std::make_unique<EncodeScratch>();
    Progress progress(o.progress, o.progress_interval_s);
    std::vector<std::string> docs;
    std::vector<char> held_out;  // [docs] from val_inputs
    std::vector<std::vector<TokenId>> tokens;
    std::uint64_t index = 0;
    for (bool more = true; more;) {
      docs.clear();
      held_out.clear();
      std::uint64_t batch = 0;
      std::string doc;
      bool from_val = false;
      while (batch < o.batch_bytes && (more = src.next(doc, from_val))) {
        batch += doc.size();
        docs.push_back(std::move(doc));
        held_out.push_back(from_val ? 1 : 0);
      }
      if (docs.empty()) break;
      tokens.resize(docs.size());
      std::exception_ptr error;
      const auto n_docs = static_cast<std::ptrdiff_t>(docs.size());
#pragma omp parallel for num_threads(r.threads) schedule(dynamic, 8)
      for (std::ptrdiff_t i = 0; i < n_docs; ++i) {
        try {
          auto& t = tokens[static_cast<std::size_t>(i)];
          t.clear();
          t.push_back(tok.eot());
          tok.encode_into(docs[static_cast<std::size_t>(i)], SpecialTokens::as_text, t,
                          *scratch[static_cast<std::size_t>(omp_get_thread_num())]);
        } catch (...) {
#pragma omp critical(gaugelab_prepare_error)
          if (!error) error = std::current_exception();
        }
      }
      if (error) std::rethrow_exception(error);
      for (std::size_t d = 0; d < tokens.size(); ++d) {
        const auto& t = tokens[d];
        const bool by_file = !o.val_inputs.empty();
        const bool val = by_file ? held_out[d] != 0 : is_validation_document(index, o.val_fraction, o.seed);
        ++index;
        PrepareSplit& split = val ? r.val : r.train;
        (val ? out_val : out_train).append(t);
        ++split.documents;
        split.tokens += t.size();
      }
      progress.update(src.bytes(), index, r.train.tokens + r.val.tokens);
    }
    // A corpus with nothing to train on is refused before any output takes its name.
    if (index == 0)
      throw io::UsageError("the input holds no document (0 tokens): nothing to tokenise (an empty file?)");
    if (r.train.tokens == 0)
      throw io::UsageError("all " + std::to_string(index) + " document(s) went to the validation split, none to "
                           "train (more documents, or a lower --val-fraction)");
    r.train.files = out_train.finish();
    r.val.files = out_val.finish();
    r.bytes_in = src.bytes();
    progress.update(src.bytes(), index, r.train.tokens + r.val.tokens, true);
    r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    r.meta_path = (fs::path(o.out_dir) / "meta.json").string();
    {
      std::ofstream meta(tmp_name(r.meta_path), std::ios::trunc);
      meta << utf8_safe_strings(meta_json(o, tok, src, r)).dump(2) << "\n";
      meta.close();
      if (!meta) throw std::runtime_error(tmp_name(r.meta_path) + ": write failed");
    }
    // Success: the new files take the output names; shards of an earlier, longer run go.
    std::vector<std::string> written = r.train.files;
    written.insert(written.end(), r.val.files.begin(), r.val.files.end());
    for (const auto& f : written) fs::rename(tmp_name(f), f);
    fs::rename(tmp_name(r.meta_path), r.meta_path);
    for (const auto& old : old_shards)
      if (std::find(written.begin(), written.end(), old.string()) == written.end()) fs::remove(old);
  } catch (...) {
    remove_temporaries(o);
    std::error_code ec;
    if (!out_existed) fs::remove(o.out_dir, ec);  // the directory this run made, when it holds nothing
    throw;
  }
  return r;
}

}  // namespace gaugelab::data
