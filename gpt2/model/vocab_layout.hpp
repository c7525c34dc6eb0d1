// The two layouts of the token rows: a compact-vocabulary model (trained with --compact-vocab: its K
// token rows renumbered 0..K-1, row k for GPT-2 id ids[k]) and a model over GPT-2's 50 257 ids.
// expand: for exports a Hugging Face user feeds GPT-2 ids to (export --vocab full); restore: the import of
// such an export, back to the compact model; select: to fine-tune a full-vocabulary model (an import, an
// export) on a small corpus with --compact-vocab.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpt2/model/model.hpp"

namespace gaugelab::gpt2 {

/// A new model, every parameter copied from `compact` except the token rows: row k of the embedding
/// (and of an untied LM head) goes to row ids[k], every other row is 0. With the tied head an id the
/// training data never had gets logit 0 (a Hugging Face GPT-2 has no output bias to mask it with); the
/// K trained ids keep their logits exactly. ids [K] strictly GPT-2 ids (< gpt2_vocab), K = the compact
/// vocabulary size. Throws std::invalid_argument on a size mismatch or an id out of range.
std::unique_ptr<GPT> expand_to_gpt2_vocab(GPT& compact, const std::vector<std::int64_t>& ids,
                                          std::int64_t gpt2_vocab = 50257);

/// The inverse direction: a new model whose token row k is row ids[k] of `full` (embedding and an
/// untied LM head), every other parameter copied. The logits of the K kept ids are unchanged; the
/// softmax then runs over those K only. Throws std::invalid_argument for an id >= full's vocabulary.
std::unique_ptr<GPT> select_vocab_rows(GPT& full, const std::vector<std::int64_t>& ids);

/// The compact model that expand_to_gpt2_vocab laid over GPT-2 ids, back: select_vocab_rows(full, trained)
/// when every token row outside `trained` is still 0 as expand wrote it (embedding and an untied LM head), so
/// nothing the layout holds is dropped; nullptr when one is not (the model has since learned those ids).
std::unique_ptr<GPT> restore_compact(GPT& full, const std::vector<std::int64_t>& trained);

}  // namespace gaugelab::gpt2
