// `gaugelab train` against nanoGPT's training loop (tests/reference/nanogpt_train_ref.py, the venv's
// torch): the same initial weights (our checkpoint, read by the script through safetensors), the same
// batches (our seeded windows, recomputed by the script from the documented rule), AdamW with nanoGPT's
// groups, warm-up + cosine, clipping on, two micro-batches per step, 24 steps. Every logged loss and
// the final weights are compared; the measured differences are printed.
//   (a) multipliers none: nanoGPT's model and groups exactly;
//   (b) multipliers on and frozen at 1 (--multiplier-lr-scale 0): the same losses as (a)'s reference;
//   (c, d, e) conditions A, B, C with multipliers training, against the script's own reference of the
//       paper's multiplier groups and of GaugeFix;
//   (f) the same three conditions in a PyTorch nn.Module loop that takes its multipliers, groups, clip set
//       and condition hooks only from gaugelab.torch (tests/reference/torch_ops_train.py), same tolerances.
// The vocabulary is 512 (a multiple of 64): nanoGPT trains padded vocabulary rows as classes, we mask
// them, and the two agree only without padding (gpt2/README.md, "Deviations from nanoGPT").
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpt2/model/checkpoint.hpp"
#include "gpt2/model/model.hpp"
#include "gpt2/model/safetensors.hpp"
#include "io/run_log_reader.hpp"
#include "tests/support/process.hpp"
#include "tests/gpt2/gpt2_catch.hpp"
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab;
namespace fs = std::filesystem;

namespace {

const std::string kRoot = std::string(GAUGELAB_BINARY_DIR) + "/test_train_nanogpt";

// Tolerances, argued from float32: the two programs compute the same sums in different orders (our
// fused LM-head cross-entropy against F.cross_entropy, our matmul shapes against nn.Linear's), so a
// loss differs by a few float32 ulps (6.2 · 2⁻²⁴ ≈ 4e-7 each) and a gradient by ~1e-6 relative; AdamW
// divides by √v, so an update inherits that relative error (the same fused kernel then applies it),
// and 24 steps accumulate it. Measured here (printed by the test): max |Δloss| 7.2e-7 in every case; max
// relative weight difference 1.7e-6 when these bounds were set, 8.1e-6 with torch 2.15 (the same with the
// gaugelab binary of before and after the gaugelab.torch refactor: the difference is the torch build's).
// The bounds sit above that, and two orders below a one-flag departure from the protocol (no clipping moves the loss by ~1e-3, no embedding
// decay the weights by ~1e-3 relative; both tested below).
constexpr double kLossAbs = 1e-5;    // max |Δloss| over the 24 logged steps
constexpr double kWeightRel = 2e-5;  // max over tensors of ‖ours − ref‖/‖ref‖ after 24 steps

struct Case {
  std::string name;
  bool lrm;
  std::string condition;
  bool frozen;  // --multiplier-lr-scale 0
};

std::string data_dir() {
  static const std::string dir = [] {
    const std::string d = kRoot + "/data";
    fs::create_directories(d);
    // A noisy first-order chain over 512 ids: learnable structure, so the loss moves in 24 steps.
    std::mt19937_64 rng(7);
    for (const char* split : {"train", "val"}) {
      std::vector<std::uint16_t> t(split[0] == 't' ? 60000 : 6000);
      std::uint16_t x = 1;
      for (auto& v : t) {
        x = (rng() % 5 == 0) ? static_cast<std::uint16_t>(rng() % 512) : static_cast<std::uint16_t>((x * 37 + 11) % 512);
        v = x;
      }
      // CTest runs this file's test cases as concurrent processes that all make these files: each writes
      // its own temporary and renames it over (atomic; the contents are identical), so no process ever
      // reads a file another one is truncating (a failure seen once under `make test -j2`).
      const std::string tmp = d + "/" + split + ".bin.tmp." + std::to_string(::getpid());
      std::ofstream(tmp, std::ios::binary)
          .write(reinterpret_cast<const char*>(t.data()), static_cast<std::streamsize>(t.size() * 2));
      fs::rename(tmp, d + "/" + split + ".bin");
    }
    return d;
  }();
  return dir;
}

std::string init_checkpoint(bool lrm) {
  const std::string dir = kRoot + (lrm ? "/init_lrm" : "/init_plain");
  if (fs::exists(dir + "/model.safetensors")) return dir;
  gpt2::ModelConfig c = gpt2::ModelConfig::preset("nano");
  c.n_layer = 2, c.n_head = 2, c.n_embd = 64, c.block_size = 32, c.vocab_size = 512;
  c.bias = false;
  c.gelu = gpt2::Gelu::erf;
  c.lrm = lrm ? gpt2::LrmPlacement{} : gpt2::LrmPlacement::none();
  gpt2::GPT m(c, 1234);
  // As for the data: written aside and renamed into place; a process that loses the race drops its copy.
  const std::string tmp = dir + ".tmp." + std::to_string(::getpid());
  gpt2::save_checkpoint(tmp, m, gpt2::Vocabulary{});
  std::error_code ec;
  fs::rename(tmp, dir, ec);
  if (ec) fs::remove_all(tmp);
  return dir;
}

const std::string kSchedule =
    " --batch-size 4 --grad-accum 2 --max-iters 24 --lr 3e-3 --min-lr 3e-4 --warmup-iters 4 --lr-decay-iters 24"
    " --weight-decay 0.1 --wd-multipliers 2e-3 --grad-clip 1.0 --seed 42";

struct Ref {
  std::vector<double> loss, clipped;
  std::string weights;
};

// The torch Python to run the reference with; none where LibTorch is not from a venv. A constant, not a #define of
// the macro: the area compiles as one unity batch, and a definition here would reach the files after it.
#ifdef GAUGELAB_TORCH_PYTHON
const std::string kTorchPython = GAUGELAB_TORCH_PYTHON;
#else
const std::string kTorchPython;
#endif

bool have_python() {
  if (!kTorchPython.empty()) return true;
  WARN("SKIPPED: no Python beside the torch wheel to run tests/reference/nanogpt_train_ref.py");
  return false;
}

// One reference run. script: nanogpt_train_ref.py (the functional reference) or torch_ops_train.py (a PyTorch
// nn.Module loop that takes its multipliers, groups, clip set and condition hooks only from gaugelab.torch, found in
// the build).
struct RefJob {
  RefJob(Case k_, std::string out_, std::string script_ = "nanogpt_train_ref.py", std::string extra_ = "")
      : k(std::move(k_)), out(std::move(out_)), script(std::move(script_)), extra(std::move(extra_)) {}
  Case k;
  std::string out, script, extra;
};

// A test case's reference runs, in one Python process (tests/reference/run_batch.py): torch's import, ~2 CPU-s, is
// paid once per test case, not once per run (process accounting under CTest: this file's 14 reference runs took 52 CPU-s
// in 14 processes; one process per test case, 5 in all, 19 CPU-s).
std::vector<Ref> references(const std::vector<RefJob>& jobs) {
  std::ostringstream lines;  // the runs' command lines, made first: data_dir() and init_checkpoint() make kRoot
  bool torch_ops = false;
  for (const RefJob& j : jobs) {
    torch_ops = torch_ops || j.script == "torch_ops_train.py";
    lines << j.script << " --init " << init_checkpoint(j.k.lrm) << " --data " << data_dir() << "/train.bin --out " << j.out
          << (j.k.lrm ? " --lrm" : "") << (j.k.lrm || j.script == "torch_ops_train.py" ? " --condition " + j.k.condition : "")
          << (j.k.frozen ? " --multiplier-lr-scale 0" : "") << kSchedule << j.extra << "\n";  // ours' schedule, the same flags
  }
  for (const RefJob& j : jobs) fs::remove_all(j.out);  // no output of an earlier run read as this one's
  const std::string list = kRoot + "/batch." + std::to_string(::getpid()) + "." + fs::path(jobs.front().out).filename().string();
  std::ofstream(list) << lines.str();
  const std::string env = torch_ops ? "PYTHONPATH=" + std::string(GAUGELAB_BINARY_DIR) + "/python " : "";
  const std::string cmd = env + kTorchPython + " " + GAUGELAB_SOURCE_DIR +
                          "/tests/reference/run_batch.py " + list;
  const test::ProcessResult r = test::run_command(cmd);
  INFO(cmd << "\n" << lines.str() << r.output);
  REQUIRE(r.status == 0);
  fs::remove(list);
  std::vector<Ref> refs;
  for (const RefJob& j : jobs) {
    const nlohmann::json out = nlohmann::json::parse(std::ifstream(j.out + "/losses.json"));
    refs.push_back({out.at("loss").get<std::vector<double>>(), out.at("grad_norm_clipped").get<std::vector<double>>(),
                    j.out + "/final.safetensors"});
  }
  return refs;
}

struct Ours {
  std::vector<double> loss, clipped;
  std::string weights;
};

Ours ours(const Case& k, const std::string& extra = "", const std::string& schedule = kSchedule) {
  const std::string out = kRoot + "/ours_" + k.name;
  fs::remove_all(out);
  const test::ProcessResult r = test::run_gaugelab(
      "train --data " + data_dir() + " --init-from " + init_checkpoint(k.lrm) + " --out " + out +
      " --multipliers " + (k.lrm ? "default" : "none") + " --condition " + k.condition +
      (k.frozen ? " --multiplier-lr-scale 0" : "") + schedule +
      " --threads 1 --eval-every 1000 --eval-batches 1 --ckpt-every 1000 --log-heads-every 1000 --peak-tflops 1" +
      extra);
  INFO(r.output);
  REQUIRE(r.status == 0);
  const io::SeriesData s = io::RunLogReader(out + "/log.h5").series();
  return {s.at("loss"), s.at("grad_norm_clipped"), out + "/checkpoints/step_00000024/model.safetensors"};
}

double max_loss_diff(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

double max_weight_rel(const std::string& ours_path, const std::string& ref_path) {
  const gpt2::safetensors::File a = gpt2::safetensors::read_file(ours_path);
  const gpt2::safetensors::File b = gpt2::safetensors::read_file(ref_path);
  double worst = 0;
  REQUIRE(a.tensors.size() == b.tensors.size());
  for (const auto& [name, view] : b.tensors) {
    INFO(name);
    const auto& mine = a.at(name);
    REQUIRE(mine.shape == view.shape);
    const auto* x = reinterpret_cast<const float*>(mine.data);
    const auto* y = reinterpret_cast<const float*>(view.data);
    double num = 0, den = 0;
    REQUIRE(view.dtype == gpt2::safetensors::DType::F32);
    for (std::size_t i = 0; i < view.nbytes / 4; ++i) {
      num += (static_cast<double>(x[i]) - y[i]) * (static_cast<double>(x[i]) - y[i]);
      den += static_cast<double>(y[i]) * y[i];
    }
    worst = std::max(worst, std::sqrt(num / std::max(den, 1e-300)));
  }
  return worst;
}

void check_against(const Case& k, const Ours& o, const Ref& ref, const std::string& against) {
  const double dl = max_loss_diff(o.loss, ref.loss), dw = max_weight_rel(o.weights, ref.weights);
  WARN(k.name << " vs " << against << ": max |dloss| over 24 steps " << dl << ", max relative weight difference " << dw);
  CHECK(dl < kLossAbs);
  CHECK(dw < kWeightRel);
  int clipped_steps = 0;
  for (const double n : ref.clipped) clipped_steps += n > 1.0;
  CHECK(clipped_steps >= 1);  // the clip is exercised
  CHECK(max_loss_diff(o.clipped, ref.clipped) < 1e-3 * *std::max_element(ref.clipped.begin(), ref.clipped.end()));
}

Ours compare(const Case& k, const Ref& ref, const std::string& extra = "", const std::string& against = "reference") {
  const Ours o = ours(k, extra);
  check_against(k, o, ref, against);
  return o;
}

bool have_torch_package() {
  const bool built = fs::exists(std::string(GAUGELAB_BINARY_DIR) + "/python/gaugelab/torch/libgaugelab_torch_ops.so");
#ifdef GAUGELAB_TORCH_OPS_BUILT  // the build made it: its absence is a failure, not a skip
  REQUIRE(built);
#endif
  if (!built) WARN("SKIPPED: gaugelab.torch is not built (GAUGELAB_PYTHON off)");
  return built;
}

}  // namespace

TEST_CASE("nanogpt: plain model, nanoGPT's groups, every loss and the final weights", "[train][nanogpt][alone]") {
  if (!have_python()) return;
  const Case k{"plain", false, "A", false};
  const Ref ref = references({{k, kRoot + "/ref_plain"}}).front();
  compare(k, ref);
  // A departure from the protocol is far outside the tolerance: no decay on the embeddings.
  const Ours off = ours({"plain_wd_emb_0", false, "A", false}, " --wd-embeddings 0");
  CHECK(max_weight_rel(off.weights, ref.weights) > 10 * kWeightRel);
  std::string unclipped = kSchedule;
  unclipped.replace(unclipped.find("--grad-clip 1.0"), 15, "--grad-clip 0");
  const Ours no_clip = ours({"plain_no_clip", false, "A", false}, "", unclipped);
  CHECK(max_loss_diff(no_clip.loss, ref.loss) > 10 * kLossAbs);
}

TEST_CASE("nanogpt: multipliers on and frozen at 1 give the plain model's losses", "[train][nanogpt][alone]") {
  if (!have_python()) return;
  const Ref plain = references({{{"plain", false, "A", false}, kRoot + "/ref_plain_for_frozen"}}).front();
  const Ours o = ours({"frozen", true, "A", true});
  const double dl = max_loss_diff(o.loss, plain.loss);
  WARN("frozen multipliers vs nanoGPT's plain model: max |dloss| " << dl);
  CHECK(dl < kLossAbs);
}

// One gaugelab train run per condition, checked against both references: the functional one of the
// multiplier groups and the PyTorch nn.Module loop that uses only gaugelab.torch.
TEST_CASE("nanogpt: conditions A, B and C against the reference of the multiplier groups and a gaugelab.torch loop",
          "[train][nanogpt][alone]") {
  if (!have_python()) return;
  const bool torch_ops = have_torch_package();
  std::vector<RefJob> jobs;
  for (const char* c : {"A", "B", "C"}) {
    const Case k{std::string("lrm_") + c, true, c, false};
    jobs.push_back({k, kRoot + "/ref_lrm_" + c});
    if (torch_ops) jobs.push_back({k, kRoot + "/ref_torch_ops_" + c, "torch_ops_train.py"});
  }
  const std::vector<Ref> refs = references(jobs);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    if (jobs[i].script == "torch_ops_train.py") continue;
    const Ours o = compare(jobs[i].k, refs[i], "", "the functional reference");
    if (torch_ops) check_against(jobs[i].k, o, refs[i + 1], "the gaugelab.torch loop");
  }
}

// The conditions whose hooks act after the step (the table's rows, read by gaugelab.torch.attach), at settings
// where each acts from the first steps: the cap below the start's s_Q·s_K = 1, tau below the tiny model's
// largest logits (~0.08 at init). Each must match gaugelab train at the same tolerances and move the run
// away from C's (the hook fired). E itself is left out: its inverse-Gram correction inflates the step ~40×
// (issue: trustworthy verdicts) and with it float32 rounding, 1.1e-4 relative in the weights after 24 steps
// (losses 6.7e-6); Erms runs the same operator at the raw step size.
TEST_CASE("gaugelab.torch: Beff, Dcap, QKclip and Erms in the same loop, hooks from the conditions table", "[train][nanogpt][alone]") {
  if (!have_python() || !have_torch_package()) return;
  const Ours c = ours({"torch_ops_hooks_C", true, "C", false});
  std::vector<RefJob> jobs;
  for (const auto& [cond, extra] : std::vector<std::pair<std::string, std::string>>{
           {"Beff", ""}, {"Dcap", " --qk-cap 0.95"}, {"QKclip", " --qk-clip-tau 0.1"}, {"Erms", ""}})
    jobs.push_back({{"torch_ops_" + cond, true, cond, false}, kRoot + "/ref_torch_ops_" + cond, "torch_ops_train.py", extra});
  const std::vector<Ref> refs = references(jobs);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const Ours o = compare(jobs[i].k, refs[i], jobs[i].extra, "the gaugelab.torch loop");
    const double moved = max_weight_rel(o.weights, c.weights);
    WARN(jobs[i].k.condition << ": max relative weight difference from C's run " << moved);
    CHECK(moved > 10 * kWeightRel);
  }
}

// Seed 001's projections on the model without multipliers (the table's N, P, Pu rows): the gradients projected
// before the clip (P), the optimizer's update projected after the step (Pu). Each must match gaugelab train.
// Pu moves the run away from N's; P does not (measured 3e-7): the loss is gauge-invariant, so its gradient is
// already horizontal (seed 001 Prop. 38) and projecting it removes only rounding, the measured null P − N.
TEST_CASE("gaugelab.torch: the gradient and update projections (P, Pu) in the same loop", "[train][nanogpt][alone]") {
  if (!have_python() || !have_torch_package()) return;
  const Ours n = ours({"torch_ops_proj_N", false, "N", false});
  std::vector<RefJob> jobs;
  for (const char* cond : {"P", "Pu"})
    jobs.push_back({{std::string("torch_ops_") + cond, false, cond, false}, kRoot + "/ref_torch_ops_" + cond, "torch_ops_train.py"});
  const std::vector<Ref> refs = references(jobs);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const Ours o = compare(jobs[i].k, refs[i], "", "the gaugelab.torch loop");
    const double moved = max_weight_rel(o.weights, n.weights);
    WARN(jobs[i].k.condition << ": max relative weight difference from N's run " << moved);
    if (jobs[i].k.condition == "P") CHECK(moved < kWeightRel);
    else CHECK(moved > 10 * kWeightRel);
  }
}

}  // namespace GAUGELAB_TU
