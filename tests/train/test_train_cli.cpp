// `gaugelab train` as a child process: bad flags, divergence, resume after SIGKILL bit for bit, and
// the 124M config starting. Small sizes and --threads 1 (two threads on a shared 2-core machine
// oversubscribe; the numbers are reproducible at any fixed thread count).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gpt2/model/model_dir.hpp"
#include "gpt2/train/micro_batch.hpp"
#include "gpt2/train/run_dir.hpp"
#include "io/run_log_reader.hpp"
#include "tests/support/own_dir.hpp"
#include "tests/support/process.hpp"
#include "tests/gpt2/gpt2_catch.hpp"
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab;
namespace fs = std::filesystem;

namespace {

const std::string kBin = std::string(GAUGELAB_BINARY_DIR) + "/gaugelab";
const std::string kRoot = std::string(GAUGELAB_BINARY_DIR) + "/test_train_runs";

// The synthetic corpus, prepared once per test process (~50k tokens).
const std::string& data_dir() {
  static const test::OwnDir own(kRoot + "/data");
  static const std::string dir = [] {
    const std::string d = own.path;
    const auto r = test::run_command(kBin + " prepare --synthetic --docs 300 --seed 1 --force --out " + d);
    if (r.status != 0) throw std::runtime_error("prepare failed: " + r.output);
    return d;
  }();
  return dir;
}

// A model small enough for hundreds of steps in seconds on one thread.
std::string small_run(const std::string& out) {
  return " train --data " + data_dir() + " --out " + out +
         " --model nano --n-embd 32 --block-size 32 --compact-vocab --batch-size 4 --eval-batches 2 --threads 1 --peak-tflops 1 --log-every 1000";
}

// Runs `argv` (no shell), sends `sig` after `ms` milliseconds if still running; true if it exited 0
// (before or after the signal).
bool run_or_kill(const std::vector<std::string>& argv, int ms, int sig = SIGKILL) {
  const pid_t pid = fork();
  if (pid == 0) {
    std::freopen("/dev/null", "w", stdout);
    std::freopen("/dev/null", "w", stderr);
    std::vector<char*> a;
    for (const std::string& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    execv(a[0], a.data());
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  int status = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) && WEXITSTATUS(status) == 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid, sig);
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::vector<std::string> split_words(const std::string& s) {
  std::vector<std::string> out;
  std::string w;
  for (const char c : s) {
    if (c == ' ') {
      if (!w.empty()) out.push_back(w);
      w.clear();
    } else {
      w += c;
    }
  }
  if (!w.empty()) out.push_back(w);
  return out;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) return false;
  return true;
}

}  // namespace

TEST_CASE("train cli: bad flags exit 2 with one line") {
  // Refused while parsing, before any data is read: the data directory need not exist.
  const std::string base = " train --data " + kRoot + "/no-data --out " + kRoot + "/bad";
  for (const std::string& extra : {std::string(" --condition F"), std::string(" --lr -1"), std::string(" --no-such-flag 1"),
                                   std::string(" --state-transport vector --condition A"),
                                   std::string(" --multipliers q:diagonal"),
                                   std::string(" --attention flash --device cpu")}) {
    const auto r = test::run_command(kBin + base + extra);
    INFO(extra << " -> " << r.output);
    CHECK(r.status == 2);
    CHECK(test::count_lines(r.output) == 1);
    CHECK(r.output.find("error") != std::string::npos);
  }
  const auto no_out = test::run_command(kBin + " train --data " + kRoot + "/no-data");
  CHECK(no_out.status == 2);
  CHECK(!fs::exists(kRoot + "/bad"));
}

TEST_CASE("train cli: --cuda-graph on is refused off CUDA in one line, before any step") {
  const std::string out = kRoot + "/graph_cpu";
  fs::remove_all(out);
  const auto r = test::run_command(kBin + small_run(out) + " --max-iters 2 --warmup-iters 0 --cuda-graph on");
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(test::count_lines(r.output) == 1);
  CHECK(r.output.find("--cuda-graph on needs --device cuda") != std::string::npos);
  CHECK(!fs::exists(gpt2::train_log_path(out)));
}

TEST_CASE("train cli: an absurd learning rate diverges cleanly with the log closed and the last good checkpoint kept") {
  const std::string out = kRoot + "/diverge";
  const auto r = test::run_command(kBin + small_run(out) +
                                   " --force --lr 1e4 --warmup-iters 0 --grad-clip 0 --max-iters 60 --ckpt-every 1 --eval-every 1000");
  INFO(r.output);
  REQUIRE(r.status == 3);
  const io::RunLogReader log(gpt2::train_log_path(out));
  const auto summary = log.summary();  // a closed log: /summary exists
  REQUIRE(std::get<std::int64_t>(summary.at("diverged")) == 1);
  REQUIRE(std::get<std::int64_t>(summary.at("stable")) == 0);
  const std::int64_t steps = std::get<std::int64_t>(summary.at("steps"));
  CHECK(steps < 60);
  const io::SeriesData s = log.series();
  CHECK((!std::isfinite(s.at("loss").back()) || !std::isfinite(s.at("grad_norm").back())));
  const auto ckpt = gpt2::latest_train_checkpoint(out);
  if (steps == 0) {
    CHECK(!ckpt);
    CHECK(r.output.find("no checkpoint was written before it") != std::string::npos);
  } else {
    CHECK(r.output.find("the last good checkpoint is kept") != std::string::npos);
    REQUIRE(ckpt);
    CHECK(fs::path(*ckpt).filename() == gpt2::train_checkpoint_name(steps));
    const gpt2::ModelDir ck = gpt2::read_model_dir(*ckpt, c10::Device(c10::kCPU), gpt2::ModelDirKinds::checkpoint);
    bool finite = true;
    for (const auto& [name, t] : ck.model->named_parameters()) finite &= t.isfinite().all().item<bool>();
    CHECK(finite);
  }
}

TEST_CASE("train cli: a resumed run that writes no checkpoints and diverges keeps the one it continued") {
  // The first launch takes one step at an absurd learning rate and writes its checkpoint; the resumed one
  // (--ckpt-every 0) diverges from there. Its line must name the checkpoint it continued as kept, not say
  // that none was written, and that checkpoint must be left as it was.
  const std::string out = kRoot + "/diverge_resumed";
  const std::string common = " --lr 1e4 --warmup-iters 0 --grad-clip 0 --lr-decay-iters 60 --eval-every 1000";
  const auto first = test::run_command(kBin + small_run(out) + common + " --force --max-iters 1 --ckpt-every 1");
  INFO(first.output);
  REQUIRE(first.status == 0);
  const auto kept = gpt2::latest_train_checkpoint(out);
  REQUIRE(kept);
  REQUIRE(fs::path(*kept).filename() == gpt2::train_checkpoint_name(1));
  auto bytes = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  const std::string model_before = bytes(fs::path(*kept) / "model.safetensors");
  const std::string optimizer_before = bytes(fs::path(*kept) / "optimizer.safetensors");
  REQUIRE(!model_before.empty());

  const auto r = test::run_command(kBin + small_run(out) + common + " --resume --max-iters 60 --ckpt-every 0");
  INFO(r.output);
  REQUIRE(r.status == 3);
  CHECK(r.output.find("the last good checkpoint is kept") != std::string::npos);
  CHECK(r.output.find("no checkpoint was written before it") == std::string::npos);
  const io::RunLogReader log(gpt2::train_log_path(out));
  const auto summary = log.summary();  // a closed log: /summary exists
  CHECK(std::get<std::int64_t>(summary.at("diverged")) == 1);
  const std::int64_t steps = std::get<std::int64_t>(summary.at("steps"));
  CHECK(steps >= 1);
  CHECK(steps < 60);
  // The only checkpoint is still the first launch's, byte for byte.
  const std::vector<std::string> all = gpt2::train_checkpoints_newest_first(out);
  REQUIRE(all.size() == 1);
  CHECK(all.front() == *kept);
  CHECK(bytes(fs::path(*kept) / "model.safetensors") == model_before);
  CHECK(bytes(fs::path(*kept) / "optimizer.safetensors") == optimizer_before);
}

TEST_CASE("train cli: resume after SIGKILL at random points reproduces every logged value bit for bit", "[alone]") {
  const std::string ref = kRoot + "/resume_ref", cut = kRoot + "/resume_cut";
  const std::string common = " --lr 3e-3 --warmup-iters 5 --max-iters 1000 --ckpt-every 25 --eval-every 25 --log-heads-every 5 --condition B --gaugefix-every 3";
  const auto r = test::run_command(kBin + small_run(ref) + common + " --force");
  REQUIRE(r.status == 0);
  fs::remove_all(cut);
  std::mt19937 rng(7);
  // LibTorch loads in ~1 s, 1000 steps take several seconds more: kills land before, during and between
  // checkpoints of the training itself.
  std::uniform_int_distribution<int> kill_ms(800, 2200);
  const std::vector<std::string> first = split_words(kBin + small_run(cut) + common);
  std::vector<std::string> again = first;
  again.push_back("--resume");
  bool done = run_or_kill(first, kill_ms(rng));
  int kills = done ? 0 : 1;
  const auto t_end = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (int attempt = 0; !done && attempt < 6 && std::chrono::steady_clock::now() < t_end; ++attempt) {
    done = run_or_kill(again, kill_ms(rng));
    kills += done ? 0 : 1;
  }
  if (!done) done = run_or_kill(again, 120000);  // the last resume runs to the end
  REQUIRE(done);
  INFO("killed " << kills << " times");
  CHECK(kills >= 2);
  const io::SeriesData a = io::RunLogReader(gpt2::train_log_path(ref)).series();
  const io::SeriesData b = io::RunLogReader(gpt2::train_log_path(cut)).series();
  REQUIRE(a.step.size() == 1000);
  CHECK(a.step == b.step);
  for (const char* name : {"loss", "grad_norm", "lr", "val_loss", "drift_max", "drift_mean", "spike", "after_fix"}) {
    INFO(name);
    CHECK(same_bits(a.at(name), b.at(name)));
  }
  const io::RunLogReader hb(gpt2::train_log_path(cut));
  CHECK(hb.heads_step() == io::RunLogReader(gpt2::train_log_path(ref)).heads_step());
  CHECK(same_bits(hb.heads("s_qk").values, io::RunLogReader(gpt2::train_log_path(ref)).heads("s_qk").values));
}

TEST_CASE("train cli: the GPT-2 124M config starts and runs 2 steps on the CPU with a shortened schedule", "[alone]") {
  const std::string out = kRoot + "/gpt2_124m";
  const std::string cfg = std::string(GAUGELAB_SOURCE_DIR) + "/gpt2/configs/gpt2-124m-owt.ini";
  // 124M parameters: two steps of one 128-token sequence are ~0.2 TFLOP; refuse to hog a busy CI. No samples:
  // greedy decoding at 124M is a third of the run's time and is tested on the small model. No checkpoint
  // (--ckpt-every 0): its 1.4 GB (weights and AdamW's moments) is nothing this test reads, and took 4 of the run's
  // 12 CPU-s (checkpoints are tested on the small model).
  const auto r = test::run_command("timeout 100 " + kBin + " train --config " + cfg + " --data " + data_dir() + " --out " +
                                   out + " --force --device cpu --precision fp32 --threads 1 --batch-size 1 --grad-accum 1"
                                   " --block-size 128 --max-iters 2 --warmup-iters 1 --eval-batches 1 --peak-tflops 1"
                                   " --sample-tokens 0 --ckpt-every 0");
  if (r.status == 124) {
    WARN("SKIPPED: the 124M config took over 100 s for 2 steps on this machine (busy?)");
    return;
  }
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("12 layers, 12 heads, d 768") != std::string::npos);
  const io::RunLogReader log(gpt2::train_log_path(out));
  CHECK(std::get<std::int64_t>(log.summary().at("steps")) == 2);
  CHECK(std::get<std::int64_t>(log.summary().at("tokens")) == 256);
  fs::remove_all(out);
}

TEST_CASE("train cli: 2 Gloo ranks on loopback reproduce the single-process run at the same global batch", "[alone]") {
  const std::string one = kRoot + "/dp_one", two = kRoot + "/dp_two";
  // --grad-accum is the global count: one process runs both micro-batches, each rank one of them.
  const std::string common = " --lr 3e-3 --warmup-iters 5 --max-iters 30 --eval-every 10 --condition B --grad-accum 2";
  const auto r1 = test::run_command(kBin + small_run(one) + common + " --force");
  REQUIRE(r1.status == 0);
  const int port = 29500 + static_cast<int>(getpid() % 2000);
  std::string launch;
  for (int rank = 0; rank < 2; ++rank)
    launch += "RANK=" + std::to_string(rank) + " WORLD_SIZE=2 LOCAL_RANK=" + std::to_string(rank) +
              " MASTER_ADDR=127.0.0.1 MASTER_PORT=" + std::to_string(port) + " timeout 120 " + kBin + small_run(two) +
              common + " --force --dist-timeout-s 60 > " + two + "_rank" + std::to_string(rank) + ".txt 2>&1 & ";
  fs::create_directories(kRoot);
  const auto r2 = test::run_command("(" + launch + "wait)");
  REQUIRE(r2.status == 0);
  const io::RunLogReader log2(gpt2::train_log_path(two));
  REQUIRE(std::get<std::int64_t>(log2.summary().at("world")) == 2);
  CHECK(std::get<std::int64_t>(log2.summary().at("tokens_per_step")) == 2 * 4 * 32);
  const io::SeriesData a = io::RunLogReader(gpt2::train_log_path(one)).series(), b = log2.series();
  REQUIRE(a.step.size() == 30);
  REQUIRE(b.step.size() == 30);
  // Same windows, same model; only the order of the float32 gradient sums differs (all-reduce of two
  // halves vs accumulation): a few float32 ulps per step, compounding over 30 steps.
  constexpr double kReductionOrder = 1e-5;
  for (const char* name : {"loss", "val_loss"}) {
    double worst = 0;
    for (std::size_t i = 0; i < a.step.size(); ++i)
      if (std::isfinite(a.at(name)[i])) worst = std::max(worst, std::abs(a.at(name)[i] - b.at(name)[i]) / std::abs(a.at(name)[i]));
    INFO(name << " worst relative difference " << worst);
    CHECK(worst < kReductionOrder);
  }
}

TEST_CASE("train cli: SIGTERM stops gracefully with a checkpoint and a closed log and --resume completes the run") {
  const std::string out = kRoot + "/sigterm";
  fs::remove_all(out);
  const std::string args = small_run(out) + " --lr 3e-3 --warmup-iters 5 --max-iters 100000 --ckpt-every 100000";
  std::vector<std::string> argv = split_words(kBin + args);
  // Give it time to start (LibTorch loads in ~1-2 s) and take some steps; it must then stop by itself.
  REQUIRE(run_or_kill(argv, 4000, SIGTERM));
  const io::RunLogReader log(gpt2::train_log_path(out));
  const auto summary = log.summary();
  REQUIRE(std::get<std::int64_t>(summary.at("interrupted")) == 1);
  const std::int64_t steps = std::get<std::int64_t>(summary.at("steps"));
  CHECK(steps > 0);
  CHECK(std::get<std::int64_t>(summary.at("completed")) == 0);
  const auto ckpt = gpt2::latest_train_checkpoint(out);
  REQUIRE(ckpt);
  CHECK(fs::path(*ckpt).filename() == gpt2::train_checkpoint_name(steps));  // the stop wrote its own
  CHECK(log.series().step.size() == static_cast<std::size_t>(steps));
  const auto r = test::run_command(kBin + small_run(out) + " --lr 3e-3 --warmup-iters 5 --max-iters " +
                                   std::to_string(steps + 5) + " --ckpt-every 100000 --resume --replan");  // a shorter run: its cosine re-planned
  INFO(r.output);
  REQUIRE(r.status == 0);
  const io::RunLogReader done(gpt2::train_log_path(out));
  CHECK(std::get<std::int64_t>(done.summary().at("completed")) == 1);
  CHECK(done.series().step.size() == static_cast<std::size_t>(steps + 5));
}

TEST_CASE("train cli: --ckpt-every 0 writes no checkpoint, neither at the end nor on SIGTERM, and closes its log") {
  const std::string out = kRoot + "/no_ckpt";
  fs::remove_all(out);
  const auto r = test::run_command(kBin + small_run(out) + " --lr 3e-3 --warmup-iters 1 --max-iters 3 --ckpt-every 0");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(!gpt2::latest_train_checkpoint(out));
  CHECK(!fs::exists(gpt2::train_checkpoints_dir(out)));
  CHECK(r.output.find("no checkpoints: --ckpt-every 0") != std::string::npos);
  CHECK(std::get<std::int64_t>(io::RunLogReader(gpt2::train_log_path(out)).summary().at("completed")) == 1);
  // The bench's rows are stopped by SIGTERM at their limit: the log is closed, still nothing saved.
  REQUIRE(run_or_kill(split_words(kBin + small_run(out) + " --force --lr 3e-3 --warmup-iters 5 --max-iters 100000 "
                                           "--ckpt-every 0"),
                      4000, SIGTERM));
  const io::RunLogReader log(gpt2::train_log_path(out));
  CHECK(std::get<std::int64_t>(log.summary().at("interrupted")) == 1);
  CHECK(std::get<std::int64_t>(log.summary().at("steps")) > 0);
  CHECK(!gpt2::latest_train_checkpoint(out));
}

TEST_CASE("train cli: a tight spike rule flags steps in the spike series and marks the run unstable in the summary") {
  const std::string out = kRoot + "/spikes";
  // factor 1.05 over a 5-step median: ordinary step-to-step noise of the norm counts as a spike.
  const auto r = test::run_command(kBin + small_run(out) +
                                   " --force --lr 3e-3 --warmup-iters 5 --max-iters 60 --spike-factor 1.05 --spike-window 5"
                                   " --unstable-spikes 3 --eval-every 1000");
  INFO(r.output);
  REQUIRE(r.status == 0);
  const io::RunLogReader log(gpt2::train_log_path(out));
  const io::SeriesData s = log.series();
  const auto summary = log.summary();
  double flagged = 0;
  for (std::size_t i = 0; i < s.step.size(); ++i) {
    flagged += s.at("spike")[i];
    if (s.step[i] <= 5) CHECK(s.at("spike")[i] == 0);  // warm-up (its 5 norms also fill the window)
  }
  CHECK(flagged >= 3);
  CHECK(static_cast<std::int64_t>(flagged) == std::get<std::int64_t>(summary.at("n_spikes")));
  CHECK(std::get<std::int64_t>(summary.at("stable")) == 0);
  CHECK(std::get<std::int64_t>(summary.at("diverged")) == 0);
}

TEST_CASE("train cli: --resume --out DIR alone takes every setting from the run's checkpoint, a changed model is refused") {
  const std::string out = kRoot + "/resume_by_dir";
  fs::remove_all(out);
  const std::string args = small_run(out) + " --lr 3e-3 --warmup-iters 5 --max-iters 100000 --ckpt-every 100000 "
                                            "--condition C --qk-gauge-init 0.5 --seed 7";
  REQUIRE(run_or_kill(split_words(kBin + args), 4000, SIGTERM));
  const std::int64_t steps = std::get<std::int64_t>(io::RunLogReader(gpt2::train_log_path(out)).summary().at("steps"));
  REQUIRE(steps > 0);
  // No --data, no size flags, no condition, no seed: all from the checkpoint (only the new end is given).
  const auto r = test::run_command(kBin + " train --resume --out " + out + " --max-iters " + std::to_string(steps + 3) +
                                   " --replan --threads 1");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("settings taken from the run's newest checkpoint") != std::string::npos);
  const io::RunLogReader done(gpt2::train_log_path(out));
  CHECK(std::get<std::int64_t>(done.summary().at("completed")) == 1);
  CHECK(done.series().step.size() == static_cast<std::size_t>(steps + 3));
  // An identity setting given explicitly and different is refused with the key named.
  const auto bad = test::run_command(kBin + " train --resume --out " + out + " --model tiny --max-iters " +
                                     std::to_string(steps + 6) + " --replan --threads 1");
  CHECK(bad.status != 0);
  CHECK(bad.output.find("--model") != std::string::npos);
}

TEST_CASE("train cli: --grad-projection exact leaves plain gradients as they are (Prop. 38), approx and update move the run") {
  // A gauge-invariant loss has horizontal gradients, so the exact projection of the raw gradient removes only
  // rounding; Alg. 2 is not a projection (it moves horizontal vectors too), and AdamW's update is not horizontal.
  auto run = [&](const std::string& name, const std::string& extra) {
    const std::string out = kRoot + "/proj_" + name;
    const auto r = test::run_command(kBin + small_run(out) + " --force --multipliers none --condition C --max-iters 30" +
                                     " --warmup-iters 3 --eval-every 30" + extra);
    INFO(name << ": " << r.output);
    REQUIRE(r.status == 0);
    return io::RunLogReader(gpt2::train_log_path(out)).series().at("loss");
  };
  const std::vector<double> none = run("none", ""), exact = run("exact", " --grad-projection exact"),
                            approx = run("approx", " --grad-projection approx"),
                            update = run("update", " --grad-projection exact --projection-target update");
  auto max_diff = [&](const std::vector<double>& a) {
    double m = 0;
    for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a[i] - none[i]));
    return m;
  };
  // measured: exact 4.8e-7 (one float32 ulp of a loss near 6), approx 6e-3, update 1.9e-4 after 30 steps
  CHECK(max_diff(exact) < 5e-6);   // rounding only (10 ulps)
  CHECK(max_diff(approx) > 5e-5);  // a different trajectory
  CHECK(max_diff(update) > 5e-5);
  // with multipliers on the attention sites the projection is undefined: refused before training (2), one line
  const auto refused = test::run_command(kBin + " train --data " + data_dir() + " --out " + kRoot + "/proj_bad --force" +
                                         " --model nano --grad-projection exact --max-iters 2 --warmup-iters 0");
  CHECK(refused.status == 2);
  CHECK(test::count_lines(refused.output.substr(refused.output.find("error"))) == 1);
}

TEST_CASE("train cli: a device out of memory inside a step is one line naming the micro-batch and the flags") {
  // c10::OutOfMemoryError is what CUDA's caching allocator throws; the loop turns it into these (micro_steps.cpp;
  // micro_batch.cpp words them).
  const std::runtime_error e = gpt2::out_of_memory_error(
      "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 79.19 GiB total capacity)\nmore detail", 64, 1024, 2,
      c10::Device("cpu"));
  const std::string m = e.what();
  CHECK(m.find('\n') == std::string::npos);
  CHECK(m.find("--batch-size 64 x 1024 tokens") != std::string::npos);
  CHECK(m.find("Tried to allocate 2.00 GiB") != std::string::npos);
  CHECK(m.find("raise --grad-accum (now 2)") != std::string::npos);
  // A micro-batch that --fit-micro-batch chose: the flag to lower is --fit-memory.
  const std::string f = gpt2::fitted_out_of_memory_error("CUDA out of memory. Tried to allocate 1.00 GiB\nmore", 12, 1024,
                                                         0.9, c10::Device("cpu")).what();
  CHECK(f.find('\n') == std::string::npos);
  CHECK(f.find("in a fitted micro-batch of 12 x 1024 tokens (CUDA out of memory. Tried to allocate 1.00 GiB)") !=
        std::string::npos);
  CHECK(f.find("lower --fit-memory (now 0.9") != std::string::npos);
}

}  // namespace GAUGELAB_TU
