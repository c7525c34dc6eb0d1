// No hand-typed list of condition keys in the trainer, the front door or gaugelab.torch: help texts, errors and
// comments name the keys through the conditions table (condition_keys(), condition_keys_with()), so a new row is
// never missing from a list somebody typed (Beff and Erms were, from five of them). A "list" is three or more
// distinct keys in a row on one line, joined by commas, slashes, quotes, "and" or "or" (so a typed initializer list
// {"B", "D", "Dcap"} or a Python tuple counts as one); seed 000 §4.1's own A, B, C (the paper's names, not the
// table's) is the one set allowed.
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpt2/train/conditions.hpp"
#include "tests/gpt2/gpt2_catch.hpp"
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab;
namespace fs = std::filesystem;

namespace {

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The distinct keys of each run of keys on `line` joined only by separators; the runs naming three or more.
std::vector<std::set<std::string>> key_runs(const std::string& line, const std::set<std::string>& keys) {
  std::vector<std::set<std::string>> out;
  std::set<std::string> run;
  auto close = [&] {
    if (run.size() >= 3) out.push_back(run);
    run.clear();
  };
  std::size_t i = 0;
  while (i < line.size()) {
    if (!is_word_char(line[i])) {  // separators keep the run going; anything else ends it
      const char c = line[i];
      if (c != ',' && c != '/' && c != ' ' && c != '"' && c != '\'') close();
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < line.size() && is_word_char(line[j])) ++j;
    const std::string word = line.substr(i, j - i);
    if (keys.count(word)) run.insert(word);
    else if (word != "and" && word != "or") close();
    i = j;
  }
  close();
  return out;
}

}  // namespace

TEST_CASE("no hand-typed list of condition keys in gpt2/, cli/ or gaugelab.torch", "[train][conditions]") {
  const std::vector<std::string> all = gpt2::condition_keys();
  const std::set<std::string> keys(all.begin(), all.end());
  const std::set<std::string> paper{"A", "B", "C"};  // seed 000 §4.1's conditions, named by the paper
  // The detector finds what it is for (the error text that lacked Beff and Erms).
  REQUIRE(key_runs("only applies to conditions with GaugeFix (B, D, Dcap)", keys).size() == 1);
  REQUIRE(key_runs("seed 000's A, B and C", keys).front() == paper);
  REQUIRE(key_runs("for (const char* k : {\"B\", \"D\", \"Dcap\"})", keys).size() == 1);  // a typed C++ list
  REQUIRE(key_runs("if key in ('B', 'D', 'Dcap', 'Beff'):", keys).size() == 1);         // a typed Python tuple
  REQUIRE(key_runs("--condition B --gaugefix-mode head", keys).empty());
  REQUIRE(key_runs("a B-spline, a D flag", keys).empty());
  const fs::path root = GAUGELAB_SOURCE_DIR;
  int files = 0;
  std::vector<std::string> found;
  for (const char* dir : {"gpt2", "cli", "python/gaugelab"}) {
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".cpp" && ext != ".hpp" && ext != ".def" && ext != ".py" &&
          ext != ".cu")) continue;
      if (e.path().filename() == "conditions.cpp") continue;  // the table itself
      ++files;
      std::ifstream in(e.path());
      std::string line;
      for (int n = 1; std::getline(in, line); ++n)
        for (const std::set<std::string>& run : key_runs(line, keys))
          if (run != paper) found.push_back(fs::relative(e.path(), root).string() + ":" + std::to_string(n) + ": " + line);
    }
  }
  CHECK(files > 50);
  for (const std::string& f : found) UNSCOPED_INFO(f);
  CHECK(found.empty());
}

TEST_CASE("analysis/conditions.json is the conditions table as the trainer writes it", "[train][conditions]") {
  // The grids (analysis/manifest.py) read the table's columns from this copy; regenerate it after a change to the
  // table with: gaugelab train --describe-conditions > analysis/conditions.json
  std::ifstream in(fs::path(GAUGELAB_SOURCE_DIR) / "analysis" / "conditions.json");
  REQUIRE(in.good());
  const nlohmann::json copy = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  CHECK(copy == nlohmann::json::parse(gpt2::conditions_json()));
}

}  // namespace GAUGELAB_TU
