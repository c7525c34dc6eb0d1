// `gaugelab sweep` / `gaugelab merge` as a user types them: bad input is one line, exit 2 for the command
// line, exit 1 for an absent or incomplete input file.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "support/process.hpp"
#include "tests/io/temp_dir.hpp"

namespace {

using Result = gaugelab::test::ProcessResult;

Result run(const std::string& args) { return gaugelab::test::run_gaugelab(args); }

std::size_t lines(const std::string& s) { return gaugelab::test::count_lines(s); }

// Exit 2: the command as typed cannot run; exit 1: an input file named in it is absent or incomplete.
void check_one_line_error(const std::string& args, const std::string& names, int status) {
  INFO("gaugelab " << args);
  const auto r = run(args);
  INFO(r.output);
  CHECK(r.status == status);
  CHECK(lines(r.output) == 1);
  CHECK(r.output.find(names) != std::string::npos);
}

void check_usage_error(const std::string& args, const std::string& names) { check_one_line_error(args, names, 2); }

void check_input_error(const std::string& args, const std::string& names) { check_one_line_error(args, names, 1); }

}  // namespace

TEST_CASE("sweep CLI: empty grid item, unknown toy, malformed shard -> one line, exit 2 or 1", "[toys][sweep][cli]") {
  gaugelab::test::TempDir dir;
  const std::string out = " --out " + dir.file("x.h5");
  check_usage_error("sweep relu --lr 1,,2 --steps 10" + out, "--lr");
  check_usage_error("sweep relu --lambda=0,,0.2 --steps 10" + out, "--lambda");
  check_usage_error("sweep nosuchtoy --lr 1,2" + out, "nosuchtoy");
  check_usage_error("sweep relu --shard 3/2 --steps 10" + out, "--shard");
  check_usage_error("sweep relu --shard 1 --steps 10" + out, "--shard");
  check_usage_error("sweep relu --lr 1e-2,-1 --steps 10" + out, "--lr");
  check_usage_error("sweep relu --hidden 0,3 --steps 10" + out, "--hidden");
  check_usage_error("sweep", "NAME");
  check_usage_error("merge " + dir.file("a.h5"), "--out");
  check_input_error("merge --out " + dir.file("m.h5") + " " + dir.file("absent.h5"), "absent.h5");
  CHECK_FALSE(std::filesystem::exists(dir.file("x.h5")));
}

TEST_CASE("toy CLI: negative lr, H = 0, unknown toy, empty grid, bad protocol flags -> one line, exit 2",
          "[toys][cli]") {
  gaugelab::test::TempDir dir;
  const std::string out = " --out " + dir.file("t.h5");
  check_usage_error("toy relu --lr -1" + out, "--lr");
  check_usage_error("toy relu --hidden 0" + out, "--hidden");
  check_usage_error("toy nosuchtoy" + out, "nosuchtoy");
  check_usage_error("toy relu --lr 1e-2,2e-2" + out, "--lr");  // a grid belongs to sweep
  check_usage_error("toy relu --init bogus" + out, "--init");
  check_usage_error("toy relu --data-seed -2" + out, "--data-seed");
  check_usage_error("sweep relu --lr ''" + out, "--lr");  // an empty grid
  check_usage_error("sweep relu --lambda ," + out, "--lambda");
  check_usage_error("sweep relu --hidden 0" + out, "--hidden");
  CHECK_FALSE(std::filesystem::exists(dir.file("t.h5")));
}

TEST_CASE("sweep CLI: runs, resumes, refuses another sweep on the same file, merges shards", "[toys][sweep][cli]") {
  gaugelab::test::TempDir dir;
  const std::string f = dir.file("s.h5");
  const std::string sweep = "sweep relu --lr 5e-3,1e-2 --seeds 2 --steps 50 --threads 2 ";
  auto r = run(sweep + "--out " + f);
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("rows_done        4") != std::string::npos);
  r = run(sweep + "--out " + f);
  CHECK(r.status == 0);
  CHECK(r.output.find("rows_skipped     4") != std::string::npos);
  check_usage_error(sweep + "--lambda 0.1 --out " + f, "--lambda 0.0 there, 0.1 here");

  const std::string a = dir.file("a.h5"), b = dir.file("b.h5"), m = dir.file("m.h5");
  REQUIRE(run(sweep + "--shard 0/2 --out " + a).status == 0);
  REQUIRE(run(sweep + "--shard 1/2 --out " + b).status == 0);
  r = run("merge --out " + m + " " + a + " " + b);
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("rows_done        4") != std::string::npos);
  check_input_error("merge --out " + dir.file("m2.h5") + " " + a, "rows missing");
}
