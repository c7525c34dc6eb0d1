// The sweep's progress line: done/total, rate, ETA; plain lines when stderr is not a terminal.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <string>

#include "toys/sweep_progress.hpp"

using gaugelab::toys::SweepProgress;

TEST_CASE("sweep progress: done/total, percent, rate and ETA", "[toys][sweep]") {
  CHECK(SweepProgress::line(37, 120, 4.15, false) == "37/120 rows (31%), 4.15 rows/s, ETA 20 s");
  CHECK(SweepProgress::line(0, 5000, 1.0, false) == "0/5000 rows (0%), 1 rows/s, ETA 1:23:20");
  CHECK(SweepProgress::line(3, 9, 0.0, false) == "3/9 rows (33%), 0 rows/s, ETA ?");
  CHECK(SweepProgress::line(9, 9, 2.5, true) == "9/9 rows (100%), 2.5 rows/s, done");
}

TEST_CASE("sweep progress: into a file, rate-limited plain lines and a final line", "[toys][sweep]") {
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  {
    // An interval no test outlives: only the final line may appear.
    SweepProgress p("sweep relu", 10, 4, 1.0e6, f);
    for (int i = 0; i < 6; ++i) p.tick();
    CHECK(p.done_here() == 6);
    p.finish();
  }
  std::rewind(f);
  std::string text;
  char buf[256];
  while (std::fgets(buf, sizeof buf, f)) text += buf;
  std::fclose(f);
  CHECK(text.find('\r') == std::string::npos);
  CHECK(text.rfind("sweep relu: 10/10 rows (100%), ", 0) == 0);
  CHECK(text.find("done\n") != std::string::npos);
  CHECK(std::count(text.begin(), text.end(), '\n') == 1);
}
