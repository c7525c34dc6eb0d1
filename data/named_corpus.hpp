// Named corpora that the set-up script installs (scripts/install-deps.sh), turned into prepare inputs:
// `gaugelab prepare --corpus shakespeare`. Nothing is fetched here; a missing corpus is one line that
// names the set-up script.
#pragma once

#include <string>
#include <vector>

namespace gaugelab::data {

/// The validation split of the Shakespeare corpus: whole works held out, so validation text is a play
/// the model has never seen (a window-level split would leak lines of the same scene into both). One
/// tragedy, one comedy, one Roman play and the sonnets: 4 of 42 works, about 9 % of the tokens.
inline const std::vector<std::string> kShakespeareValWorks = {"hamlet", "twelfth_night", "julius_caesar", "sonnets"};

struct NamedCorpus {
  std::string name;                     // llm.c shard prefix
  std::vector<std::string> train_files;  // each file one document
  std::vector<std::string> val_files;
};

/// Where the set-up script puts the assets: $GAUGELAB_ASSETS, else $GAUGELAB_CACHE/assets, else
/// ~/.cache/gaugelab/assets.
std::string assets_dir();

/// `name` ("shakespeare") from `dir` (empty: assets_dir()/shakespeare): the 42 *_gut.txt works in name
/// order, `val_works` (file stems without "_gut.txt") held out. Throws io::UsageError for an unknown
/// name or a held-out work that does not exist, std::runtime_error when the corpus is not installed.
NamedCorpus named_corpus(const std::string& name, const std::string& dir,
                         const std::vector<std::string>& val_works = kShakespeareValWorks);

}  // namespace gaugelab::data
