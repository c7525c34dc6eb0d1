// Rank/world detection from launcher variables (torchrun, Slurm, none), the backend choice, and the
// single-process group whose collectives are the identity.
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include <ATen/ops/full.h>
#include <ATen/ops/ones.h>

#include "gpt2/dist/data_parallel.hpp"
#include "gpt2/dist/dist_failure.hpp"
#include "tests/gpt2/gpt2_catch.hpp"
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using gaugelab::gpt2::DistEnv;
using gaugelab::gpt2::detect_dist_env;

namespace {

DistEnv detect(const std::map<std::string, std::string>& vars) {
  return detect_dist_env([&](const std::string& k) -> std::optional<std::string> {
    auto it = vars.find(k);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  });
}

/// The message of the runtime_error `vars` raise ("" if none).
std::string error_of(const std::map<std::string, std::string>& vars) {
  try {
    detect(vars);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

const std::map<std::string, std::string> kTorchrun{
    {"RANK", "3"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "3"}, {"MASTER_ADDR", "10.0.0.5"}, {"MASTER_PORT", "29400"}};
const std::map<std::string, std::string> kSlurm{{"SLURM_PROCID", "5"},   {"SLURM_NTASKS", "16"},
                                               {"SLURM_LOCALID", "1"},  {"SLURM_STEP_NODELIST", "gpu[07-09,12]"},
                                               {"SLURM_JOB_ID", "123457"}, {"SLURM_LAUNCH_NODE_IPADDR", "10.1.1.1"}};

}  // namespace

TEST_CASE("no launcher variables: a single process", "[dist][env]") {
  const DistEnv e = detect({});
  CHECK(e.source == "single");
  CHECK(e.rank == 0);
  CHECK(e.world == 1);
  CHECK(e.master_addr.empty());
  // MASTER_* alone (e.g. exported for a later launch) do not make a distributed run.
  CHECK(detect({{"MASTER_ADDR", "h"}, {"MASTER_PORT", "1"}}).source == "single");
}

TEST_CASE("torchrun variables", "[dist][env]") {
  const DistEnv e = detect(kTorchrun);
  CHECK(e.source == "torchrun");
  CHECK(e.rank == 3);
  CHECK(e.world == 8);
  CHECK(e.local_rank == 3);
  CHECK(e.master_addr == "10.0.0.5");
  CHECK(e.master_port == 29400);
  // torchrun inside a Slurm step: torchrun's RANK is the one that counts.
  auto both = kTorchrun;
  both.insert(kSlurm.begin(), kSlurm.end());
  CHECK(detect(both).source == "torchrun");
  CHECK(detect(both).rank == 3);
}

TEST_CASE("Slurm variables", "[dist][env]") {
  DistEnv e = detect(kSlurm);
  CHECK(e.source == "slurm");
  CHECK(e.rank == 5);
  CHECK(e.world == 16);
  CHECK(e.local_rank == 1);
  CHECK(e.master_addr == "gpu07");  // first host of the step's node list, not the launch node
  CHECK(e.master_port == gaugelab::gpt2::kSlurmPortBase + 123457 % gaugelab::gpt2::kSlurmPortSpan);
  auto v = kSlurm;
  v["MASTER_ADDR"] = "head";
  v["MASTER_PORT"] = "4242";
  e = detect(v);
  CHECK(e.master_addr == "head");  // explicit MASTER_* win
  CHECK(e.master_port == 4242);
  v = kSlurm;
  v.erase("SLURM_STEP_NODELIST");
  v["SLURM_JOB_NODELIST"] = "cn1,cn2";
  CHECK(detect(v).master_addr == "cn1");
  v.erase("SLURM_JOB_NODELIST");
  CHECK(detect(v).master_addr == "10.1.1.1");  // last resort: the launch node
  v = kSlurm;
  v.erase("SLURM_NTASKS");
  v["SLURM_NPROCS"] = "16";  // older Slurm
  CHECK(detect(v).world == 16);
}

TEST_CASE("Slurm hostlists: first host", "[dist][env]") {
  using gaugelab::gpt2::slurm_first_host;
  CHECK(slurm_first_host("node07") == "node07");
  CHECK(slurm_first_host("a,b,c") == "a");
  CHECK(slurm_first_host("node[07-09,12],gpu3") == "node07");
  CHECK(slurm_first_host("node[12,3-4]") == "node12");
  CHECK(slurm_first_host("rack[1-2]-n[3-4]") == "rack1-n3");
  CHECK_THROWS_AS(slurm_first_host("node[1-2"), std::runtime_error);
  CHECK_THROWS_AS(slurm_first_host("node1-2]"), std::runtime_error);
  CHECK_THROWS_AS(slurm_first_host(""), std::runtime_error);
}

TEST_CASE("inconsistent launcher variables: one line naming the variable", "[dist][env]") {
  auto v = kTorchrun;
  v.erase("MASTER_PORT");
  CHECK(error_of(v).find("MASTER_PORT is not set") != std::string::npos);
  v = kTorchrun;
  v.erase("WORLD_SIZE");
  CHECK(error_of(v).find("WORLD_SIZE is not set") != std::string::npos);
  v = kTorchrun;
  v["RANK"] = "8";
  CHECK(error_of(v).find("RANK=8 is outside [0, WORLD_SIZE=8)") != std::string::npos);
  v = kTorchrun;
  v["WORLD_SIZE"] = "two";
  CHECK(error_of(v).find("WORLD_SIZE='two' is not an integer") != std::string::npos);
  v = kTorchrun;
  v["MASTER_PORT"] = "70000";
  CHECK(error_of(v).find("not a TCP port") != std::string::npos);
  v = kTorchrun;
  v["LOCAL_RANK"] = "-1";
  CHECK(error_of(v).find("LOCAL_RANK=-1") != std::string::npos);
  auto s = kSlurm;
  s.erase("SLURM_LOCALID");
  CHECK(error_of(s).find("SLURM_LOCALID is not set") != std::string::npos);
  s = kSlurm;
  s["SLURM_PROCID"] = "16";
  CHECK(error_of(s).find("SLURM_PROCID=16 is outside") != std::string::npos);
  s = kSlurm;
  s.erase("SLURM_STEP_NODELIST");
  s.erase("SLURM_LAUNCH_NODE_IPADDR");
  CHECK(error_of(s).find("no master address") != std::string::npos);
  for (const auto& bad : {kTorchrun, kSlurm}) {
    auto b = bad;
    b[bad.count("RANK") ? "RANK" : "SLURM_PROCID"] = "x";
    const std::string msg = error_of(b);
    CHECK(!msg.empty());
    CHECK(msg.find('\n') == std::string::npos);
  }
}

TEST_CASE("a failed collective's line names the rank that failed it", "[dist][env]") {
  using gaugelab::gpt2::collective_failure;
  using gaugelab::gpt2::PeerFault;
  const std::string where = "data parallel (gloo, rank 0/2)";
  // Gloo's words when the peer's process is gone (its socket closed), with Gloo's source location.
  const std::string closed = "[../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [127.0.0.1]:41234";
  auto f = collective_failure(where, 0, 2, "gradient all-reduce", 5, closed);
  CHECK(std::string(f.what()) ==
        "data parallel (gloo, rank 0/2): gradient all-reduce failed: rank 1 is gone (its connection closed; timeout 5 s): "
        "Connection closed by peer [127.0.0.1]:41234");
  CHECK(f.lost_rank() == 1);
  CHECK(f.fault() == PeerFault::closed);
  // Rank 1 of 2 names rank 0; a reset connection and a broken pipe are a gone peer too.
  f = collective_failure("data parallel (gloo, rank 1/2)", 1, 2, "barrier", 2.5,
                         "Read error [127.0.0.1]:29500: Connection reset by peer");
  CHECK(std::string(f.what()).find("barrier failed: rank 0 is gone (its connection closed; timeout 2.5 s): Read error") !=
        std::string::npos);
  CHECK(f.lost_rank() == 0);
  // c10d's advice after Gloo's words is dropped (the line says what happened instead).
  f = collective_failure(where, 0, 2, "gradient all-reduce", 5,
                         "Read error [127.0.0.1]:29915: Connection reset by peer. This is typically caused by a remote "
                         "worker hanging or bugs in the application. Check the logs of the remote worker before "
                         "reporting an error.");
  CHECK(std::string(f.what()) == where + ": gradient all-reduce failed: rank 1 is gone (its connection closed; "
                                         "timeout 5 s): Read error [127.0.0.1]:29915: Connection reset by peer");
  CHECK(collective_failure(where, 0, 2, "broadcast", 1, "Write error [::1]:7: Broken pipe").fault() == PeerFault::closed);
  // A peer that never took part: named as late, not as gone.
  f = collective_failure(where, 0, 2, "scalar all-reduce", 3, "Timed out waiting 3000ms for recv operation to complete");
  CHECK(std::string(f.what()).find("rank 1 did not take part within the timeout (stuck, or dead with its connection "
                                   "open; timeout 3 s)") != std::string::npos);
  CHECK(f.fault() == PeerFault::timed_out);
  // More than 2 ranks without a roll call: Gloo names the peer by address only, so no rank is named, and the
  // line says why.
  f = collective_failure("data parallel (gloo, rank 2/4)", 2, 4, "gradient all-reduce", 5, closed);
  CHECK(!f.lost_rank().has_value());
  CHECK(std::string(f.what()).find("a rank is gone (a connection closed; the backend names the peer by address, not by "
                                   "rank; timeout 5 s): Connection closed by peer [127.0.0.1]:41234") != std::string::npos);
  // Anything else: no rank named, the backend's words kept.
  f = collective_failure(where, 0, 2, "barrier", 5, "invalid argument");
  CHECK(!f.lost_rank().has_value());
  CHECK(f.fault() == PeerFault::unknown);
  CHECK(std::string(f.what()) == where + ": barrier failed: a rank dead, missing or stuck? (timeout 5 s): invalid argument");
  for (const auto* m : {closed.c_str(), "Timed out", "x"})
    CHECK(std::string(collective_failure(where, 0, 2, "barrier", 5, m).what()).find('\n') == std::string::npos);
}

TEST_CASE("with more than 2 ranks the roll call names the rank that failed a collective", "[dist][env]") {
  using gaugelab::gpt2::collective_failure;
  using gaugelab::gpt2::PeerFault;
  using gaugelab::gpt2::RollCall;
  const std::string closed = "Connection closed by peer [127.0.0.1]:41234";
  // Rank 2 never answered: it is named, and the line says how it was learnt.
  RollCall roll{true, 2.5, {2}, false, false};
  auto f = collective_failure("data parallel (gloo, rank 0/3)", 0, 3, "gradient all-reduce", 5, closed, roll);
  CHECK(std::string(f.what()) ==
        "data parallel (gloo, rank 0/3): gradient all-reduce failed: rank 2 is gone (a connection closed, and it did "
        "not answer at the rendezvous store within 2.5 s; timeout 5 s): Connection closed by peer [127.0.0.1]:41234");
  CHECK(f.lost_rank() == 2);
  CHECK(f.fault() == PeerFault::closed);
  // The store does not answer: its host, rank 0, is the one lost (whatever the roll had heard before).
  roll = RollCall{true, 2.5, {}, true, false};
  f = collective_failure("data parallel (gloo, rank 1/3)", 1, 3, "barrier", 5, closed, roll);
  CHECK(std::string(f.what()).find("barrier failed: rank 0 is gone (a connection closed, and the rendezvous store it "
                                   "serves does not answer; timeout 5 s): Connection closed") != std::string::npos);
  CHECK(f.lost_rank() == 0);
  // Several missing: all named, and lost_rank() names none. One closed connection says one rank is gone; another
  // may be alive and busy between collectives (answering only at its next one), so none is called gone and the
  // fault is one whose hint asks to stop every rank first.
  roll = RollCall{true, 1, {1, 3}, false, false};
  f = collective_failure("data parallel (gloo, rank 0/4)", 0, 4, "broadcast", 2, closed, roll);
  CHECK(std::string(f.what()).find("broadcast failed: ranks 1 and 3 did not answer: gone, or alive and busy between "
                                   "collectives (a connection closed, and they did not answer at the rendezvous store "
                                   "within 1 s; any that lives must be stopped; timeout 2 s)") != std::string::npos);
  CHECK(f.lost_ranks() == std::vector<int>{1, 3});
  CHECK(!f.lost_rank().has_value());
  CHECK(f.fault() == PeerFault::timed_out);
  roll.missing = {1, 2, 3};
  CHECK(std::string(collective_failure("data parallel (gloo, rank 0/5)", 0, 5, "barrier", 2, closed, roll).what())
            .find("ranks 1, 2 and 3 did not answer") != std::string::npos);
  // This rank saw a connection close, but a rank that answered timed out waiting: the missing rank may be
  // alive and stuck, so it is named as late, and the hint will ask to stop every rank first.
  roll = RollCall{true, 2.5, {2}, false, true};
  f = collective_failure("data parallel (gloo, rank 1/3)", 1, 3, "gradient all-reduce", 5, closed, roll);
  CHECK(std::string(f.what()).find("rank 2 did not take part within the timeout (stuck, or dead with its connection "
                                   "open; it did not answer at the rendezvous store within 2.5 s; timeout 5 s)") !=
        std::string::npos);
  CHECK(f.fault() == PeerFault::timed_out);
  CHECK(f.lost_rank() == 2);
  // Every rank answered: nothing to name, and no rank is called gone.
  roll = RollCall{true, 2.5, {}, false, false};
  f = collective_failure("data parallel (gloo, rank 1/3)", 1, 3, "barrier", 5, closed, roll);
  CHECK(std::string(f.what()).find("barrier failed: a connection closed, yet every rank answered at the rendezvous "
                                   "store (a rank late but alive, or an error of this rank's own; timeout 5 s)") !=
        std::string::npos);
  CHECK(f.lost_ranks().empty());
  CHECK(f.fault() == PeerFault::timed_out);
  // With 2 ranks the other one is named without a roll call, as before.
  CHECK(collective_failure("data parallel (gloo, rank 0/2)", 0, 2, "barrier", 5, closed, RollCall{}).lost_rank() == 1);
  // The window: half the timeout, at most 3 s.
  CHECK(gaugelab::gpt2::roll_call_window_s(5) == 2.5);
  CHECK(gaugelab::gpt2::roll_call_window_s(600) == gaugelab::gpt2::kRollCallMaxS);
}

TEST_CASE("backend choice", "[dist][env]") {
  using gaugelab::gpt2::DistBackend;
  using gaugelab::gpt2::resolve_backend;
  CHECK(resolve_backend(DistBackend::automatic, c10::Device("cpu")) == DistBackend::gloo);
  CHECK(resolve_backend(DistBackend::automatic, c10::Device("cuda:1")) == DistBackend::nccl);
  CHECK(resolve_backend(DistBackend::gloo, c10::Device("cuda:0")) == DistBackend::gloo);
  CHECK_THROWS_AS(resolve_backend(DistBackend::nccl, c10::Device("cpu")), std::runtime_error);
  // --dist-backend's words: the table refuses any other
  CHECK(gaugelab::core::parse_choice(gaugelab::gpt2::dist_backend_choices(), "auto", "--dist-backend") ==
        DistBackend::automatic);
  CHECK_THROWS_AS(gaugelab::core::parse_choice(gaugelab::gpt2::dist_backend_choices(), "mpi", "--dist-backend"),
                  std::invalid_argument);
}

TEST_CASE("a single process: every collective is the identity", "[dist][env]") {
  DistEnv e;
  e.source = "single";
  auto dp = gaugelab::gpt2::DataParallel::create(e, gaugelab::gpt2::DistBackend::automatic, c10::Device("cpu"), 1.0);
  CHECK(dp->rank() == 0);
  CHECK(dp->world() == 1);
  CHECK(!dp->backend().has_value());  // no backend: no group
  at::Tensor p = at::ones({3});
  p.mutable_grad() = at::full({3}, 2.0);
  dp->broadcast_parameters({p});
  dp->average_gradients({p});
  CHECK(p.grad().sum().item<double>() == 6.0);
  CHECK(dp->all_reduce_mean(2.5) == 2.5);
  dp->barrier();
  const auto automatic = gaugelab::gpt2::DistBackend::automatic;
  CHECK_THROWS_AS(gaugelab::gpt2::DataParallel::create(e, automatic, c10::Device("cpu"), 0.0), std::runtime_error);
  CHECK_THROWS_AS(gaugelab::gpt2::DataParallel::create(e, automatic, c10::Device("cpu"), 1.0, 0), std::runtime_error);
}

}  // namespace GAUGELAB_TU
