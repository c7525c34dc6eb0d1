// The option machinery every verb uses: parsing, config files, ranges, help, JSON record.
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "io/options.hpp"

using gaugelab::io::Options;
using gaugelab::io::Range;
using gaugelab::io::UsageError;

namespace {

struct Demo {
  double lr = 1e-2;        // positive
  int hidden = 20;         // >= 1
  std::string mode = "a";  // a | b
  bool force = false;
  std::vector<double> grid{1.0, 2.0};
  std::vector<std::string> inputs;
};

Options make(Demo& d) {
  Options o("demo", "a demo verb");
  o.add("lr", &d.lr, "learning rate", Range::positive())
      .add("hidden", &d.hidden, "hidden width", Range::at_least(1))
      .add("mode", &d.mode, "mode", {"a", "b"})
      .add("force", &d.force, "overwrite")
      .add("grid", &d.grid, "grid values", Range::non_negative())
      .add("input", &d.inputs, "input files")
      .positional("input");
  return o;
}

// A file of this process's own: CTest runs each case in a process of its own, two at a time, and std::rand()'s first
// value is the same in every process (two cases once wrote and read one file at the same moment).
std::string write_tmp(const std::string& text) {
  static int n = 0;
  const auto p = std::filesystem::temp_directory_path() /
                 ("gaugelab_opts_" + std::to_string(::getpid()) + "_" + std::to_string(n++) + ".ini");
  std::ofstream(p) << text;
  return p.string();
}

}  // namespace

TEST_CASE("defaults survive an empty command line and are recorded as JSON", "[options]") {
  Demo d;
  auto o = make(d);
  REQUIRE(o.parse({}));
  CHECK(d.lr == 1e-2);
  const auto j = o.to_json();
  CHECK(j["hidden"] == 20);
  CHECK(j["mode"] == "a");
  CHECK(j["grid"].size() == 2);
}

TEST_CASE("flags parse into the fields, switches and lists included", "[options]") {
  Demo d;
  auto o = make(d);
  REQUIRE(o.parse({"--lr", "0.5", "--hidden=7", "--mode", "b", "--force", "--grid", "3,4,5", "x.txt", "y.txt"}));
  CHECK(d.lr == 0.5);
  CHECK(d.hidden == 7);
  CHECK(d.mode == "b");
  CHECK(d.force);
  CHECK(d.grid == std::vector<double>{3, 4, 5});
  CHECK(d.inputs == std::vector<std::string>{"x.txt", "y.txt"});
  CHECK(o.given().size() == 6);
}

TEST_CASE("bad input is a UsageError naming the key", "[options]") {
  auto fails_with = [](std::vector<std::string> args, const std::string& needle) {
    Demo d;
    auto o = make(d);
    try {
      o.parse(args);
    } catch (const UsageError& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(needle) != std::string::npos);
      return;
    }
    FAIL("no UsageError for " << args[0]);
  };
  fails_with({"--bogus", "1"}, "--bogus");
  fails_with({"--lr", "-1"}, "--lr must be > 0");
  fails_with({"--lr", "0"}, "--lr must be > 0");
  fails_with({"--lr", "nan"}, "--lr");
  fails_with({"--lr", "1e999"}, "--lr");
  fails_with({"--lr", "abc"}, "not a number");
  fails_with({"--hidden", "0"}, "--hidden must be >= 1");
  fails_with({"--hidden", "2.5"}, "not an integer");
  fails_with({"--mode", "c"}, "one of a, b");
  fails_with({"--grid", "1,,2"}, "empty item");
  fails_with({"--grid", "1,-2"}, "--grid items must be >= 0");
  fails_with({"--force=maybe"}, "not a boolean");
  fails_with({"--l", "1"}, "--l");  // no abbreviation guessing: a prefix is not a flag
}

TEST_CASE("config files use the same keys, the command line wins, unknown keys fail", "[options]") {
  const auto good = write_tmp("lr = 0.25\nhidden = 9\nmode = b\n");
  {
    Demo d;
    auto o = make(d);
    REQUIRE(o.parse({"--config", good, "--hidden", "3"}));
    CHECK(d.lr == 0.25);
    CHECK(d.hidden == 3);
    CHECK(d.mode == "b");
  }
  const auto bad = write_tmp("lr = 0.25\nlearning_rate = 3\n");
  {
    Demo d;
    auto o = make(d);
    CHECK_THROWS_WITH(o.parse({"--config", bad}), Catch::Contains("learning_rate"));
  }
  {
    Demo d;
    auto o = make(d);  // the file and the line are named
    CHECK_THROWS_WITH(o.parse({"--config", bad}), Catch::Contains(bad) && Catch::Contains("line 2"));
  }
  {
    Demo d;
    auto o = make(d);  // a directory is refused, not read as an empty file
    CHECK_THROWS_WITH(o.parse({"--config", "/tmp"}), Catch::Contains("is a directory"));
  }
  const auto range = write_tmp("lr = -3\n");
  {
    Demo d;
    auto o = make(d);
    CHECK_THROWS_WITH(o.parse({"--config", range}), Catch::Contains("--lr must be > 0"));
  }
  {
    Demo d;
    auto o = make(d);
    CHECK_THROWS_WITH(o.parse({"--config", "/nonexistent/x.ini"}), Catch::Contains("/nonexistent/x.ini"));
  }
  std::remove(good.c_str());
  std::remove(bad.c_str());
  std::remove(range.c_str());
}

TEST_CASE("help is generated from the declarations, with defaults and ranges", "[options]") {
  Demo d;
  auto o = make(d);
  const auto h = o.help();
  CHECK(h.find("--lr <real>") != std::string::npos);
  CHECK(h.find("(> 0)") != std::string::npos);
  CHECK(h.find("[default: 20]") != std::string::npos);
  CHECK(h.find("one of: a, b") != std::string::npos);
  CHECK(h.find("--config") != std::string::npos);
}

TEST_CASE("set() by name parses and validate() checks ranges (the sweep runner's path)", "[options]") {
  Demo d;
  auto o = make(d);
  o.set("lr", "3e-3");
  CHECK(d.lr == 3e-3);
  CHECK(o.is_numeric("lr"));
  CHECK_FALSE(o.is_numeric("mode"));
  o.set("lr", "-1");
  CHECK_THROWS_AS(o.validate(), UsageError);
  CHECK_THROWS_AS(o.set("nope", "1"), UsageError);
}

TEST_CASE("cross-field checks run after parsing", "[options]") {
  Demo d;
  auto o = make(d);
  o.check([&] {
    if (d.mode == "b" && d.hidden < 5) throw UsageError("--mode b needs --hidden >= 5");
  });
  CHECK_THROWS_WITH(o.parse({"--mode", "b", "--hidden", "2"}), Catch::Contains("--hidden >= 5"));
}

TEST_CASE("options: a config line or key holding a Boost placeholder name is one error, not a hang", "[cli][options]") {
  // Boost.Program_options replaces %invalid_line%, %canonical_option%, ... in its messages until none is
  // left: such text in the file looped for ever (found by fuzz_options). Each case must end in one line.
  for (const std::string text : {"lr = 0.25\n%invalid_line% x\n", "%canonical_option% = 1\n", "x%option%x = 2\n",
                                 "lr = 1\nlr = 2\n%original_token%\n"}) {
    const auto path = write_tmp(text);
    Demo d;
    auto o = make(d);
    INFO(text);
    try {
      o.parse({"--config", path});
      FAIL("a bad config file was accepted");
    } catch (const std::exception& e) {
      const std::string msg = e.what();
      CHECK(msg.find(path) != std::string::npos);
      CHECK(msg.find('\n') == std::string::npos);
    }
  }
  const auto bad_line = write_tmp("lr = 0.25\n%invalid_line% x\n");
  Demo d;
  auto o = make(d);
  CHECK_THROWS_WITH(o.parse({"--config", bad_line}), Catch::Contains("line 2") && Catch::Contains("KEY = VALUE"));
}

TEST_CASE("implications: a fixed flag is set, refused against the command line, yields a config file's default",
          "[options]") {
  // mode b fixes hidden = 7 (as a training condition fixes its flags); identity marks are kept in order.
  auto make_implying = [](Demo& d) {
    Options o = make(d);
    o.implies([&d] {
      return d.mode == "b" ? std::vector<gaugelab::io::Implied>{{"hidden", "7", "--mode b", "mode"}}
                           : std::vector<gaugelab::io::Implied>{};
    });
    o.identity("mode");
    return o;
  };
  {
    Demo d;
    auto o = make_implying(d);
    REQUIRE(o.parse({"--mode", "b"}));
    CHECK(d.hidden == 7);  // set, not given
    CHECK(o.identity_names() == std::vector<std::string>{"mode"});
  }
  {
    Demo d;
    auto o = make_implying(d);
    CHECK_THROWS_WITH(o.parse({"--mode", "b", "--hidden", "3"}),
                      Catch::Contains("--mode b sets --hidden 7") && Catch::Contains("--hidden 3"));
  }
  {
    Demo d;
    auto o = make_implying(d);
    REQUIRE(o.parse({"--mode", "b", "--hidden", "7"}));  // the same value: nothing to refuse
  }
  const auto file_default = write_tmp("hidden = 3\n");
  {
    Demo d;  // the command line's mode overrides the file's default
    auto o = make_implying(d);
    REQUIRE(o.parse({"--config", file_default, "--mode", "b"}));
    CHECK(d.hidden == 7);
  }
  const auto file_both = write_tmp("hidden = 3\nmode = b\n");
  {
    Demo d;  // both in one file: the file contradicts itself
    auto o = make_implying(d);
    CHECK_THROWS_AS(o.parse({"--config", file_both}), UsageError);
  }
  {
    Demo d;  // settings filled in code: strict, any mismatch is refused
    auto o = make_implying(d);
    d.mode = "b";
    d.hidden = 3;
    CHECK_THROWS_AS(o.apply_implied(/*strict=*/true), UsageError);
  }
  std::remove(file_default.c_str());
  std::remove(file_both.c_str());
}

TEST_CASE("mode rules: a flag of one mode given without it is refused naming both, in its mode it parses",
          "[options]") {
  // --lr applies only with --mode b (as --muon-lr only with --optimizer muon); the inputs only with --force off.
  auto make_modal = [](Demo& d) {
    Options o = make(d);
    o.only_with("lr", "mode", {"b"}).only_with("input", "force", {"false"});
    o.implies([&d] {  // --hidden 9 selects mode b (as a condition's bundle sets a flag)
      return d.hidden == 9 ? std::vector<gaugelab::io::Implied>{{"mode", "b", "--hidden 9", "hidden"}}
                           : std::vector<gaugelab::io::Implied>{};
    });
    return o;
  };
  {
    Demo d;
    auto o = make_modal(d);
    CHECK_THROWS_WITH(o.parse({"--lr", "0.5"}), "--lr applies only with --mode b, but --mode is a");
  }
  {
    Demo d;
    auto o = make_modal(d);
    CHECK_THROWS_WITH(o.parse({"--force", "x.txt"}), "--input applies only without --force, but --force is given");
  }
  {
    Demo d;
    auto o = make_modal(d);
    REQUIRE(o.parse({"--lr", "0.5", "--mode", "b"}));
    CHECK(d.lr == 0.5);
  }
  {
    Demo d;  // the mode set by an implication counts
    auto o = make_modal(d);
    REQUIRE(o.parse({"--lr", "0.5", "--hidden", "9"}));
  }
  {
    Demo d;  // not given: the default of a flag outside its mode is no error
    auto o = make_modal(d);
    REQUIRE(o.parse({"--mode", "a", "x.txt"}));
  }
  const auto file_flag = write_tmp("lr = 0.5\n");
  const auto file_both = write_tmp("lr = 0.5\nmode = a\n");
  {
    Demo d;  // a config file's flag under a mode the command line chose: unused, with a line saying so
    auto o = make_modal(d);
    REQUIRE(o.parse({"--config", file_flag, "--mode", "a"}));
  }
  {
    Demo d;  // the file alone sets a flag outside the mode it selects (or the default's)
    auto o = make_modal(d);
    CHECK_THROWS_WITH(o.parse({"--config", file_both}), Catch::Contains("--lr (from --config) applies only with --mode b"));
    Demo e;
    auto p = make_modal(e);
    CHECK_THROWS_AS(p.parse({"--config", file_flag}), UsageError);
  }
  {
    Demo d;  // after_read runs before the implications and the rules (train --resume fills in the run's settings)
    auto o = make_modal(d);
    o.after_read([&d] { d.hidden = 9; });  // which implies mode b
    REQUIRE(o.parse({"--lr", "0.5"}));
  }
  std::remove(file_flag.c_str());
  std::remove(file_both.c_str());
}

TEST_CASE("a flag given twice: the last one wins, with a line on stderr naming it, a list gathers", "[options]") {
  Demo d;
  auto o = make(d);
  std::ostringstream err;
  auto* old = std::cerr.rdbuf(err.rdbuf());
  bool ok = false;
  try {
    ok = o.parse({"--lr", "0.1", "--hidden", "3", "--lr=0.3", "--mode", "b", "--lr", "0.7", "--input", "a", "--input", "b"});
  } catch (...) {
    std::cerr.rdbuf(old);
    throw;
  }
  std::cerr.rdbuf(old);
  REQUIRE(ok);
  CHECK(d.lr == 0.7);
  CHECK(d.hidden == 3);
  CHECK(d.mode == "b");
  CHECK(d.inputs == std::vector<std::string>{"a", "b"});
  CHECK(err.str() == "demo: --lr is given more than once; the last (--lr 0.7) is used\n");
}

TEST_CASE("a switch takes the next word only when it is a boolean, else it is on and the word stays positional",
          "[options]") {
  {
    Demo d;
    auto o = make(d);
    REQUIRE(o.parse({"--force", "x.txt", "y.txt"}));
    CHECK(d.force);
    CHECK(d.inputs == std::vector<std::string>{"x.txt", "y.txt"});
  }
  {
    Demo d;
    auto o = make(d);
    REQUIRE(o.parse({"x.txt", "--force", "false"}));
    CHECK_FALSE(d.force);
    CHECK(d.inputs == std::vector<std::string>{"x.txt"});
  }
  {
    Demo d;
    auto o = make(d);
    REQUIRE(o.parse({"--force=no", "--", "--force"}));  // after "--" a word is positional, even a flag's name
    CHECK_FALSE(d.force);
    CHECK(d.inputs == std::vector<std::string>{"--force"});
  }
  {
    Demo d;
    auto o = make(d);
    CHECK_THROWS_WITH(o.parse({"--force=maybe"}), "--force: 'maybe' is not a boolean (true/false)");
  }
}
