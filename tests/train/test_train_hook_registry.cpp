// The hook registry (gpt2/train/hook_registry.hpp): the rows of step_hook_kinds.def well formed, and every row
// reachable from each place that handles hooks. A row added to step_hook_kinds.def is covered here without a new
// test: its flags are declared and gated to the conditions that run it, its description is in the settings line of
// such a condition, its name reaches the torch library's conditions table (gaugelab.torch's attach checks it), and
// its hook file's constructor makes a hook.
#include <cctype>
#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpt2/train/api.hpp"
#include "gpt2/train/conditions.hpp"
#include "gpt2/train/hook_registry.hpp"
#include "gpt2/train/step_hooks.hpp"
#include "io/options.hpp"
#include "tests/gpt2/gpt2_catch.hpp"
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab;

namespace {

// Parses `args` as `gaugelab train` would (the declaration alone; --data and --out are checked later).
void parse_train(const std::vector<std::string>& args) {
  gpt2::TrainOptions o;
  io::Options opts("train", "");
  gpt2::declare_train_options(opts, o);
  opts.parse(args);
}

// The flag as the command line gives it, at its default value.
std::string at_default(const std::string& flag) {
  gpt2::TrainOptions o;
  io::Options opts("train", "");
  gpt2::declare_train_options(opts, o);
  for (const io::OptionSpec& s : opts.specs())
    if (s.name == flag) return "--" + flag + "=" + s.show();
  FAIL("--" << flag << " is not declared");
  return "";
}

}  // namespace

TEST_CASE("hook registry: the rows of step_hook_kinds.def are in StepHookKind's order, each name and flag once",
          "[train][conditions]") {
  const std::vector<gpt2::StepHookRow>& rows = gpt2::step_hook_rows();
  REQUIRE(!rows.empty());
  std::set<std::string> names, flags;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const gpt2::StepHookRow& h = rows[i];
    INFO(h.name);
    CHECK(static_cast<std::size_t>(h.kind) == i);  // the enum and the rows come from one list, in its order
    const std::string name = h.name;
    REQUIRE(!name.empty());
    for (const char ch : name) CHECK((std::islower(static_cast<unsigned char>(ch)) || ch == '_'));
    CHECK(names.insert(name).second);  // a name is the conditions' JSON and gaugelab.torch's key: one row each
    CHECK(h.describe != nullptr);
    for (const char* flag : h.flags) {
      INFO(flag);
      CHECK(std::string(flag).rfind("--", 0) != 0);  // the flag's name, as declare_train_options declares it
      CHECK(flags.insert(flag).second);  // a flag gated by two rows would be refused for a condition running one
    }
  }
}

TEST_CASE("hook registry: every row is reachable from the options, describe_condition, the torch library and "
          "make_step_hooks", "[train][conditions]") {
  const nlohmann::json table = nlohmann::json::parse(gpt2::conditions_json());
  for (const gpt2::StepHookRow& h : gpt2::step_hook_rows()) {
    INFO(h.name);
    CHECK(&gpt2::step_hook_row(h.kind) == &h);  // one row per kind
    const std::vector<std::string> runs = gpt2::condition_keys_with(h.kind);
    REQUIRE(!runs.empty());  // a row no condition names is dead code
    std::string other;       // a condition that does not run it
    for (const gpt2::Condition& c : gpt2::conditions())
      if (!gpt2::has_hook(c, h.kind)) other = c.key;
    REQUIRE(!other.empty());

    for (const char* flag : h.flags) {  // declared, and refused without a condition that runs the hook
      INFO(flag);
      const std::string given = at_default(flag);
      CHECK_NOTHROW(parse_train({"--condition", runs.front(), given}));
      CHECK_THROWS_AS(parse_train({"--condition", other, given}), io::UsageError);
    }

    gpt2::TrainOptions o;
    o.condition = runs.front();
    const gpt2::Condition& c = gpt2::condition(o.condition);
    CHECK(gpt2::describe_condition(c, o).find("; " + h.describe(o)) != std::string::npos);

    bool named = false;  // the torch library's conditions() carries the name for every condition that runs it
    for (const auto& row : table)
      if (row["key"] == runs.front())
        for (const auto& name : row["hooks"]) named = named || name == h.name;
    CHECK(named);

    CHECK(gpt2::make_step_hook(h.kind, o) != nullptr);  // its hook file's constructor
  }
}

}  // namespace GAUGELAB_TU
