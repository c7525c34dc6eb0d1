// Two Gloo ranks on 127.0.0.1, each a child process (dist_harness.hpp): broadcast, gradient
// averaging, a small GPT trained 2 ranks × half batch against the single-process curve, and ranks
// that never show up or die mid-run; three ranks, one of which dies or stalls, named by the others.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/ops/full.h>
#include <ATen/ops/maximum.h>
#include <ATen/ops/ones.h>

#include "gpt2/dist/data_parallel.hpp"
#include "gpt2/model/cuda_side.hpp"
#include "tests/dist/dist_harness.hpp"
#include "tests/dist/dist_scenarios.hpp"
#include "tests/gpt2/gpt2_catch.hpp"
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab;
using namespace gaugelab::test::dist;

namespace {

/// Deadline for a healthy 2-rank scenario: two processes loading LibTorch (~1-2 s each on a busy
/// 2-core machine) plus milliseconds of work; far below it in practice, it only bounds a hang.
constexpr double kHealthyDeadlineS = 120.0;
/// Collective/rendezvous timeout in the failure scenarios, and the slack allowed beyond it for
/// process start-up and LibTorch loading before the error must have been reported.
constexpr double kFailTimeoutS = 3.0;
constexpr double kFailSlackS = 30.0;

struct Run {
  std::vector<Worker> workers;
  bool clean = false;  // every worker exited by itself before the deadline
};

Run run_ranks(const std::string& scenario, const std::vector<int>& ranks, int world, double deadline_s,
              const ScratchDir& dir, const std::map<std::string, std::string>& extra = {}) {
  const int port = free_port();
  Run r;
  for (int rank : ranks) r.workers.push_back(spawn_worker(scenario, rank, world, port, dir.path, extra));
  r.clean = wait_all(r.workers, deadline_s);
  return r;
}

/// "exit 0", "exit 3", "signal 13" (a wait status as words).
std::string ending(int status) {
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "signal " + std::to_string(WTERMSIG(status));
  return "status " + std::to_string(status);
}

std::string describe(const Worker& w) {
  return "rank " + std::to_string(w.rank) + " " + ending(w.status) + "\n--- results:\n" +
         read_text(w.out) + "--- log:\n" + read_text(w.log);
}

}  // namespace

TEST_CASE("broadcast makes every rank hold rank 0's tensors", "[dist][gloo][alone]") {
  ScratchDir dir;
  Run r = run_ranks("broadcast", {0, 1}, 2, kHealthyDeadlineS, dir,
                    {{"GAUGELAB_DIST_BUCKET", std::to_string(kSmallBucketBytes)}});
  REQUIRE(r.clean);
  const auto want = make_tensors(1000);  // rank 0's tensors
  const auto other = make_tensors(1001);  // rank 1's own, before the broadcast
  for (const auto& w : r.workers) {
    INFO(describe(w));
    REQUIRE(read_error(w.out).empty());
    const auto res = read_results(w.out);
    for (std::size_t i = 0; i < want.size(); ++i) {
      const auto got = res.at("t" + std::to_string(i));
      // Bit-exact: a broadcast copies bytes (float64 through hexfloat text is exact, float32 too).
      CHECK(got == values_of(want[i]));
      CHECK(got != values_of(other[i]));
    }
    // 256-byte buckets, filled per dtype in list order: f32 {[3,5], [7]} (88 B; [1000] would overflow
    // it), {[1000]} (4000 B, alone), {[4]}, then the f64 {[2,2,2]}: 4.
    CHECK(res.at("buckets").at(0) == 4);
  }
}

TEST_CASE("average_gradients gives the mean of the ranks' gradients (and the max all-reduce their maximum)", "[dist][gloo][alone]") {
  ScratchDir dir;
  Run r = run_ranks("average", {0, 1}, 2, kHealthyDeadlineS, dir,
                    {{"GAUGELAB_DIST_BUCKET", std::to_string(kSmallBucketBytes)}});
  REQUIRE(r.clean);
  const auto g0 = make_tensors(100), g1 = make_tensors(101);
  for (const auto& w : r.workers) {
    INFO(describe(w));
    REQUIRE(read_error(w.out).empty());
    const auto res = read_results(w.out);
    for (std::size_t i = 0; i < g0.size(); ++i) {
      if (i == kGradMissingEverywhere) {
        CHECK(res.count("undefined" + std::to_string(i)) == 1);  // no rank had one: still none
        continue;
      }
      // Exact: for 2 ranks the all-reduce forms one sum a + b per element (correctly rounded, the
      // same in either order) and the division by 2 is exact; a missing gradient counts as 0.
      const at::Tensor b = i == kGradMissingOnRank1 ? at::zeros_like(g1[i]) : g1[i];
      const at::Tensor want = g0[i].add(b).mul(0.5);
      CHECK(res.at("g" + std::to_string(i)) == values_of(want));
    }
    CHECK(res.at("mean").at(0) == 2.0);  // mean of 1.5 and 2.5
    CHECK(res.at("max") == values_of(at::maximum(g0[0], g1[0])));  // elementwise max over the ranks (QK-Clip's S_max)
    CHECK(res.at("buckets").at(0) == 4);  // the same plan as the broadcast's
  }
}

TEST_CASE("2 ranks x half batch reproduce the single-process loss curve", "[dist][gloo][train][alone]") {
  // Reference: one process, the whole batch, the same initial model and SGD.
  at::set_num_threads(1);
  gpt2::DistEnv single;
  single.source = "single";
  auto dp1 = gpt2::DataParallel::create(single, gpt2::DistBackend::automatic, c10::Device(c10::kCPU), 10.0);
  std::vector<at::Tensor> ref_params;
  const auto ref = train_curve(*dp1, 0, TrainSetup::kBatch, 0, &ref_params);
  REQUIRE(ref.back() < ref.front() - 0.5);  // the loss really moves (else agreement would be trivial)

  ScratchDir dir;
  Run r = run_ranks("train", {0, 1}, 2, kHealthyDeadlineS, dir);
  REQUIRE(r.clean);
  // Tolerance: the two runs differ only in fp32 reduction order (each rank sums its half of the
  // B·T = 64 token rows into the weight gradients and the two halves are then added; the loss is a
  // mean of two half means). Each gradient entry then differs by a few units of fp32 roundoff
  // (u = 6e-8) relative to its magnitude; over 12 SGD steps that perturbation is carried, not
  // amplified much (lr 0.3, a smooth loss). 1e-5 relative leaves ~100x headroom over that and is
  // still ~1000x below what a wrong reduction gives (control below: no averaging ⇒ 1e-2 and more).
  constexpr double kLossRelTol = 1e-5;
  constexpr double kParamRelTol = 1e-4;  // parameters: same argument, max over 135k entries
  std::vector<std::vector<double>> params_per_rank;
  for (const auto& w : r.workers) {
    INFO(describe(w));
    REQUIRE(read_error(w.out).empty());
    const auto res = read_results(w.out);
    const auto& loss = res.at("loss");
    REQUIRE(loss.size() == ref.size());
    double worst = 0;
    for (std::size_t s = 0; s < ref.size(); ++s) worst = std::max(worst, std::abs(loss[s] - ref[s]) / std::abs(ref[s]));
    INFO("max relative loss difference " << worst);
    CHECK(worst <= kLossRelTol);
    params_per_rank.push_back(res.at("params"));
  }
  REQUIRE(params_per_rank.size() == 2);
  CHECK(params_per_rank[0] == params_per_rank[1]);  // ranks apply identical averaged updates: bit-equal
  std::vector<double> refv;
  for (const auto& p : ref_params) {
    const auto v = values_of(p);
    refv.insert(refv.end(), v.begin(), v.end());
  }
  REQUIRE(refv.size() == params_per_rank[0].size());
  double num = 0, den = 0;
  for (std::size_t i = 0; i < refv.size(); ++i) {
    num = std::max(num, std::abs(refv[i] - params_per_rank[0][i]));
    den = std::max(den, std::abs(refv[i]));
  }
  INFO("max parameter difference / max |parameter| = " << num / den);
  CHECK(num / den <= kParamRelTol);

  // Control: two half-batch runs whose gradients are NOT averaged (each rank steps on its own half)
  // drift away from the reference far beyond the tolerance, so the test can tell.
  auto half0 = train_curve(*dp1, 0, TrainSetup::kBatch / 2, 0, nullptr);
  auto half1 = train_curve(*dp1, TrainSetup::kBatch / 2, TrainSetup::kBatch, 0, nullptr);
  double control = 0;
  for (std::size_t s = 0; s < ref.size(); ++s)
    control = std::max(control, std::abs(0.5 * (half0[s] + half1[s]) - ref[s]) / std::abs(ref[s]));
  INFO("control (no averaging) max relative difference " << control);
  CHECK(control > 100 * kLossRelTol);
}

TEST_CASE("a rank that never shows up makes rank 0 fail with one line after the timeout", "[dist][gloo][timeout][alone]") {
  ScratchDir dir;
  Run r = run_ranks("broadcast", {0}, 2, kFailTimeoutS + kFailSlackS, dir,
                    {{"GAUGELAB_DIST_TIMEOUT", std::to_string(kFailTimeoutS)}});
  const Worker& w = r.workers.at(0);
  INFO(describe(w));
  REQUIRE(r.clean);  // it exited by itself: no hang
  const std::string err = read_error(w.out);
  CHECK(err.find("rank 0/2") != std::string::npos);
  CHECK(err.find("rendezvous at 127.0.0.1:") != std::string::npos);
  CHECK(err.find('\n') == std::string::npos);
  CHECK(w.seconds >= kFailTimeoutS * 0.9);  // it did wait for the missing rank
}

TEST_CASE("a missing rank 0 makes the other rank fail with one line after the timeout", "[dist][gloo][timeout][alone]") {
  ScratchDir dir;
  Run r = run_ranks("broadcast", {1}, 2, kFailTimeoutS + kFailSlackS, dir,
                    {{"GAUGELAB_DIST_TIMEOUT", std::to_string(kFailTimeoutS)}});
  const Worker& w = r.workers.at(0);
  INFO(describe(w));
  REQUIRE(r.clean);
  const std::string err = read_error(w.out);
  CHECK(err.find("rank 1/2") != std::string::npos);
  CHECK(err.find("rendezvous") != std::string::npos);
}

TEST_CASE("a rank dying mid-run makes the survivor's all-reduce fail with one line", "[dist][gloo][timeout][alone]") {
  ScratchDir dir;
  Run r = run_ranks("dies", {0, 1}, 2, kFailTimeoutS + kFailSlackS, dir,
                    {{"GAUGELAB_DIST_TIMEOUT", std::to_string(kFailTimeoutS)}});
  REQUIRE(r.clean);
  const Worker& w0 = r.workers.at(0);
  INFO(describe(w0) + describe(r.workers.at(1)));
  CHECK(read_text(r.workers.at(1).out).find("exiting") != std::string::npos);
  CHECK(read_text(w0.out).find("survived") == std::string::npos);
  const std::string err = read_error(w0.out);
  CHECK(err.find("rank 0/2") != std::string::npos);
  CHECK(err.find("all-reduce failed: rank 1 is gone (its connection closed") != std::string::npos);
  CHECK(err.find('\n') == std::string::npos);
}

TEST_CASE("a stalled rank makes the other's all-reduce fail with one line after the timeout", "[dist][gloo][timeout][alone]") {
  // Rank 1 stays alive (its sockets open) but never joins the all-reduce: only the timeout can end
  // rank 0's wait. Rank 0 is waited for alone; rank 1 is killed afterwards.
  ScratchDir dir;
  const int port = free_port();
  const std::map<std::string, std::string> extra{{"GAUGELAB_DIST_TIMEOUT", std::to_string(kFailTimeoutS)}};
  std::vector<Worker> w0{spawn_worker("stalls", 0, 2, port, dir.path, extra)};
  std::vector<Worker> w1{spawn_worker("stalls", 1, 2, port, dir.path, extra)};
  const bool clean = wait_all(w0, kFailTimeoutS + kFailSlackS);
  wait_all(w1, 0.0);  // kills it
  INFO(describe(w0[0]) + describe(w1[0]));
  REQUIRE(clean);
  CHECK(read_text(w1[0].out).find("stalling") != std::string::npos);
  CHECK(read_text(w0[0].out).find("survived") == std::string::npos);
  const std::string err = read_error(w0[0].out);
  CHECK(err.find("rank 0/2") != std::string::npos);
  CHECK(err.find("all-reduce failed: rank 1 did not take part within the timeout") != std::string::npos);
  CHECK(err.find("timeout 3 s") != std::string::npos);
  CHECK(w0[0].seconds >= kFailTimeoutS * 0.9);  // it did wait the timeout out
  CHECK(err.find('\n') == std::string::npos);
}

TEST_CASE("with 3 ranks, a rank dying mid-run is named by both survivors", "[dist][gloo][timeout][alone]") {
  // Rank 2 dies: the survivors learn which at the roll call. Rank 0 dies: the store it served is gone with it.
  for (const int dying : {2, 0}) {
    ScratchDir dir;
    Run r = run_ranks("dies", {0, 1, 2}, 3, kFailTimeoutS + kFailSlackS, dir,
                      {{"GAUGELAB_DIST_TIMEOUT", std::to_string(kFailTimeoutS)},
                       {"GAUGELAB_DIST_FAILING", std::to_string(dying)}});
    REQUIRE(r.clean);
    const std::string how = dying == 0 ? "rank 0 is gone (a connection closed, and the rendezvous store it serves does "
                                         "not answer; timeout 3 s)"
                                       : "rank 2 is gone (a connection closed, and it did not answer at the rendezvous "
                                         "store within 1.5 s; timeout 3 s)";
    for (const Worker& w : r.workers) {
      INFO("dying " << dying << "\n" << describe(w));
      if (w.rank == dying) {
        CHECK(read_text(w.out).find("exiting") != std::string::npos);
        continue;
      }
      CHECK(ending(w.status) == "exit 0");  // the worker catches the failure: a signal here ended it before its line
      CHECK(read_text(w.out).find("survived") == std::string::npos);
      const std::string err = read_error(w.out);
      CHECK(err.find("rank " + std::to_string(w.rank) + "/3") != std::string::npos);
      CHECK(err.find("failed: " + how) != std::string::npos);
      CHECK(err.find('\n') == std::string::npos);
      CHECK(w.seconds < kFailTimeoutS + kFailSlackS);
    }
  }
}

TEST_CASE("a rank that joined a group outlives a write to a closed socket (EPIPE, not SIGPIPE)", "[dist][gloo][alone]") {
  // Gloo writes to its peers with writev, which raises SIGPIPE on a connection the peer has closed: a survivor
  // writing to a rank that died would end without naming it. Joining a group ignores SIGPIPE, as Python does.
  ScratchDir dir;
  Run r = run_ranks("broken_pipe", {0, 1}, 2, kHealthyDeadlineS, dir);
  REQUIRE(r.clean);
  for (const Worker& w : r.workers) {
    INFO(describe(w));
    CHECK(ending(w.status) == "exit 0");
    CHECK(read_error(w.out).empty());
    CHECK(read_text(w.out).find("\nepipe\n") != std::string::npos);
  }
}

TEST_CASE("with 3 ranks, a stalled rank is named as late by both others after the timeout", "[dist][gloo][timeout][alone]") {
  // Rank 2 stays alive (its sockets open) but never joins the all-reduce: the rank waiting for it times out,
  // and the one waiting for that rank hears at the roll call that a rank timed out, so both say rank 2 may live.
  ScratchDir dir;
  const int port = free_port();
  const std::map<std::string, std::string> extra{{"GAUGELAB_DIST_TIMEOUT", std::to_string(kFailTimeoutS)},
                                                 {"GAUGELAB_DIST_FAILING", "2"}};
  std::vector<Worker> others{spawn_worker("stalls", 0, 3, port, dir.path, extra),
                             spawn_worker("stalls", 1, 3, port, dir.path, extra)};
  std::vector<Worker> stalled{spawn_worker("stalls", 2, 3, port, dir.path, extra)};
  const bool clean = wait_all(others, kFailTimeoutS + kFailSlackS);
  wait_all(stalled, 0.0);  // kills it
  REQUIRE(clean);
  CHECK(read_text(stalled[0].out).find("stalling") != std::string::npos);
  for (const Worker& w : others) {
    INFO(describe(w));
    const std::string err = read_error(w.out);
    CHECK(err.find("rank " + std::to_string(w.rank) + "/3") != std::string::npos);
    CHECK(err.find("failed: rank 2 did not take part within the timeout (stuck, or dead with its connection open; it "
                   "did not answer at the rendezvous store within 1.5 s; timeout 3 s)") != std::string::npos);
    CHECK(w.seconds >= kFailTimeoutS * 0.9);
  }
}

TEST_CASE("NCCL: a one-rank group works on a GPU and fails in one line without one", "[dist][nccl][alone]") {
  // The NCCL path compiles and links everywhere (the wheel is CUDA-enabled); it can run only with a
  // GPU. Without one, creating the group must fail with one line, after the rendezvous and the
  // NCCL header/library version check (data_parallel_nccl.cpp) have run.
  gpt2::DistEnv env;
  env.source = "torchrun";
  env.master_addr = "127.0.0.1";
  env.master_port = free_port();
  const c10::Device cuda("cuda:0");
  if (!gpt2::cuda_present()) {
    std::string err;
    try {
      gpt2::DataParallel::create(env, gpt2::DistBackend::nccl, cuda, kFailTimeoutS);
    } catch (const std::runtime_error& e) {
      err = e.what();
    }
    INFO(err);
    CHECK(err.find("data parallel (nccl, rank 0/1): creating the process group") != std::string::npos);
    CHECK(err.find("NCCL header") == std::string::npos);  // the version check passed
    CHECK(err.find('\n') == std::string::npos);
    return;
  }
  auto dp = gpt2::DataParallel::create(env, gpt2::DistBackend::automatic, cuda, kFailTimeoutS);
  CHECK(dp->backend() == gpt2::DistBackend::nccl);
  at::Tensor p = at::ones({5}, at::TensorOptions().device(cuda));
  p.mutable_grad() = at::full({5}, 3.0, at::TensorOptions().device(cuda));
  dp->broadcast_parameters({p});
  dp->average_gradients({p});
  CHECK(p.grad().sum().item<double>() == 15.0);
  CHECK(dp->all_reduce_mean(4.25) == 4.25);
  dp->barrier();
}

}  // namespace GAUGELAB_TU
