// Loading (and writing) the GPT-2 BPE vocabulary from its two published forms.
//
//  * `gpt2.tiktoken`: one line per token, "<base64 token bytes> <rank>", ranks 0..50255.
//  * `encoder.json` + `vocab.bpe` (the original release): token strings in GPT-2's byte-to-unicode
//    alphabet mapped to ids, and the merges in rank order (merge k creates token 256 + k).
//
// Both describe the same 50 257-token vocabulary; `<|endoftext|>` is id 50256. Every error (missing
// file, bad base64, malformed line, inconsistent files) is a std::runtime_error whose message is one
// line "PATH:LINE: what is wrong" (or "PATH: ..." when no single line is at fault).
#pragma once

#include <array>
#include <string>

#include "data/rank_table.hpp"

namespace gaugelab::data {

/// The special token GPT-2 places between documents.
inline constexpr const char* kEndOfText = "<|endoftext|>";

struct BpeVocab {
  RankTable ranks;     // token bytes <-> id for the ids [0, ranks.size())
  TokenId eot = 0;     // id of <|endoftext|> (ranks.size() for GPT-2: 50256)
  std::string source;  // file or directory it came from
  std::string sha256;  // SHA-256 of the ranks file; for a vocab dir "encoder.json:<sha> vocab.bpe:<sha>"
};

/// Reads a `.tiktoken` ranks file. Ranks must be a permutation of 0..N-1 (any line order, blank
/// lines skipped like tiktoken does) and all 256 single bytes must be tokens; eot = N.
BpeVocab load_tiktoken_ranks(const std::string& path);

/// Reads DIR/encoder.json and DIR/vocab.bpe. Ranks come from the merges (bytes first, in GPT-2's
/// printable-first order, then one rank per merge line); encoder.json must agree with them entry for
/// entry and must hold "<|endoftext|>", whose id becomes eot.
BpeVocab load_gpt2_vocab_dir(const std::string& dir);

/// Writes DIR/encoder.json and DIR/vocab.bpe for `vocab` in the original release's exact format
/// (for GPT-2 the files are byte-identical to the published ones). Each merge is found by re-running
/// BPE on a token's bytes with only lower ranks allowed. Throws if the vocabulary cannot be written
/// as merges (first 256 ranks not the single bytes in GPT-2 order, or a token not made of two).
void write_gpt2_vocab_dir(const BpeVocab& vocab, const std::string& dir);

/// GPT-2's byte -> code point table (printable Latin-1 bytes map to themselves, the other 68 bytes
/// to U+0100..U+0143 in increasing byte order).
const std::array<char32_t, 256>& gpt2_byte_to_unicode();

}  // namespace gaugelab::data
