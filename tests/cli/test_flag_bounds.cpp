// Every numeric flag of every verb at and beyond its declared bounds (the table comes from the parser
// itself: `VERB --describe-options`), checked with `--print-config` so nothing runs: a value the range
// admits is accepted, one just outside it is refused with exit 2 in one line naming the flag, and huge,
// fractional, NaN and infinite values never get further than one line. The ~900 probes go through
// `gaugelab --probe-batch` (each command line dispatched in one process as main() dispatches it) instead of
// ~900 processes loading LibTorch; a sample of every verb and kind is also run as real processes and must
// answer the same, byte for byte. Then a table of hostile values
// that do run (ggml-style rows, each with its own time bound): each ends in one line with exit 1 or 2, or
// runs normally; never a signal, a stack trace or a hang.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/child.hpp"
#include "support/process.hpp"

namespace fs = std::filesystem;
using gaugelab::test::ChildResult;
using gaugelab::test::words;

namespace {

const std::string kBin = std::string(GAUGELAB_BINARY_DIR) + "/gaugelab";
const std::string kRoot = std::string(GAUGELAB_BINARY_DIR) + "/test_flag_bounds";

ChildResult run(const std::vector<std::string>& args, double limit_s = 60) {
  std::vector<std::string> a = {kBin};
  a.insert(a.end(), args.begin(), args.end());
  return gaugelab::test::run_child(a, {limit_s, -1});
}

// The verbs and sub-verbs whose flags are probed, with the arguments they need before any flag.
struct VerbCase {
  std::string verb;          // words before the flags, e.g. "toy relu"
  std::string needed;        // arguments the verb requires (paths need not exist: nothing is read)
  bool needs_torch = false;
};
const std::vector<VerbCase> kVerbs = {
    {"toy relu", ""},  {"toy factor-scalar", ""}, {"toy factor-matrix", ""}, {"toy muon", ""}, {"toy wd-gram", ""},
    {"toy hyperball", ""}, {"toy noise-wd", ""}, {"sweep relu", ""}, {"sweep factor-matrix", ""},
    {"merge", "a.h5 --out m.h5"}, {"diag heads", ""}, {"diag trajectory", ""}, {"prepare", "--synthetic"},
    {"train", "--data d", true}, {"eval", "ckpt", true}, {"generate", "ckpt", true}, {"inspect", "ckpt", true},
    {"export", "ckpt --out x", true}, {"import", "hf --out x", true},
};

bool torch_built() {
  static const bool built = run({"train", "--describe-options"}, 60).status == 0;
  return built;
}

// The last line of the output (the error line of a refused command).
std::string last_line(const std::string& out) {
  std::string s = out;
  while (!s.empty() && s.back() == '\n') s.pop_back();
  const auto nl = s.rfind('\n');
  return nl == std::string::npos ? s : s.substr(nl + 1);
}

std::string fmt(double v, bool integer) {
  if (integer) return std::to_string(static_cast<long long>(v));
  char b[64];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

}  // namespace

namespace {

enum class Expect { accepted, refused, at_most_one_line };
struct Probe {
  std::vector<std::string> args;  // after `gaugelab`
  std::string flag;
  Expect expect;
  ChildResult result;
};

// Every probe answered by one `gaugelab --probe-batch` process: status and output per command line.
void run_batch(std::vector<Probe>& probes, const std::string& file) {
  {
    std::ofstream f(file);
    for (const Probe& p : probes) f << nlohmann::json(p.args).dump() << "\n";
  }
  const ChildResult b = run({"--probe-batch", file}, 300);
  INFO("gaugelab --probe-batch: status " << b.status << ", signal " << b.signal << ": " << b.output.substr(0, 2000));
  REQUIRE(b.status == 0);
  std::istringstream lines(b.output);
  std::string line;
  std::size_t i = 0;
  while (std::getline(lines, line) && i < probes.size()) {
    const nlohmann::json a = nlohmann::json::parse(line, nullptr, false);
    if (!a.is_object()) continue;  // not an answer (a line a verb printed past the capture would show up here)
    probes[i].result.status = a.at("status").get<int>();
    probes[i].result.output = a.at("output").get<std::string>();
    ++i;
  }
  REQUIRE(i == probes.size());
}

// Runs the probes as separate processes, `workers` at a time (they are independent, mostly start-up time).
void run_processes(std::vector<Probe>& probes, unsigned workers) {
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < workers; ++w)
    pool.emplace_back([&] {
      for (std::size_t i = next++; i < probes.size(); i = next++) probes[i].result = run(probes[i].args);
    });
  for (auto& t : pool) t.join();
}

std::string command(const Probe& p) {
  std::string line;
  for (const auto& w : p.args) line += w + " ";
  return line;
}

}  // namespace

namespace {

// Every numeric flag of every verb, at and beyond its declared range.
void check_flag_bounds() {
  fs::create_directories(kRoot);
  std::vector<Probe> probes;
  std::vector<std::string> verbs_probed;
  for (const VerbCase& vc : kVerbs) {
    if (vc.needs_torch && !torch_built()) continue;
    verbs_probed.push_back(vc.verb);
    const std::vector<std::string> verb = words(vc.verb);
    std::vector<std::string> args = verb;
    args.push_back("--describe-options");
    const ChildResult d = run(args);
    INFO(vc.verb << " --describe-options: " << d.output);
    REQUIRE(d.status == 0);
    const nlohmann::json specs = nlohmann::json::parse(d.output);
    bool generic_int = false, generic_real = false;
    for (const auto& s : specs) {
      if (!s.at("numeric").get<bool>()) continue;
      const std::string flag = "--" + s.at("name").get<std::string>();
      const bool integer = s.at("type") == "int";
      auto add = [&](const std::string& value, Expect e) {
        std::vector<std::string> a = verb;
        for (const auto& w : words(vc.needed)) a.push_back(w);
        a.insert(a.end(), {flag, value, "--print-config"});
        probes.push_back({std::move(a), flag, e, {}});
      };
      // Inside the range: the bounds themselves when closed.
      if (s.contains("lo") && !s.at("lo_open").get<bool>()) add(fmt(s.at("lo").get<double>(), integer), Expect::accepted);
      if (s.contains("hi") && !s.at("hi_open").get<bool>()) add(fmt(s.at("hi").get<double>(), integer), Expect::accepted);
      // Just outside it.
      if (s.contains("lo")) {
        const double lo = s.at("lo").get<double>();
        add(s.at("lo_open").get<bool>() ? fmt(lo, integer) : fmt(integer ? lo - 1 : lo - 1e-6 * std::max(1.0, std::abs(lo)), integer),
            Expect::refused);
      }
      if (s.contains("hi")) {
        const double hi = s.at("hi").get<double>();
        add(s.at("hi_open").get<bool>() ? fmt(hi, integer) : fmt(integer ? hi + 1 : hi + 1e-6 * std::max(1.0, std::abs(hi)), integer),
            Expect::refused);
      }
      // A huge value: accepted or one line, never a crash.
      add(integer ? "1e12" : "1e300", Expect::at_most_one_line);
      // Text no range admits (one parser for every flag of a type, so once per verb and type).
      if (integer ? !generic_int : !generic_real) {
        for (const char* v : {"nan", "inf", "-inf", "1e400", "", "12abc"}) add(v, Expect::refused);
        if (integer) {
          add("4.9", Expect::refused);  // an integer flag does not round
          add("99999999999999999999", Expect::refused);
        }
        (integer ? generic_int : generic_real) = true;
      }
    }
  }
  run_batch(probes, kRoot + "/probes.jsonl");
  for (const Probe& p : probes) {
    const ChildResult& r = p.result;
    INFO("gaugelab " << command(p) << "-> status " << r.status << ": " << r.output);
    if (p.expect == Expect::accepted) {
      // A value its own range admits; a check across flags may still refuse it (--m 1 with --r 2).
      CHECK((r.status == 0 || (r.status == 2 && r.output.find(p.flag + " must be") == std::string::npos)));
      if (r.status == 2) CHECK(gaugelab::test::count_lines(r.output) == 1);
    } else if (p.expect == Expect::refused) {
      CHECK(r.status == 2);
      CHECK(gaugelab::test::count_lines(r.output) == 1);
      CHECK(r.output.find(p.flag) != std::string::npos);
    } else {
      CHECK((r.status == 0 || r.status == 2));
      if (r.status == 2) CHECK(gaugelab::test::count_lines(r.output) == 1);
    }
  }
  // The batch answers as the processes do: of every verb, the first probe of each kind and every 25th,
  // run as its own process, must give the same status and the same output.
  std::vector<Probe> sample;
  for (std::size_t i = 0; i < probes.size(); ++i) {
    bool first_of_kind = true;
    for (std::size_t j = 0; j < i && first_of_kind; ++j)
      first_of_kind = !(probes[j].expect == probes[i].expect && probes[j].args[0] == probes[i].args[0] &&
                        (probes[j].args.size() < 2 || probes[j].args[1] == probes[i].args[1]));
    if (first_of_kind || i % 25 == 0) sample.push_back({probes[i].args, probes[i].flag, probes[i].expect, {}});
  }
  run_processes(sample, 4);
  std::size_t compared = 0;
  for (const Probe& s : sample) {
    const auto it = std::find_if(probes.begin(), probes.end(), [&](const Probe& p) { return p.args == s.args; });
    REQUIRE(it != probes.end());
    INFO("gaugelab " << command(s) << ": the process answers status " << s.result.status << ", signal " << s.result.signal
                     << ": " << s.result.output << "; the batch answered " << it->result.status << ": " << it->result.output);
    CHECK(s.result.signal == 0);
    CHECK_FALSE(s.result.timed_out);
    CHECK(s.result.status == it->result.status);
    CHECK(s.result.output == it->result.output);
    ++compared;
  }
  std::printf("flag bounds: %zu probes of %zu verbs in one batch, %zu of them also as processes\n", probes.size(),
              verbs_probed.size(), compared);
  CHECK(probes.size() > (torch_built() ? 450u : 300u));  // the table really came from the parser
  CHECK(compared > 2 * verbs_probed.size());
}

}  // namespace

TEST_CASE("flag bounds: every numeric flag at and beyond its declared range, parse only", "[cli][bounds]") {
  check_flag_bounds();
}

TEST_CASE("flag bounds: --probe-batch answers a line that would run with a usage error and runs nothing", "[cli][bounds]") {
  fs::create_directories(kRoot);
  const std::string out = kRoot + "/not_a_dry_run.h5";
  fs::remove(out);
  // "--print-config" here is --out's value: parsed, the line asks for a run, not a dry run.
  std::vector<Probe> probes = {{{"toy", "relu", "--steps", "5", "--out", "--print-config"}, "", Expect::refused, {}},
                               {{"toy", "relu", "--steps", "5", "--out", out, "--print-config"}, "", Expect::accepted, {}}};
  run_batch(probes, kRoot + "/not_a_dry_run.jsonl");
  INFO(probes[0].result.output);
  CHECK(probes[0].result.status == 2);
  CHECK(probes[0].result.output.find("not a dry run") != std::string::npos);
  CHECK_FALSE(fs::exists("--print-config"));
  CHECK(probes[1].result.status == 0);  // the dry run itself is answered
  CHECK_FALSE(fs::exists(out));
}

namespace {

// One hostile command that runs: what it may end in and how long it may take.
struct RunCase {
  const char* args;        // after `gaugelab`; {OUT} and {DATA} are replaced
  bool needs_torch;
  bool may_succeed;        // true: exit 0 is fine too (a value the range admits that just runs)
  double limit_s;          // a run still going at this bound is a hang... unless may_succeed
  bool bad_alloc_path = false;  // ends in std::bad_alloc: skipped in the sanitizer build, whose operator
                                // new aborts on an impossible allocation instead of throwing
};

// Sizes that ask for more memory than any machine has, loops of absurd length, values at the edge of a
// floating-point range. Every row is a defect once seen (issue: reliability), or its neighbour.
const std::vector<RunCase> kRunCases = {
    {"toy relu --gauge-log-spread 700 --steps 20 --hidden 4 --n-train 8 --n-val 4 --out {OUT}", false, true, 60},
    {"toy relu --gauge-log-spread 800 --out {OUT}", false, false, 30},
    {"toy relu --hidden 1e12 --out {OUT}", false, false, 30},
    {"toy relu --n-train 1e12 --out {OUT}", false, false, 30},
    {"toy relu --n-val 1e12 --out {OUT}", false, false, 30},
    {"toy relu --seeds 1e9 --steps 1 --out {OUT}", false, false, 30, true},
    {"toy relu --threads 1e9 --steps 1 --out {OUT}", false, false, 30},
    {"toy factor-matrix --m 1e6 --n 1e6 --out {OUT}", false, false, 30},
    {"sweep relu --hidden 1e12,2 --out {OUT}", false, false, 30},
    {"sweep relu --threads 1e9 --out {OUT}", false, false, 30},
    {"diag heads --d-model 1e9 --out {OUT}", false, false, 30},
    {"prepare --synthetic --threads 1e9 --out {OUT}", false, false, 30},
    {"train --data {DATA} --model nano --batch-size 1e12 --max-iters 1 --warmup-iters 0 --eval-batches 1 --threads 1 --out {OUT}", true, false, 60},
    {"train --data {DATA} --model nano --block-size 1e9 --max-iters 1 --warmup-iters 0 --eval-batches 1 --threads 1 --out {OUT}", true, false, 60},
    {"train --data {DATA} --model nano --n-embd 1e12 --max-iters 1 --warmup-iters 0 --eval-batches 1 --threads 1 --out {OUT}", true, false, 60},
    {"train --data {DATA} --model nano --n-layer 1e9 --max-iters 1 --warmup-iters 0 --eval-batches 1 --threads 1 --out {OUT}", true, false, 60},
    {"train --data {DATA} --model nano --threads 1e9 --max-iters 1 --warmup-iters 0 --eval-batches 1 --out {OUT}", true, false, 60},
    {"train --data {DATA} --model nano --grad-accum 1e18 --batch-size 1e6 --max-iters 1 --warmup-iters 0 --eval-batches 1 --threads 1 --out {OUT}", true, false, 60},
    // Once killed by the kernel's OOM killer (SIGKILL) in its first forward pass: now refused by the estimate.
    {"train --data {DATA} --model nano --batch-size 1e6 --max-iters 1 --warmup-iters 0 --eval-batches 1 --threads 1 --out {OUT}", true, false, 60},
};

std::string replace_all(std::string s, const std::string& what, const std::string& with) {
  for (std::size_t i = s.find(what); i != std::string::npos; i = s.find(what, i + with.size())) s.replace(i, what.size(), with);
  return s;
}

}  // namespace

TEST_CASE("flag bounds: hostile values that run end in one line, never a signal or a hang", "[cli][bounds]") {
  // Its own folder: ctest runs the test cases of this file as parallel processes.
  const std::string root = kRoot + "/run";
  fs::remove_all(root);
  fs::create_directories(root);
  const std::string data = root + "/data";
  REQUIRE(run({"prepare", "--synthetic", "--docs", "200", "--seed", "1", "--out", data}).status == 0);
  int i = 0;
  for (const RunCase& c : kRunCases) {
    if (c.needs_torch && !torch_built()) continue;
#ifdef GAUGELAB_SANITIZED
    if (c.bad_alloc_path) continue;
#endif
    const std::string out = root + "/out" + std::to_string(i++);
    std::string line = replace_all(replace_all(c.args, "{OUT}", out), "{DATA}", data);
    const ChildResult r = run(words(line), c.limit_s);
    INFO("gaugelab " << line << " -> status " << r.status << ", signal " << r.signal << ", timed out " << r.timed_out
                     << ":\n" << r.output);
    CHECK(r.signal == 0);
    CHECK_FALSE(r.timed_out);
    CHECK(r.output.find("frame #") == std::string::npos);          // no C++ stack frames
    CHECK(r.output.find("terminate called") == std::string::npos);
    if (c.may_succeed && r.status == 0) continue;
    CHECK((r.status == 1 || r.status == 2));
    const std::string err = last_line(r.output);
    CHECK(err.find("error:") != std::string::npos);
    CHECK(r.output.find("error:") == r.output.rfind("error:"));  // the only error line
  }
}

TEST_CASE("flag bounds: a path holding bytes that are not UTF-8 is used as bytes and recorded escaped", "[cli][bounds]") {
  // Legal on Linux; once a JSON exception in toy, import, eval and train.
  const std::string dir = kRoot + "/bytes";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string out = dir + "/caf\xe9-\xff.h5";
  const ChildResult r = run({"toy", "relu", "--steps", "5", "--hidden", "3", "--n-train", "6", "--n-val", "4",
                             "--seeds", "1", "--threads", "1", "--out", out});
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(fs::exists(out));
  CHECK(r.output.find("caf\\\\xe9-\\\\xff.h5") != std::string::npos);  // the settings line: \xNN, JSON-escaped
  const std::string data = dir + "/d\xfe";
  const ChildResult p = run({"prepare", "--synthetic", "--docs", "50", "--out", data});
  INFO(p.output);
  CHECK(p.status == 0);
  CHECK(fs::exists(data + "/train.bin"));
  // meta.json records such a name as the logs do (\xNN), not with U+FFFD for the byte: a source file
  // whose name is not UTF-8, prepared into a second directory
  const std::string src = dir + "/s\xfe.txt";
  {
    std::ofstream f(src);
    for (int i = 0; i < 40; ++i) f << "Line " << i << " of a small text.\n\n";
  }
  const ChildResult q = run({"prepare", "--input", src, "--split-paragraphs", "--val-fraction", "0.25", "--out", dir + "/d2"});
  INFO(q.output);
  CHECK(q.status == 0);
  std::ifstream meta(dir + "/d2/meta.json");
  const std::string text((std::istreambuf_iterator<char>(meta)), std::istreambuf_iterator<char>());
  INFO(text);
  CHECK(text.find("s\\\\xfe.txt") != std::string::npos);
  CHECK(text.find("\xEF\xBF\xBD") == std::string::npos);
}
