// Rank and world from the launcher's environment (torchrun, Slurm, or none). No c10d here.
#include <cerrno>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include <c10/core/DeviceType.h>

#include "gpt2/dist/data_parallel.hpp"

namespace gaugelab::gpt2 {
namespace {

using Lookup = std::function<std::optional<std::string>(const std::string&)>;

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error("distributed environment: " + what);
}

std::string require(const Lookup& env, const std::string& name, const std::string& launcher) {
  auto v = env(name);
  if (!v || v->empty()) fail(name + " is not set although this looks like a " + launcher + " launch");
  return *v;
}

long parse_int(const std::string& name, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE || v < -(1L << 30) ||
      v > (1L << 30))
    fail(name + "='" + text + "' is not an integer");
  return v;
}

void check(DistEnv& e, const std::string& rank_var, const std::string& world_var,
           const std::string& local_var) {
  if (e.world < 1) fail(world_var + "=" + std::to_string(e.world) + " must be at least 1");
  if (e.rank < 0 || e.rank >= e.world)
    fail(rank_var + "=" + std::to_string(e.rank) + " is outside [0, " + world_var + "=" +
         std::to_string(e.world) + ")");
  if (e.local_rank < 0 || e.local_rank >= e.world)
    fail(local_var + "=" + std::to_string(e.local_rank) + " is outside [0, " + std::to_string(e.world) + ")");
  if (e.master_addr.empty()) fail("no master address (set MASTER_ADDR)");
  if (e.master_port < 1 || e.master_port > 65535)
    fail("MASTER_PORT=" + std::to_string(e.master_port) + " is not a TCP port (1..65535)");
}

DistEnv from_torchrun(const Lookup& env) {
  const std::string L = "torchrun";
  DistEnv e;
  e.source = "torchrun";
  e.rank = static_cast<int>(parse_int("RANK", require(env, "RANK", L)));
  e.world = static_cast<int>(parse_int("WORLD_SIZE", require(env, "WORLD_SIZE", L)));
  e.local_rank = static_cast<int>(parse_int("LOCAL_RANK", require(env, "LOCAL_RANK", L)));
  e.master_addr = require(env, "MASTER_ADDR", L);
  e.master_port = static_cast<int>(parse_int("MASTER_PORT", require(env, "MASTER_PORT", L)));
  check(e, "RANK", "WORLD_SIZE", "LOCAL_RANK");
  return e;
}

DistEnv from_slurm(const Lookup& env) {
  const std::string L = "Slurm";
  DistEnv e;
  e.source = "slurm";
  e.rank = static_cast<int>(parse_int("SLURM_PROCID", require(env, "SLURM_PROCID", L)));
  auto ntasks = env("SLURM_NTASKS");
  if (!ntasks || ntasks->empty()) ntasks = env("SLURM_NPROCS");  // older Slurm
  if (!ntasks || ntasks->empty()) fail("SLURM_NTASKS is not set although SLURM_PROCID is");
  e.world = static_cast<int>(parse_int("SLURM_NTASKS", *ntasks));
  e.local_rank = static_cast<int>(parse_int("SLURM_LOCALID", require(env, "SLURM_LOCALID", L)));
  if (auto a = env("MASTER_ADDR"); a && !a->empty()) {
    e.master_addr = *a;
  } else {
    for (const char* var : {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"}) {
      if (auto l = env(var); l && !l->empty()) {
        e.master_addr = slurm_first_host(*l);
        break;
      }
    }
    if (e.master_addr.empty())
      if (auto ip = env("SLURM_LAUNCH_NODE_IPADDR"); ip && !ip->empty()) e.master_addr = *ip;
  }
  if (auto p = env("MASTER_PORT"); p && !p->empty()) {
    e.master_port = static_cast<int>(parse_int("MASTER_PORT", *p));
  } else {
    long job = 0;
    if (auto j = env("SLURM_JOB_ID"); j && !j->empty()) job = parse_int("SLURM_JOB_ID", *j);
    e.master_port = kSlurmPortBase + static_cast<int>(((job % kSlurmPortSpan) + kSlurmPortSpan) % kSlurmPortSpan);
  }
  check(e, "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID");
  return e;
}

}  // namespace

std::string slurm_first_host(const std::string& nodelist) {
  // The first entry ends at the first comma outside brackets; inside each bracket group keep the
  // first element of the first range ("07" of "07-09,12").
  std::string out;
  int depth = 0;
  bool skipping = false;  // inside a bracket group, past its first element
  for (char ch : nodelist) {
    if (ch == '[') {
      if (depth++ != 0) fail("nested '[' in Slurm hostlist '" + nodelist + "'");
      skipping = false;
    } else if (ch == ']') {
      if (depth-- != 1) fail("unbalanced ']' in Slurm hostlist '" + nodelist + "'");
    } else if (depth == 1) {
      if (ch == '-' || ch == ',') skipping = true;
      else if (!skipping) out += ch;
    } else if (ch == ',') {
      break;
    } else {
      out += ch;
    }
  }
  if (depth != 0) fail("unbalanced '[' in Slurm hostlist '" + nodelist + "'");
  if (out.empty()) fail("empty Slurm hostlist '" + nodelist + "'");
  return out;
}

DistEnv detect_dist_env(const Lookup& env) {
  auto set = [&](const char* name) {
    auto v = env(name);
    return v && !v->empty();
  };
  if (set("RANK") || set("WORLD_SIZE")) return from_torchrun(env);
  if (set("SLURM_PROCID")) return from_slurm(env);
  DistEnv e;
  e.source = "single";
  return e;
}

DistEnv detect_dist_env() {
  return detect_dist_env([](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (!v) return std::nullopt;
    return std::string(v);
  });
}

DistBackend resolve_backend(DistBackend backend, c10::Device device) {
  if (backend == DistBackend::automatic) return device.is_cuda() ? DistBackend::nccl : DistBackend::gloo;
  if (backend == DistBackend::nccl && !device.is_cuda())
    throw std::runtime_error("data parallel: backend nccl needs a CUDA device, not '" + device.str() + "'");
  return backend;
}

}  // namespace gaugelab::gpt2
