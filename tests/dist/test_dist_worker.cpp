// The worker side of the multi-process tests: a hidden test case ("[.]", so CTest never lists it)
// that dist_harness.hpp runs by name in a child process. It joins the group described by torchrun's
// variables, runs GAUGELAB_DIST_SCENARIO and writes its results to GAUGELAB_DIST_OUT; a failure is
// written as one "error <message>" line so the parent can check what the user would have seen.
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>

#include <ATen/Parallel.h>

#include "gpt2/dist/data_parallel.hpp"
#include "tests/dist/dist_scenarios.hpp"
#include "tests/gpt2/gpt2_catch.hpp"
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

namespace {

using namespace gaugelab;
using namespace gaugelab::test::dist;

double env_double(const char* name, double fallback) {
  const char* v = std::getenv(name);
  return v ? std::strtod(v, nullptr) : fallback;
}

void run_scenario(const std::string& scenario, std::ofstream& out) {
  const gpt2::DistEnv env = gpt2::detect_dist_env();
  const double timeout_s = env_double("GAUGELAB_DIST_TIMEOUT", 30.0);
  const auto bucket = static_cast<std::int64_t>(env_double("GAUGELAB_DIST_BUCKET", double(gpt2::kDefaultBucketBytes)));
  auto dp = gpt2::DataParallel::create(env, gpt2::DistBackend::automatic, c10::Device(c10::kCPU), timeout_s, bucket);
  const int failing = static_cast<int>(env_double("GAUGELAB_DIST_FAILING", 1));  // the rank that dies or stalls
  out << "joined " << dp->rank() << " " << dp->world() << "\n";
  out.flush();

  if (scenario == "broadcast") {
    auto ts = make_tensors(1000 + static_cast<std::uint64_t>(env.rank));
    dp->broadcast_parameters(ts);
    for (std::size_t i = 0; i < ts.size(); ++i) write_values(out, "t" + std::to_string(i), values_of(ts[i]));
    write_values(out, "buckets", {double(dp->last_bucket_count())});
  } else if (scenario == "average") {
    auto ps = make_tensors(0);
    auto gs = make_tensors(100 + static_cast<std::uint64_t>(env.rank));
    for (std::size_t i = 0; i < ps.size(); ++i) {
      const bool missing = i == kGradMissingEverywhere || (i == kGradMissingOnRank1 && env.rank == 1);
      if (!missing) ps[i].mutable_grad() = gs[i];
    }
    dp->average_gradients(ps);
    for (std::size_t i = 0; i < ps.size(); ++i) {
      if (ps[i].grad().defined()) write_values(out, "g" + std::to_string(i), values_of(ps[i].grad()));
      else write_values(out, "undefined" + std::to_string(i), {});
    }
    write_values(out, "buckets", {double(dp->last_bucket_count())});
    write_values(out, "mean", {dp->all_reduce_mean(1.5 + env.rank)});
    at::Tensor m = make_tensors(100 + static_cast<std::uint64_t>(env.rank))[0];  // the rank's own values (gs now
                                                                                // holds the averaged gradients)
    dp->all_reduce_max(m);
    write_values(out, "max", values_of(m));
    dp->barrier();
  } else if (scenario == "train") {
    const std::int64_t half = TrainSetup::kBatch / env.world;
    std::vector<at::Tensor> final_params;
    const auto curve = train_curve(*dp, half * env.rank, half * (env.rank + 1),
                                   static_cast<std::uint64_t>(env.rank), &final_params);
    write_values(out, "loss", curve);
    std::vector<double> all;
    for (const auto& p : final_params) {
      const auto v = values_of(p);
      all.insert(all.end(), v.begin(), v.end());
    }
    write_values(out, "params", all);
  } else if (scenario == "dies") {
    auto ps = make_tensors(0);
    dp->broadcast_parameters(ps);
    if (env.rank == failing) {
      out << "exiting\n";
      out.flush();
      std::_Exit(3);  // a crash: no goodbye to the group
    }
    for (auto& p : ps) p.mutable_grad() = p.clone();
    dp->average_gradients(ps);
    out << "survived\n";
  } else if (scenario == "broken_pipe") {
    // A write to a socket whose other end is closed, as a Gloo pair's write to a rank that died: it must fail
    // with EPIPE, not end this rank by SIGPIPE (data_parallel.cpp).
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) throw std::runtime_error("socketpair failed");
    ::close(fds[1]);
    const char byte = 'x';
    ssize_t rv = 0;
    for (int i = 0; i < 2 && rv >= 0; ++i) rv = ::write(fds[0], &byte, 1);  // writev in Gloo: no MSG_NOSIGNAL
    const int err = errno;
    ::close(fds[0]);
    out << (rv < 0 && err == EPIPE ? "epipe\n" : "no epipe\n");
    dp->barrier();
  } else if (scenario == "stalls") {
    auto ps = make_tensors(0);
    dp->broadcast_parameters(ps);
    if (env.rank == failing) {
      out << "stalling\n";
      out.flush();
      std::this_thread::sleep_for(std::chrono::seconds(60));  // alive but never joins; the parent kills it
      std::_Exit(4);
    }
    for (auto& p : ps) p.mutable_grad() = p.clone();
    dp->average_gradients(ps);
    out << "survived\n";
  } else {
    throw std::runtime_error("unknown scenario " + scenario);
  }
}

}  // namespace

TEST_CASE("dist_worker", "[.]") {
  const char* scenario = std::getenv("GAUGELAB_DIST_SCENARIO");
  const char* out_path = std::getenv("GAUGELAB_DIST_OUT");
  if (!scenario || !out_path) return;  // only meaningful when the harness starts us
  at::set_num_threads(1);              // the same kernels as the parent's single-process reference
  std::ofstream out(out_path);
  try {
    run_scenario(scenario, out);
  } catch (const std::exception& e) {
    out << "error " << e.what() << "\n";
    out.flush();  // the line stands even if the process ends before the stream closes
  }
  out << "done\n";
}

}  // namespace GAUGELAB_TU
