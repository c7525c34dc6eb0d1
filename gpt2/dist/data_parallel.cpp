// DataParallel over c10d: TCPStore rendezvous, a Gloo or NCCL Backend, bucketed collectives.
//
// How the Gloo backend is reached (see gpt2/README.md, "Data parallelism"): the torch wheel ships
// c10d's ProcessGroupGloo.hpp and the Gloo code inside libtorch_cpu.so, but not the gloo/ headers
// that ProcessGroupGloo.hpp includes, and libtorch exports no backend factory that would avoid the
// class. We take the declarations from Debian's libgloo-dev (scripts/install-deps.sh) and never link
// Debian's libgloo. That package is an older Gloo than the wheel's; what this TU depends on agrees:
//   - ProcessGroupGloo's data members are smart pointers, containers and scalars (no Gloo object by
//     value), so sizeof(ProcessGroupGloo) — what make_intrusive allocates here — is the library's;
//   - every Gloo call (the constructor, Options::create_default, the collectives) is out of line in
//     libtorch_cpu.so and reached through c10d::Backend's vtable, emitted there (its key function,
//     ~ProcessGroupGloo, is out of line);
//   - the one class whose layout does differ, ProcessGroupGloo::GlooStore (the wheel's Gloo has the
//     "store v2" virtuals, Debian's does not, so GLOO_STORE_HAS_STORE_V2 is unset here), is never
//     constructed or called here, so no vtable or inline member of it is emitted into our object.
// tests/dist checks the last point on the built archive: no weak gloo:: or GlooStore symbol in it.
// The NCCL backend's construction lives in data_parallel_nccl.cpp (it needs the CUDA headers).
#if __has_include(<gloo/algorithm.h>)
#ifndef USE_C10D_GLOO  // Torch's CMake config usually defines it already
#define USE_C10D_GLOO  // the wheel is built with Gloo (torch.__config__: USE_GLOO=ON)
#endif
#define GAUGELAB_HAVE_GLOO 1
#else
#define GAUGELAB_HAVE_GLOO 0
#endif

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include <ATen/core/grad_mode.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <ATen/ops/zeros_like.h>
#include <c10/util/Exception.h>
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
#if GAUGELAB_HAVE_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif

#include "gpt2/dist/data_parallel.hpp"
#include "gpt2/dist/dist_failure.hpp"
#include "gpt2/dist/roll_call.hpp"
#include "gpt2/model/cuda_side.hpp"

namespace gaugelab::gpt2 {

namespace detail {
// data_parallel_nccl.cpp, built into the CUDA half (gpt2/model/cuda_side.hpp) and looked up there by name: sets *out
// to a ProcessGroupNCCL bound to `device`, or throws a runtime_error when this build has no NCCL headers / the NCCL
// header differs from the one libtorch_cuda was built with.
using MakeNcclBackend = void (*)(const c10::intrusive_ptr<c10d::Store>* store, int rank, int world, c10::Device device,
                                 std::int64_t timeout_ms, c10::intrusive_ptr<c10d::Backend>* out);
}  // namespace detail

namespace {

/// The first line of an exception's message, without c10's backtrace.
std::string first_line(const std::exception& e) {
  std::string msg;
  if (const auto* ce = dynamic_cast<const c10::Error*>(&e)) msg = ce->what_without_backtrace();
  else msg = e.what();
  const auto nl = msg.find('\n');
  if (nl != std::string::npos) msg.resize(nl);
  return msg;
}

/// Tensors of one dtype laid end to end in a flat buffer on the communication device.
struct Bucket {
  at::ScalarType dtype = at::kFloat;
  std::vector<std::size_t> index;       // positions in the parameter list
  std::vector<std::int64_t> offset;     // element offsets in `flat`
  std::int64_t numel = 0;
  at::Tensor flat;                      // [numel] on the communication device
};

}  // namespace

struct DataParallel::Impl {
  int rank = 0;
  int world = 1;
  std::optional<DistBackend> backend;  // none for a single process
  c10::Device device{c10::kCPU};
  c10::Device comm_device{c10::kCPU};  // where buckets live: the CPU for Gloo, the GPU for NCCL
  std::chrono::milliseconds timeout{0};
  std::int64_t bucket_bytes = kDefaultBucketBytes;
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::Backend> pg;  // null for a single process
  int last_buckets = 0;

  // Bucket plan for the last parameter list seen (rebuilt when shapes/dtypes change).
  std::vector<std::pair<std::int64_t, at::ScalarType>> plan_key;
  std::vector<Bucket> buckets;

  std::string where() const {
    return std::string("data parallel (") + (backend ? word(*backend) : "none") + ", rank " + std::to_string(rank) +
           "/" + std::to_string(world) + ")";
  }

  std::optional<DistFailure> failed;  // the first failed collective: the group is unusable after it

  /// True for a single process (every method is then the identity); a group whose collective failed
  /// throws that failure again.
  bool alone() const {
    if (failed) throw *failed;
    return !pg;
  }

  /// A failed collective as one line naming the rank that failed it (dist_failure.hpp). With more than 2
  /// Gloo ranks the backend's message does not say which rank, so this rank first closes its connections
  /// (the process group goes), which makes every survivor blocked on it fail at once too, and then holds
  /// the roll call at the rendezvous store with them (roll_call.hpp).
  DistFailure failure(const char* op, const std::string& message) {
    if (failed) return *failed;
    const double timeout_s = timeout.count() / 1000.0;
    RollCall roll;
    if (world > 2 && backend == DistBackend::gloo && store) {
      pg.reset();
      try {
        roll = roll_call(store, rank, world, classify_peer_fault(message), roll_call_window_s(timeout_s));
      } catch (const std::exception&) {
        roll = RollCall{};  // no roll call (e.g. no thread for it): the line names no rank, the failure stands
      }
    }
    failed = collective_failure(where(), rank, world, op, timeout_s, message, roll);
    return *failed;
  }

  /// Starts a collective with `start` and waits for it. A failure (thrown, or not finished within the
  /// timeout) is thrown as DistFailure once the work is released: a Gloo work holds its context, whose
  /// connections must close for the others to fail at once too.
  template <class Start>
  void run(const char* op, Start&& start) {
    std::string error;
    try {
      const c10::intrusive_ptr<c10d::Work> work = start();
      if (!work->wait(timeout)) error = "Timed out: the operation did not finish";
    } catch (const std::exception& e) {
      error = first_line(e);
    }
    if (!error.empty()) throw failure(op, error);
  }

  void all_reduce_sum(at::Tensor& t, const char* op) { all_reduce(t, c10d::ReduceOp::SUM, op); }

  void all_reduce(at::Tensor& t, c10d::ReduceOp::RedOpType red, const char* op) {  // t on comm_device, in place
    std::vector<at::Tensor> v{t};
    c10d::AllreduceOptions o;
    o.reduceOp = c10d::ReduceOp(red);
    o.timeout = timeout;
    run(op, [&] { return pg->allreduce(v, o); });
  }

  void broadcast0(at::Tensor& t) {
    std::vector<at::Tensor> v{t};
    c10d::BroadcastOptions o;
    o.rootRank = 0;
    o.rootTensor = 0;
    o.timeout = timeout;
    run("broadcast", [&] { return pg->broadcast(v, o); });
  }

  void plan(const std::vector<at::Tensor>& params) {
    std::vector<std::pair<std::int64_t, at::ScalarType>> key;
    key.reserve(params.size());
    for (const auto& p : params) key.emplace_back(p.numel(), p.scalar_type());
    if (key == plan_key && !buckets.empty()) return;
    plan_key = key;
    buckets.clear();
    // Fill one open bucket per dtype in list order; close it when the next tensor would overflow it.
    std::vector<Bucket> open;
    for (std::size_t i = 0; i < params.size(); ++i) {
      const auto dt = params[i].scalar_type();
      const std::int64_t n = params[i].numel();
      const std::int64_t bytes = n * static_cast<std::int64_t>(c10::elementSize(dt));
      auto it = std::find_if(open.begin(), open.end(), [&](const Bucket& b) { return b.dtype == dt; });
      if (it != open.end() && it->numel > 0 &&
          (it->numel * static_cast<std::int64_t>(c10::elementSize(dt)) + bytes > bucket_bytes)) {
        buckets.push_back(std::move(*it));
        open.erase(it);
        it = open.end();
      }
      if (it == open.end()) {
        open.emplace_back();
        open.back().dtype = dt;
        it = std::prev(open.end());
      }
      it->index.push_back(i);
      it->offset.push_back(it->numel);
      it->numel += n;
    }
    for (auto& b : open) buckets.push_back(std::move(b));
    for (auto& b : buckets)
      b.flat = at::empty({b.numel}, at::TensorOptions().dtype(b.dtype).device(comm_device));
  }
};

namespace {

/// A rank of a group writes to its peers' sockets; Gloo writes with writev, which has no MSG_NOSIGNAL, so a write to
/// a rank that has died raises SIGPIPE, whose default action ends this rank at once: it would die without the line
/// that names the lost rank (a race: usually the reset is read first). Python ignores SIGPIPE at start-up, which is
/// why torchrun's Python ranks never meet it; a rank here does the same once it joins a group, leaving alone a
/// handler that someone installed. A write to a closed socket or pipe then fails with EPIPE instead.
void ignore_broken_pipes() {
  struct sigaction now{};
  if (::sigaction(SIGPIPE, nullptr, &now) != 0 || now.sa_handler != SIG_DFL) return;
  struct sigaction ignore{};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  ::sigaction(SIGPIPE, &ignore, nullptr);
}

}  // namespace

DataParallel::DataParallel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DataParallel::~DataParallel() = default;

int DataParallel::rank() const { return impl_->rank; }
int DataParallel::world() const { return impl_->world; }
std::optional<DistBackend> DataParallel::backend() const { return impl_->backend; }
int DataParallel::last_bucket_count() const { return impl_->last_buckets; }

std::unique_ptr<DataParallel> DataParallel::create(const DistEnv& env, DistBackend backend,
                                                   c10::Device device, double timeout_s,
                                                   std::int64_t bucket_bytes) {
  if (!(timeout_s > 0) || !std::isfinite(timeout_s))
    throw std::runtime_error("data parallel: timeout must be a positive number of seconds, not " +
                             std::to_string(timeout_s));
  if (bucket_bytes <= 0)
    throw std::runtime_error("data parallel: bucket size must be positive, not " + std::to_string(bucket_bytes));
  auto impl = std::make_unique<Impl>();
  impl->rank = env.rank;
  impl->world = env.world;
  impl->device = device;
  impl->timeout = std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(timeout_s * 1000.0)));
  impl->bucket_bytes = bucket_bytes;
  if (env.source == "single") {
    if (env.world != 1 || env.rank != 0)
      throw std::runtime_error("data parallel: a 'single' environment must be rank 0 of 1");
    return std::unique_ptr<DataParallel>(new DataParallel(std::move(impl)));
  }
  if (env.world < 1 || env.rank < 0 || env.rank >= env.world)
    throw std::runtime_error("data parallel: rank " + std::to_string(env.rank) + " outside world " +
                             std::to_string(env.world));
  impl->backend = resolve_backend(backend, device);
  ignore_broken_pipes();
  impl->comm_device = impl->backend == DistBackend::nccl ? device : c10::Device(c10::kCPU);
  const std::string rendezvous = env.master_addr + ":" + std::to_string(env.master_port);

  try {
    c10d::TCPStoreOptions o;
    o.port = static_cast<std::uint16_t>(env.master_port);
    o.isServer = env.rank == 0;
    o.numWorkers = static_cast<std::size_t>(env.world);
    o.waitWorkers = true;  // rank 0 returns only once every rank has connected (or the timeout)
    o.timeout = impl->timeout;
    impl->store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, o);
  } catch (const std::exception& e) {
    throw std::runtime_error(impl->where() + ": rendezvous at " + rendezvous + " failed within " +
                             seconds_words(timeout_s) + " (every rank started? same " +
                             "MASTER_ADDR/MASTER_PORT?): " + first_line(e));
  }

  try {
    if (impl->backend == DistBackend::gloo) {
#if GAUGELAB_HAVE_GLOO
      // create_default binds to the interfaces in GLOO_SOCKET_IFNAME if set, else to the address
      // this host's name resolves to (loopback when it resolves to nothing): torch's own default.
      auto opts = c10d::ProcessGroupGloo::Options::create_default(impl->timeout);
      opts->timeout = impl->timeout;
      impl->pg = c10::make_intrusive<c10d::ProcessGroupGloo>(impl->store, env.rank, env.world, opts);
#else
      throw std::runtime_error("this build has no Gloo headers (install libgloo-dev and rebuild)");
#endif
    } else {
      const auto make = reinterpret_cast<detail::MakeNcclBackend>(cuda_side_symbol("gaugelab_make_nccl_backend"));
      make(&impl->store, env.rank, env.world, device, impl->timeout.count(), &impl->pg);
    }
  } catch (const std::exception& e) {
    throw std::runtime_error(impl->where() + ": creating the process group via " + rendezvous +
                             " failed: " + first_line(e));
  }
  return std::unique_ptr<DataParallel>(new DataParallel(std::move(impl)));
}

void DataParallel::broadcast_parameters(const std::vector<at::Tensor>& params) {
  Impl& m = *impl_;
  if (m.alone() || params.empty()) {  // every rank has the same list, so every rank skips alike
    m.last_buckets = 0;
    return;
  }
  at::NoGradGuard no_grad;
  m.plan(params);
  for (auto& b : m.buckets) {
    if (m.rank == 0)
      for (std::size_t j = 0; j < b.index.size(); ++j) {
        const at::Tensor& p = params[b.index[j]];
        b.flat.narrow(0, b.offset[j], p.numel()).copy_(p.reshape({-1}));
      }
    m.broadcast0(b.flat);
    for (std::size_t j = 0; j < b.index.size(); ++j) {
      const at::Tensor& p = params[b.index[j]];
      p.copy_(b.flat.narrow(0, b.offset[j], p.numel()).view(p.sizes()));
    }
  }
  m.last_buckets = static_cast<int>(m.buckets.size());
}

void DataParallel::average_gradients(const std::vector<at::Tensor>& params) {
  Impl& m = *impl_;
  if (m.alone() || params.empty()) {  // every rank has the same list, so every rank skips alike
    m.last_buckets = 0;
    return;
  }
  at::NoGradGuard no_grad;
  m.plan(params);
  // Which parameters have a gradient on some rank: [n] counts of ranks that had one.
  at::Tensor has = at::empty({static_cast<std::int64_t>(params.size())},
                             at::TensorOptions().dtype(at::kFloat).device(c10::kCPU));
  float* flag = has.data_ptr<float>();
  for (std::size_t i = 0; i < params.size(); ++i) flag[i] = params[i].grad().defined() ? 1.0f : 0.0f;
  at::Tensor has_c = has.to(m.comm_device);
  m.all_reduce_sum(has_c, "gradient presence all-reduce");
  has = has_c.to(c10::kCPU);
  const float* counts = has.data_ptr<float>();

  const double inv_world = 1.0 / m.world;
  for (auto& b : m.buckets) {
    for (std::size_t j = 0; j < b.index.size(); ++j) {
      const at::Tensor& p = params[b.index[j]];
      at::Tensor slot = b.flat.narrow(0, b.offset[j], p.numel());
      const at::Tensor& g = p.grad();
      if (g.defined()) slot.copy_(g.reshape({-1}));
      else slot.zero_();
    }
    m.all_reduce_sum(b.flat, "gradient all-reduce");
    b.flat.mul_(inv_world);
    for (std::size_t j = 0; j < b.index.size(); ++j) {
      const at::Tensor& p = params[b.index[j]];
      if (counts[b.index[j]] == 0.0f) continue;  // no rank had a gradient: leave it undefined
      at::Tensor& g = p.mutable_grad();
      if (!g.defined()) g = at::zeros_like(p);
      g.copy_(b.flat.narrow(0, b.offset[j], p.numel()).view(g.sizes()));
    }
  }
  m.last_buckets = static_cast<int>(m.buckets.size());
}

double DataParallel::all_reduce_mean(double value) {
  Impl& m = *impl_;
  if (m.alone()) return value;
  at::Tensor t = at::empty({1}, at::TensorOptions().dtype(at::kDouble).device(c10::kCPU));
  t.data_ptr<double>()[0] = value;
  at::Tensor tc = t.to(m.comm_device);
  m.all_reduce_sum(tc, "scalar all-reduce");
  return tc.to(c10::kCPU).item<double>() / m.world;
}

void DataParallel::all_reduce_max(at::Tensor& t) {
  Impl& m = *impl_;
  if (m.alone()) return;
  at::Tensor tc = t.to(m.comm_device, /*non_blocking=*/false, /*copy=*/true);
  m.all_reduce(tc, c10d::ReduceOp::MAX, "max all-reduce");
  t.copy_(tc.to(t.device()));
}

void DataParallel::barrier() {
  Impl& m = *impl_;
  if (m.alone()) return;
  // An all-reduce of one element: every rank must arrive, on either backend, without c10d's barrier
  // guessing a GPU for NCCL.
  at::Tensor t = at::zeros({1}, at::TensorOptions().dtype(at::kFloat).device(m.comm_device));
  m.all_reduce_sum(t, "barrier");
}

}  // namespace gaugelab::gpt2
