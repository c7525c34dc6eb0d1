// Documents from corpus files: plain text or JSONL, either optionally gzip-compressed.
//
//  * gzip is detected by its magic bytes (1f 8b), never by the file name.
//  * Format: "jsonl" if the name (without a trailing .gz) ends in .jsonl, .ndjson or .json, else
//    "text" — unless the caller forces one.
//  * Text: documents are separated by the literal "<|endoftext|>" (a file without it is one
//    document); with split_paragraphs, blank lines (lines holding only spaces, tabs or \r) separate
//    documents too. Separators are dropped; documents that are only whitespace are skipped.
//  * JSONL: one JSON object per line, the document is its string field `json_field` (default
//    "text"), taken verbatim (a literal "<|endoftext|>" inside it is text, not a separator). Blank
//    lines are skipped; a bad line is an error "PATH:LINE: ...".
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace gaugelab::data {

enum class InputFormat { text, jsonl };

const char* to_string(InputFormat f);
/// The format a path gets by default (see above).
InputFormat input_format_from_name(const std::string& path);
/// True if the file starts with the gzip magic bytes. Throws naming the path if it cannot be opened.
bool is_gzip_file(const std::string& path);

/// Bytes a DocumentReader asks of zlib per read by default: large enough that call overhead does not matter.
inline constexpr std::size_t kDefaultReadChunk = std::size_t{1} << 20;

class DocumentReader {
 public:
  /// read_chunk: bytes per read (1 .. 2^30; std::invalid_argument otherwise). The documents of a readable file do not
  /// depend on it (a gzip stream zlib finds corrupt ends where its failing read began); a small one makes every
  /// separator straddle reads (the fuzz target compares it with a whole-file read).
  DocumentReader(const std::string& path, InputFormat format, bool split_paragraphs = false,
                 std::string json_field = "text", std::size_t read_chunk = kDefaultReadChunk);
  ~DocumentReader();
  DocumentReader(const DocumentReader&) = delete;
  DocumentReader& operator=(const DocumentReader&) = delete;

  /// Next document into `doc`; false at the end of the file.
  bool next(std::string& doc);

  const std::string& path() const { return path_; }
  InputFormat format() const { return format_; }
  bool gzip() const { return gzip_; }
  /// Uncompressed bytes read so far.
  std::uint64_t bytes_read() const { return bytes_read_; }

 private:
  bool fill();                          // reads more into buf_; false at EOF
  bool next_text(std::string& doc);
  bool next_jsonl(std::string& doc);

  std::string path_;
  InputFormat format_;
  bool split_paragraphs_;
  std::string json_field_;
  bool gzip_ = false;
  std::size_t read_chunk_;
  void* gz_ = nullptr;  // gzFile (reads plain files transparently)
  std::string buf_;     // unread bytes
  std::size_t pos_ = 0; // start of the unread part of buf_
  bool eof_ = false;
  std::uint64_t bytes_read_ = 0;
  std::uint64_t line_no_ = 0;  // JSONL: lines consumed
};

}  // namespace gaugelab::data
