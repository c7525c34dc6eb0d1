#include "data/corpus_reader.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>

#include "data/bpe_vocab.hpp"

namespace gaugelab::data {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
bool is_space(char c) { return is_blank(c) || c == '\n' || c == '\f' || c == '\v'; }

bool all_space(std::string_view s) {
  for (char c : s)
    if (!is_space(c)) return false;
  return true;
}

gzFile as_gz(void* p) { return static_cast<gzFile>(p); }

}  // namespace

const char* to_string(InputFormat f) { return f == InputFormat::jsonl ? "jsonl" : "text"; }

InputFormat input_format_from_name(const std::string& path) {
  std::string p = path;
  if (ends_with(p, ".gz")) p.resize(p.size() - 3);
  for (const char* ext : {".jsonl", ".ndjson", ".json"})
    if (ends_with(p, ext)) return InputFormat::jsonl;
  return InputFormat::text;
}

bool is_gzip_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error(path + ": cannot open input: " + std::strerror(errno));
  unsigned char magic[2] = {0, 0};
  const std::size_t n = std::fread(magic, 1, 2, f);
  std::fclose(f);
  return n == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

DocumentReader::DocumentReader(const std::string& path, InputFormat format, bool split_paragraphs,
                               std::string json_field, std::size_t read_chunk)
    : path_(path),
      format_(format),
      split_paragraphs_(split_paragraphs),
      json_field_(std::move(json_field)),
      read_chunk_(read_chunk) {
  if (read_chunk < 1 || read_chunk > (std::size_t{1} << 30))
    throw std::invalid_argument("DocumentReader: read_chunk must be 1 .. 2^30 bytes");
  gzip_ = is_gzip_file(path);
  gz_ = gzopen(path.c_str(), "rb");  // transparent for files that are not gzip
  if (!gz_) throw std::runtime_error(path + ": cannot open input: " + std::strerror(errno));
  // zlib's own buffer: 256 KiB for a corpus's default reads, down to zlib's default 8 KiB for small ones
  gzbuffer(as_gz(gz_), static_cast<unsigned>(std::clamp<std::size_t>(read_chunk, 8 * 1024, 256 * 1024)));
}

DocumentReader::~DocumentReader() {
  if (gz_) gzclose(as_gz(gz_));
}

bool DocumentReader::fill() {
  if (eof_) return false;
  if (pos_ > 0 && pos_ >= buf_.size() / 2) {  // drop what was consumed
    buf_.erase(0, pos_);
    pos_ = 0;
  }
  const std::size_t old = buf_.size();
  buf_.resize(old + read_chunk_);
  const int n = gzread(as_gz(gz_), buf_.data() + old, static_cast<unsigned>(read_chunk_));
  if (n < 0) {
    int errnum = 0;
    const char* msg = gzerror(as_gz(gz_), &errnum);
    throw std::runtime_error(path_ + ": read failed (" + std::string(msg ? msg : "unknown error") +
                             "; truncated or corrupt gzip?)");
  }
  buf_.resize(old + static_cast<std::size_t>(n));
  bytes_read_ += static_cast<std::uint64_t>(n);
  if (n == 0) {
    eof_ = true;
    // A gzip stream cut short reads as a clean end in zlib's transparent mode; ask explicitly.
    int errnum = Z_OK;
    const char* msg = gzerror(as_gz(gz_), &errnum);
    if (errnum != Z_OK && errnum != Z_STREAM_END)
      throw std::runtime_error(path_ + ": read failed (" + std::string(msg ? msg : "unknown error") + ")");
  }
  return n > 0;
}

bool DocumentReader::next(std::string& doc) {
  return format_ == InputFormat::jsonl ? next_jsonl(doc) : next_text(doc);
}

namespace {

// The first document separator in b[from, ...): EOT always, blank lines if `paragraphs`.
// found: [start, end) is the separator. Otherwise `resume` is the earliest offset a later search
// must look at again once more bytes arrive (a separator may straddle the buffer's end).
struct SepSearch {
  bool found = false;
  std::size_t start = 0, end = 0, resume = 0;
};

SepSearch find_separator(std::string_view b, std::size_t from, bool paragraphs, bool eof) {
  const std::string_view eot(kEndOfText);
  SepSearch r;
  std::size_t limit = b.size();
  if (const std::size_t h = b.find(eot, from); h != std::string_view::npos) {
    r = {true, h, h + eot.size(), 0};
    limit = h;
  } else {
    r.resume = b.size() >= eot.size() - 1 ? std::max(from, b.size() - (eot.size() - 1)) : from;
  }
  if (!paragraphs) return r;
  for (std::size_t i = b.find('\n', from); i != std::string_view::npos && i < limit; i = b.find('\n', i + 1)) {
    // Is line i+1.. blank? Then extend over all following blank lines.
    std::size_t end = i + 1, n_blank = 0;
    for (;;) {
      std::size_t k = end;
      while (k < b.size() && is_blank(b[k])) ++k;
      if (k == b.size() && !eof) return SepSearch{false, 0, 0, std::min(r.found ? i : r.resume, i)};
      if (k < b.size() && b[k] == '\n') {
        end = k + 1, ++n_blank;
        continue;
      }
      break;
    }
    if (n_blank > 0) return SepSearch{true, i, end, 0};
  }
  return r;
}

}  // namespace

bool DocumentReader::next_text(std::string& doc) {
  std::size_t scan_rel = 0;  // bytes after pos_ already known to start no separator
  for (;;) {
    const std::string_view b(buf_);
    const SepSearch s = find_separator(b, pos_ + scan_rel, split_paragraphs_, eof_);
    if (s.found) {
      const std::string_view d = b.substr(pos_, s.start - pos_);
      pos_ = s.end;
      scan_rel = 0;
      if (all_space(d)) continue;
      doc.assign(d);
      return true;
    }
    if (eof_) {
      const std::string_view rest = b.substr(pos_);
      pos_ = buf_.size();
      if (all_space(rest)) return false;
      doc.assign(rest);
      return true;
    }
    scan_rel = s.resume - pos_;
    fill();  // may move the unread bytes to the front; offsets relative to pos_ stay valid
  }
}

bool DocumentReader::next_jsonl(std::string& doc) {
  for (;;) {
    std::size_t nl = buf_.find('\n', pos_);
    while (nl == std::string::npos && fill()) nl = buf_.find('\n', pos_);
    if (nl == std::string::npos && pos_ >= buf_.size()) return false;
    const std::size_t end = nl == std::string::npos ? buf_.size() : nl;
    std::string_view line = std::string_view(buf_).substr(pos_, end - pos_);
    pos_ = nl == std::string::npos ? buf_.size() : nl + 1;
    ++line_no_;
    if (all_space(line)) continue;
    const std::string where = path_ + ":" + std::to_string(line_no_) + ": ";
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(where + "bad JSON (" + e.what() + ")");
    }
    if (!j.is_object()) throw std::runtime_error(where + "expected a JSON object per line");
    const auto it = j.find(json_field_);
    if (it == j.end() || !it->is_string())
      throw std::runtime_error(where + "no string field \"" + json_field_ + "\"");
    doc = it->get<std::string>();
    return true;
  }
}

}  // namespace gaugelab::data
