// The bad-input probes of issue 31, one row each: a command that once wrote over its own inputs, ran for
// ever on an unbounded count, ignored a flag outside its mode or failed in a way that named nothing. Each
// row gives the command, the exit status it must end with, a piece of its one-line error, and a time
// bound; every file and folder of the fixture (checkpoints, token files, logs) must be untouched (the same
// inode, size and change time: no write, replacement, removal or addition escapes the change time), and a
// refused command must leave nothing new behind. Rows of valid commands beside them keep working.
// Then the stop signals: SIGTERM during the trainer's evaluation and SIGINT during its sampling stop the
// run within a bound (both were ignored until the evaluation or the sample ended).
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "support/child.hpp"
#include "support/process.hpp"

namespace fs = std::filesystem;
using gaugelab::test::ChildResult;
using gaugelab::test::words;

namespace {

const std::string kBin = std::string(GAUGELAB_BINARY_DIR) + "/gaugelab";
const std::string kRoot = std::string(GAUGELAB_BINARY_DIR) + "/test_bad_input_probes";

std::string replace_all(std::string s, const std::string& what, const std::string& with) {
  for (std::size_t i = s.find(what); i != std::string::npos; i = s.find(what, i + with.size())) s.replace(i, what.size(), with);
  return s;
}

ChildResult run(const std::string& args, double limit_s) {
  std::vector<std::string> a = {kBin};
  for (auto& w : words(args)) a.push_back(w);
  return gaugelab::test::run_child(a, {limit_s, -1});
}

bool torch_built() {
  static const bool built = run("train --describe-options", 60).status == 0;
  return built;
}

// Every file, folder and link under `root` with its inode, size and change time (lstat: a link itself). Any
// write, truncation, replacement, rename, chmod, or entry added to or removed from a folder moves the change
// time, which no system call sets back; reading does not. (The fixture is 135 MB: comparing its bytes after
// each of ~100 rows cost ~25 CPU-s of make test.)
// The root itself too (an entry added to or removed from it).
using Tree = std::map<std::string, std::tuple<ino_t, off_t, long long>>;
Tree tree(const fs::path& root) {
  Tree t;
  const auto stamp = [&t](const fs::path& p) {
    struct stat st {};
    REQUIRE(::lstat(p.c_str(), &st) == 0);
    t[p.string()] = {st.st_ino, st.st_size, st.st_ctim.tv_sec * 1000000000LL + st.st_ctim.tv_nsec};
  };
  stamp(root);
  for (const auto& e : fs::recursive_directory_iterator(root)) stamp(e.path());
  return t;
}

std::string text_of(const Tree& t) {
  std::string s;
  for (const auto& [path, v] : t)
    s += path + " " + std::to_string(std::get<0>(v)) + " " + std::to_string(std::get<1>(v)) + " " +
         std::to_string(std::get<2>(v)) + "\n";
  return s;
}

// The checkpoint directory a one-step run wrote.
std::string checkpoint_of(const std::string& run_dir) {
  for (const auto& e : fs::directory_iterator(run_dir + "/checkpoints")) return e.path().string();
  return "";
}

// The fixture: a prepared corpus, two checkpoints of one configuration and one of another width, a
// token file under a name of no token file, an HDF5 log named like a token file, a tiny named corpus.
// `in` is shared by the cases (read only: each checks it is untouched), `root` holds the case's own output.
struct Fixture {
  std::string root, in, data, val, a, a_copy, b, narrow, tok, log_bin, existing, corpus, text_bin, text, empty;
  std::shared_ptr<struct InputsLock> lock;  // shared while the case runs: nobody remakes the inputs under it
};

// The binaries the shared inputs were made by, this test's own among them (a new make_inputs): inputs made by
// others are made again.
std::string build_stamp() {
  std::string s;
  for (const std::string& path : {std::string(GAUGELAB_BINARY_DIR) + "/gaugelab",
                                  std::string(GAUGELAB_BINARY_DIR) + "/gaugelab-torch", std::string("/proc/self/exe")}) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0)
      s += std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) +
           "." + std::to_string(st.st_mtim.tv_nsec) + " ";
  }
  return s + "\n";
}

// flock on the shared inputs' lock file, released (with its descriptor) however the case ends.
struct InputsLock {
  int fd = -1;
  InputsLock() : fd(::open((kRoot + "/shared.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) { REQUIRE(fd >= 0); }
  ~InputsLock() {
    if (fd >= 0) ::close(fd);  // closing the last descriptor releases the lock
  }
  void take(int how) { REQUIRE(::flock(fd, how) == 0); }
  InputsLock(const InputsLock&) = delete;
  InputsLock& operator=(const InputsLock&) = delete;
};

// The fixture's paths under `in`; the checkpoints' once the runs that write them have.
Fixture paths_under(const std::string& in) {
  Fixture f;
  f.in = in;
  f.data = in + "/data";
  f.val = f.data + "/val.bin";
  if (fs::is_directory(in + "/runA/checkpoints")) f.a = checkpoint_of(in + "/runA");
  if (fs::is_directory(in + "/runW/checkpoints")) f.narrow = checkpoint_of(in + "/runW");
  f.a_copy = in + "/a_copy";
  f.b = in + "/b";
  f.tok = in + "/val.tokens";          // a token file is one by its bytes, not its name
  f.log_bin = in + "/log_named.bin";   // an HDF5 log is none, whatever its name
  f.existing = in + "/existing.h5";
  f.corpus = in + "/corpus";
  f.text_bin = in + "/p/train.bin";    // a text input named like the output prepare writes beside it
  f.text = in + "/q/t.txt";            // a text input in a folder of its own
  f.empty = in + "/empty.txt";
  return f;
}

void make_inputs(const std::string& in) {
  fs::create_directories(in);
  Fixture f = paths_under(in);
  REQUIRE(run("prepare --synthetic --docs 200 --seed 1 --out " + f.data, 60).status == 0);
  const std::string train = " --data " + f.data + " --model nano --max-iters 1 --warmup-iters 0 --eval-every 1 "
                            "--eval-batches 1 --sample-tokens 0 --threads 1 --out ";
  ChildResult r = run("train" + train + in + "/runA", 120);
  INFO(r.output);
  REQUIRE(r.status == 0);
  r = run("train" + train + in + "/runW --n-embd 32", 120);
  REQUIRE(r.status == 0);
  f = paths_under(in);
  fs::copy(f.a, f.a_copy);
  fs::copy(f.a, f.b);
  fs::copy_file(f.val, f.tok);
  fs::copy_file(in + "/runA/log.h5", f.log_bin);
  fs::copy_file(in + "/runA/log.h5", f.existing);
  fs::create_directories(f.corpus);
  for (const char* w : {"alpha", "beta", "gamma"}) {
    std::ofstream o(f.corpus + "/" + w + "_gut.txt");
    for (int i = 0; i < 30; ++i) o << "Line " << i << " of the work " << w << ", spoken twice.\n";
  }
  fs::create_directories(in + "/p");
  std::ofstream(f.text_bin) << "Some text to tokenise, once upon a time.\n";
  fs::create_directories(in + "/q");
  std::ofstream(f.text) << "Other text to tokenise, twice upon a time.\n";
  std::ofstream{f.empty};
}

// The cases' shared inputs (ctest runs the cases as parallel processes): each case holds a shared lock while it
// runs. They are made again, under the exclusive lock once no case holds them, when the mark written last after
// making them differs from what is there now: made by other binaries, half made, or changed since (a failed row).
Fixture make_fixture(const std::string& name) {
  const std::string shared = kRoot + "/shared", in = shared + "/in", mark = shared + "/made_by";
  fs::create_directories(kRoot);
  const auto current = [&] {
    std::ifstream was(mark);
    const std::string had(std::istreambuf_iterator<char>(was), {});
    return !had.empty() && fs::is_directory(in) && had == build_stamp() + text_of(tree(in));
  };
  auto lock = std::make_shared<InputsLock>();
  lock->take(LOCK_SH);
  if (!current()) {
    lock->take(LOCK_EX);  // waits for the cases that hold them
    if (!current()) {
      fs::remove_all(shared);
      make_inputs(in);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a later write moves a coarse change time
      const std::string made = build_stamp() + text_of(tree(in));
      std::ofstream(mark) << made;
    }
    lock->take(LOCK_SH);
  }
  Fixture f = paths_under(in);
  f.lock = lock;
  f.root = kRoot + "/" + name;
  fs::remove_all(f.root);
  fs::create_directories(f.root);
  return f;
}

std::string fill(const std::string& args, const Fixture& f) {
  std::string s = args;
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"{A}", f.a},         {"{ACOPY}", f.a_copy}, {"{B}", f.b},
                                                        {"{W}", f.narrow},    {"{D}", f.data},       {"{V}", f.val},
                                                        {"{TOK}", f.tok},     {"{LOGBIN}", f.log_bin},
                                                        {"{EXISTING}", f.existing}, {"{CORPUS}", f.corpus},
                                                        {"{TEXTBIN}", f.text_bin}, {"{TEXT}", f.text},
                                                        {"{EMPTY}", f.empty}, {"{OUT}", f.root + "/out"},
                                                        {"{IN}", f.in}})
    s = replace_all(s, key, value);
  return s;
}

struct Row {
  const char* args;     // after `gaugelab`, with the fixture's {PLACEHOLDERS}
  int status;           // the exit status it must end with
  const char* says;     // a piece of its output (the one-line error for a refusal)
  double limit_s;       // still running at this bound: a hang
  bool writes = false;  // a valid command that writes under {OUT} (the fixture itself never changes)
};

// Runs the rows against a fresh fixture: status, message, one line, time bound, nothing changed.
void check_rows(const std::string& name, const std::vector<Row>& rows) {
  if (!torch_built()) {
    std::puts("SKIPPED: built without the GPT-2 tier");
    return;
  }
  const Fixture f = make_fixture(name);
  const auto before = tree(f.in);
  for (const Row& row : rows) {
    fs::remove_all(f.root + "/out");
    fs::create_directories(f.root + "/out");
    const std::string args = fill(row.args, f);
    const auto t0 = std::chrono::steady_clock::now();
    const ChildResult r = run(args, row.limit_s);
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    INFO("gaugelab " << row.args << "\n-> status " << r.status << ", signal " << r.signal << ", " << secs << " s:\n"
                     << r.output);
    CHECK_FALSE(r.timed_out);
    CHECK(r.signal == 0);
    CHECK(r.status == row.status);
    CHECK(r.output.find(fill(row.says, f)) != std::string::npos);
    if (row.status != 0) {
      // One error line, and it is the last line, short enough to read.
      const std::size_t at = r.output.find("error:");
      REQUIRE(at != std::string::npos);
      CHECK(gaugelab::test::count_lines(r.output.substr(at)) == 1);
      CHECK(r.output.size() - at < 400);
    }
    CHECK(tree(f.in) == before);  // no input written, replaced, deleted or added to
    if (!row.writes) CHECK(fs::is_empty(f.root + "/out"));
  }
}

}  // namespace

TEST_CASE("bad input probes: no verb writes over its own inputs, --force or not", "[cli][probes]") {
  check_rows("inputs",
             {
                 // issue 31, 3: merge-models replaced A's weights (its optimizer state left beside them)
                 {"merge-models {ACOPY} {B} --out {ACOPY} --force", 2, "--out", 60},
                 {"merge-models {ACOPY} {B} --out {ACOPY} --force", 2, "is this command's input", 60},
                 {"merge-models {A} {B} --out {IN}/runA --force", 2, "holds this command's input", 60},
                 // hessian replaced the token file with its log, and the weights with it
                 {"hessian {A} --data {V} --out {V} --force", 2, "is this command's input", 60},
                 {"hessian {A} --data {V} --out {A}/model.safetensors --force", 2, "is a file of this command's input", 60},
                 {"eval {A} --data {V} --out {V} --force", 2, "is this command's input", 60},
                 {"eval {A} --tokens 1,2 --dump-logits {A}/config.json --force", 2, "--dump-logits", 60},
                 {"generate {A} --out {A}/model.safetensors --force", 2, "is a file of this command's input", 60},
                 {"inspect {A} --out {A}/optimizer.safetensors --force", 2, "is a file of this command's input", 60},
                 {"export {A} --out {A} --force", 2, "is this command's input", 60},
                 {"prepare --input {TEXTBIN} --out {IN}/p --force", 2, "is this command's input", 60},
                 // train --force removes OUT/checkpoints: not when the run starts from one of them
                 {"train --data {D} --model nano --max-iters 1 --warmup-iters 0 --threads 1 --init-from {A} --out {IN}/runA --force", 2,
                  "holds this command's input", 60},
                 // an existing --out is a usage error (exit 2, was 1)
                 {"hessian {A} --data {V} --out {EXISTING}", 2, "--out", 60},
                 {"hessian {A} --data {V} --out {EXISTING}", 2, "already exists (use --force", 60},
                 {"prepare --synthetic --docs 200 --out {D}", 2, "already exists (use --force", 60},
                 {"train --data {D} --model nano --max-iters 1 --warmup-iters 0 --threads 1 --out {IN}/runA", 2,
                  "already holds a run", 60},
                 // valid: a new file beside the inputs
                 {"eval {A} --data {V} --batches 1 --batch-size 1 --seq-len 8 --out {OUT}/eval.h5", 0, "val loss", 120, true},
             });
}

// train --force removes OUT/checkpoints and OUT/log.h5. --out itself is checked against the inputs before the
// device is chosen; these two are resolved through links when the run is about to remove them, so that one that
// is a link to an input, to the directory above one or into one is refused as well, and nothing is removed.
TEST_CASE("bad input probes: train --force refuses a linked checkpoints/ or log.h5 that leads to an input",
          "[cli][probes]") {
  if (!torch_built()) {
    std::puts("SKIPPED: built without the GPT-2 tier");
    return;
  }
  const Fixture f = make_fixture("links");
  const auto before = tree(f.in);
  const std::string t = "train --model nano --max-iters 1 --warmup-iters 0 --threads 1 --force --out {OUT}/run ";
  struct LinkRow {
    const char* link;    // under --out
    std::string target;  // what it links to
    std::string args, says;
  };
  const std::vector<LinkRow> rows = {
      {"checkpoints", f.in + "/runA/checkpoints", t + "--data {D} --init-from {A}",
       "--out {OUT}/run/checkpoints holds this command's input {A} (write the result elsewhere)"},
      {"log.h5", f.val, t + "--data {D}", "--out {OUT}/run/log.h5 is a file of this command's input {D}"},
  };
  for (const LinkRow& row : rows) {
    const fs::path out = f.root + "/out/run", link = out / row.link;
    fs::remove_all(f.root + "/out");
    fs::create_directories(out);
    if (fs::is_directory(row.target))
      fs::create_directory_symlink(row.target, link);
    else
      fs::create_symlink(row.target, link);
    const ChildResult r = run(fill(row.args, f), 60);
    INFO("gaugelab " << row.args << " (" << row.link << " -> " << row.target << ")\n-> status " << r.status << ":\n"
                     << r.output);
    CHECK(r.status == 2);
    CHECK(r.output.find(fill(row.says, f)) != std::string::npos);
    CHECK(fs::is_symlink(link));  // refused before anything was removed
    CHECK(tree(f.in) == before);
  }
  // --init-from given as a link inside OUT/checkpoints (to a checkpoint elsewhere): --force would delete the link
  // before the weights are read. Refused by where the link lives, not where it leads.
  const fs::path out = f.root + "/out/run", link = out / "checkpoints" / "step_link";
  fs::remove_all(f.root + "/out");
  fs::create_directories(out / "checkpoints");
  fs::create_directory_symlink(fill("{A}", f), link);
  const std::string args = t + "--data {D} --init-from " + link.string();
  const ChildResult r = run(fill(args, f), 60);
  INFO("gaugelab " << args << "\n-> status " << r.status << ":\n" << r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("holds this command's input " + link.string()) != std::string::npos);
  CHECK(fs::is_symlink(link));
  CHECK(tree(f.in) == before);
}

TEST_CASE("bad input probes: every count is bounded, refused in one line before any work", "[cli][probes]") {
  check_rows("counts",
             {
                 {"merge-models {A} {B} --out {OUT}/m --data {V} --batches 1e12", 2, "--batches", 60},
                 {"eval {A} --data {V} --batches 1e12", 2, "--batches", 60},
                 {"eval {A} --data {V} --batches 1e6 --batch-size 8", 2, "holds whatever the context (one per token)", 60},
                 {"generate {A} --max-new-tokens 1e12", 2, "--max-new-tokens", 60},
                 {"generate {A} --samples 1e12", 2, "--samples", 60},
                 {"generate {A} --samples 100000 --max-new-tokens 100000", 2, "--samples", 60},
                 {"train --data {D} --model nano --sample-tokens 1e12 --out {OUT}/t", 2, "--sample-tokens", 60},
                 {"train --data {D} --model nano --max-iters 1 --warmup-iters 0 --threads 1 --eval-batches 1e12 --out {OUT}/t", 2,
                  "--eval-batches", 60, true},
                 // valid: bounded counts run
                 {"generate {A} --max-new-tokens 3 --samples 2 --prompt-tokens 1,2", 0, "sample 1 ids", 60},
             });
}

TEST_CASE("bad input probes: a flag outside its mode is a usage error naming it", "[cli][probes]") {
  const std::string t = "train --data {D} --model nano --max-iters 1 --threads 1 --out {OUT}/t";
  const std::vector<std::string> args = {
      t + " --condition A --magnitude cap", t + " --qk-cap 3", t + " --muon-lr 0.1", t + " --projection-target update",
      t + " --condition B --qk-clip-tau 50", t + " --condition C --quotient-damping 0.1",
      t + " --condition E --gaugefix-vo", t + " --optimizer muon --muon-lr 1e308",
      "prepare --synthetic --val-works hamlet --out {OUT}/p",
      "prepare --corpus shakespeare --corpus-dir {CORPUS} --val-fraction 0.1 --out {OUT}/p",
      "prepare --input {TEXTBIN} --docs 10 --out {OUT}/p",
      "prepare --corpus shakespeare --corpus-dir {CORPUS} --val-works alpha,beta,gamma --out {OUT}/p",
      // valid: the same flags in their modes
      t + " --condition Dcap --qk-cap 3 --print-config", t + " --condition D --magnitude wd --print-config",
      t + " --optimizer muon --muon-lr 0.03 --print-config",
      t + " --multipliers none --grad-projection exact --projection-target update --print-config",
      t + " --condition P --projection-target gradient --print-config",
      "prepare --corpus shakespeare --corpus-dir {CORPUS} --val-works alpha --out {OUT}/p"};
  const std::vector<const char*> says = {"--magnitude applies only with --condition D or Dcap, but --condition is A",
                                         "--qk-cap applies only with --condition Dcap",
                                         "--muon-lr applies only with --optimizer muon, but --optimizer is adamw",
                                         "--projection-target applies only with --grad-projection approx or exact",
                                         "--qk-clip-tau applies only with --condition QKclip",
                                         "--quotient-damping applies only with --condition E",
                                         "--gaugefix-vo applies only with --condition B, D, Dcap",
                                         "--muon-lr must be",
                                         "--val-works applies only with --corpus shakespeare, but --corpus is not given",
                                         "--val-fraction applies only without --corpus",
                                         "--docs applies only with --synthetic",
                                         "--val-works holds all 3 works",
                                         "\"qk-cap\": 3",
                                         "\"magnitude\": \"wd\"",
                                         "\"muon-lr\": 0.03",
                                         "\"projection-target\": \"update\"",
                                         "\"projection-target\": \"gradient\"",
                                         "train  "};
  std::vector<Row> rows;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const bool valid = i >= 12;
    rows.push_back({args[i].c_str(), valid ? 0 : 2, says[i], 60, i + 1 == args.size()});
  }
  check_rows("modes", rows);
}

TEST_CASE("bad input probes: errors name the difference, token files are judged by their bytes", "[cli][probes]") {
  check_rows("smaller",
             {
                 // two 600-character configurations once; now the keys that differ
                 {"merge-models {A} {W} --out {OUT}/m", 1, "n_embd 64 vs 32", 60},
                 {"eval {A} --data {LOGBIN} --batches 1", 2, "is not a token file: it is an HDF5 file", 60},
                 {"hessian {A} --data {D}/meta.json --out {OUT}/h.h5", 2, "is not a token file: it is a JSON file", 60},
                 {"eval {A} --data {TOK} --batches 1 --batch-size 1 --seq-len 8", 0, "val loss", 60},
             });
}

// The CLI's probes of issue 45: outputs inside inputs, unbounded sizes, mode flags silently taken, exit codes
// that disagreed and messages that said the wrong thing. Each refused in one line, exit 2 (a usage error:
// main.cpp's convention), before any work and without touching the fixture; valid neighbours still run.
TEST_CASE("bad input probes: issue 45 (the CLI)", "[cli][probes]") {
  const std::string t = "train --data {D} --model nano --max-iters 1 --warmup-iters 0 --threads 1 ";
  const std::string huge = "1" + std::string(308, '0');  // a 309-digit integer
  const std::vector<std::tuple<std::string, int, std::string, bool>> table = {
      // the run directory over, above or inside its data directory (train wrote among train.bin / val.bin)
      {t + "--out {D} --force", 2, "is this command's input", false},
      {t + "--out {IN} --force", 2, "holds this command's input", false},
      {t + "--out {D}/run", 2, "lies inside this command's input", false},
      // outputs inside inputs
      {"export {A} --out {A}/sub", 2, "lies inside this command's input", false},
      {"prepare --input {TEXT} --out {IN}/q", 2, "holds this command's input", false},
      // unbounded sizes
      {"prepare --synthetic --docs 1e12 --out {OUT}/p", 2, "--docs 1000000000000 exceeds the limit of 10000000", false},
      {"toy relu --hidden 1e9 --out {OUT}/r.h5", 2, "--hidden must be in [1, 10000000]", false},
      // mode flags once taken silently
      {t + "--condition A --quotient-scale rms --out {OUT}/t", 2,
       "--quotient-scale applies only with --condition E or Erms, but --condition is A", false},
      {t + "--condition A --gaugefix-every 5 --out {OUT}/t", 2,
       "--gaugefix-every applies only with --condition B, D, Dcap or Beff, but --condition is A", false},
      {t + "--profile-steps 3 --out {OUT}/t", 2,
       "--profile-steps applies only with --profile-from other than 0, but --profile-from is 0", false},
      // a flag contradiction is named before a missing CUDA device (was exit 1, "no CUDA device")
      {t + "--device cuda --condition B --multipliers none --out {OUT}/t", 2, "needs row multipliers on q and k", false},
      // a missing --data: exit 2 from train as from eval (train said 1)
      {"train --data {IN}/nonexistent --model nano --out {OUT}/t", 2, "--data {IN}/nonexistent: no such directory", false},
      {"eval {A} --data {IN}/nonexistent", 2, "--data {IN}/nonexistent: no such file", false},
      {"train --data {V} --model nano --out {OUT}/t", 2, "is a file, not a directory", false},
      // messages that said the wrong thing
      {"eval {A} --data {V} --batches 1e9", 2, "holds whatever the context (one per token)", false},
      {t + "--lr 1e-308 --out {OUT}/t --print-config", 2, "'1e-308' is too close to 0 for a double", false},
      {t + "--lr 1e309 --out {OUT}/t --print-config", 2, "'1e309' is beyond the largest double", false},
      {"train --data {D} --model nano --max-iters " + huge + " --out {OUT}/t --print-config", 2,
       "(309 characters) is beyond the 64-bit integer range", false},
      {"train --resume --out {OUT}/nonexistent", 2, "--resume: the run directory {OUT}/nonexistent does not exist", false},
      {"train --data {D} --model nano --max-iters 40 --threads 1 --out {OUT}/t", 2,
       "give --warmup-iters 40 or less", false},
      // a list with an empty item, trailing or not
      {"sweep relu --lambda 0, --out {OUT}/s.h5", 2, "--lambda: empty item in list '0,'", false},
      {"sweep relu --lambda 0,,1 --out {OUT}/s.h5", 2, "--lambda: empty item in list '0,,1'", false},
      // shards count from 0 in both sweep and make_figures.py; n/n names the convention
      {"sweep relu --shard 4/4 --out {OUT}/s.h5", 2, "shards are numbered from 0 (0/4 .. 3/4)", false},
      // a corpus with nothing in it
      {"prepare --input {EMPTY} --out {OUT}/p", 2, "the input holds no document", false},
      // valid neighbours
      {"sweep relu --lambda 0,0.5 --steps 2 --hidden 2 --n-train 4 --n-val 2 --seeds 1 --gauges 0 --out {OUT}/s.h5", 0,
       "sweep relu ->", true},
      {t + "--condition B --gaugefix-every 5 --out {OUT}/t --print-config", 0, "\"gaugefix-every\": 5", false},
      {t + "--condition Erms --out {OUT}/t --print-config", 0, "\"quotient-scale\": \"rms\"", false},
      {t + "--profile-from 2 --profile-steps 3 --out {OUT}/t --print-config", 0, "\"profile-steps\": 3", false},
      {t + "--lr 2.5e-308 --out {OUT}/t --print-config", 0, "\"lr\": 2.5e-308", false},
  };
  std::vector<std::string> args, says;  // the placeholders in the expected text are filled as the command's
  for (const auto& [a, status, say, writes] : table) {
    args.push_back(a);
    says.push_back(say);
  }
  std::vector<Row> rows;
  for (std::size_t i = 0; i < table.size(); ++i)
    rows.push_back({args[i].c_str(), std::get<1>(table[i]), says[i].c_str(), 60, std::get<3>(table[i])});
  check_rows("issue45", rows);
}

namespace {

// Runs `args`, sends `sig` once the output holds `marker` (plus `delay_ms`), and waits for the end
// within `limit_s` in all (SIGKILL then: a hang).
ChildResult run_and_signal(const std::string& args, const std::string& marker, int delay_ms, int sig, double limit_s) {
  std::vector<std::string> argv = {kBin};
  for (auto& w : words(args)) argv.push_back(w);
  std::vector<char*> a;
  for (auto& s : argv) a.push_back(s.data());
  a.push_back(nullptr);
  int fds[2];
  ChildResult r;
  REQUIRE(pipe2(fds, O_CLOEXEC) == 0);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    execv(a[0], a.data());
    _exit(127);
  }
  close(fds[1]);
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration<double>(limit_s);
  std::optional<std::chrono::steady_clock::time_point> signal_at;
  bool sent = false;
  char buf[4096];
  for (;;) {
    const auto now = std::chrono::steady_clock::now();
    if (now > deadline) {
      r.timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
    if (!signal_at && r.output.find(marker) != std::string::npos) signal_at = now + std::chrono::milliseconds(delay_ms);
    if (signal_at && !sent && now >= *signal_at) {
      kill(pid, sig);
      sent = true;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    const ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    r.output.append(buf, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  if (WIFEXITED(st) && !r.timed_out) r.status = WEXITSTATUS(st);
  if (WIFSIGNALED(st)) r.signal = WTERMSIG(st);
  if (!sent) r.output += "\n(test: the marker never came; no signal sent)";
  return r;
}

}  // namespace

TEST_CASE("bad input probes: SIGTERM during the evaluation and SIGINT during the sample stop training", "[cli][probes]") {
  if (!torch_built()) {
    std::puts("SKIPPED: built without the GPT-2 tier");
    return;
  }
  const std::string root = kRoot + "/signals";
  fs::remove_all(root);
  fs::create_directories(root);
  // Half the documents held out: ~190k validation tokens, so a long evaluation is one the data allows.
  REQUIRE(run("prepare --synthetic --docs 2000 --val-fraction 0.5 --seed 1 --out " + root + "/data", 60).status == 0);
  const std::string base = "train --data " + root + "/data --model nano --max-iters 1 --warmup-iters 0 --threads 1 "
                           "--eval-every 1 --batch-size 8 ";
  // An evaluation of 20000 batches (minutes), then a sample of
  // 100000 greedy tokens (minutes too): each was a stretch in which the stop signals went unheard.
  // The settings printout ends setup, just before the run's handlers are installed; the signal follows it.
  struct Case {
    std::string extra, what;
    int sig;
  };
  for (const Case& c : {Case{"--eval-batches 20000 --sample-tokens 0", "SIGTERM during the evaluation", SIGTERM},
                        Case{"--eval-batches 1 --sample-tokens 100000", "SIGINT at step 1", SIGINT}}) {
    const std::string out = root + "/run_" + std::to_string(c.sig);
    const ChildResult r = run_and_signal(base + c.extra + " --out " + out, "MFU peak", 1500, c.sig, 90);
    INFO(c.extra << " -> status " << r.status << ", signal " << r.signal << ", timed out " << r.timed_out << ":\n"
                 << r.output);
    CHECK_FALSE(r.timed_out);
    CHECK(r.signal == 0);
    CHECK(r.status == 0);
    CHECK(r.output.find(c.what) != std::string::npos);
    CHECK(r.output.find("checkpoint written; continue with") != std::string::npos);
    CHECK(fs::exists(out + "/checkpoints"));
    if (c.sig == SIGTERM)  // stopped in the only evaluation: the summary says so instead of printing "nan"
      CHECK(r.output.find("val loss    — (no evaluation finished yet") != std::string::npos);
  }
}
