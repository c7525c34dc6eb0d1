// Finding and loading the CUDA half (cuda_side.hpp). Candidates, in order: GAUGELAB_CUDA_SIDE (a file), beside the
// executable (/proc/self/exe), beside the shared object this code is linked into where that is not the executable,
// the build directory it was built in (tests live one folder down). dlopen with RTLD_GLOBAL: LibTorch's CUDA
// libraries then serve the whole process, as when linked. Built with GAUGELAB_CUDA_AT_START the half is linked and
// taken as loaded.
#include "gpt2/model/cuda_side.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <ATen/Context.h>

#ifndef GAUGELAB_CUDA_SIDE_DIR
#define GAUGELAB_CUDA_SIDE_DIR ""
#endif

namespace gaugelab::gpt2 {

namespace {

constexpr const char* kFile = "libgaugelab_cuda.so";
// The entry point's name carries the interface's version: a library of another build is refused, never called
// through another vtable.
constexpr const char* kEntry = "gaugelab_cuda_side_v1";

struct Loaded {
  void* handle = nullptr;
  const CudaSide* side = nullptr;
  std::string error;  // why it did not load (kept: every later use reports it)
};

[[maybe_unused]] std::vector<std::string> candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("GAUGELAB_CUDA_SIDE"); env != nullptr && *env != '\0') return {env};
  auto beside = [&out](const std::filesystem::path& file) {
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::canonical(file, ec);
    if (ec) return;
    const std::string path = (self.parent_path() / kFile).string();
    if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(path);
  };
  beside("/proc/self/exe");  // dladdr names the executable by its argv[0], which may be relative or bare
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&cuda_side_symbol), &info) != 0 && info.dli_fname != nullptr &&
      info.dli_fname[0] == '/')
    beside(info.dli_fname);  // a shared object holding the tier
  if (*GAUGELAB_CUDA_SIDE_DIR != '\0') {
    const std::string path = (std::filesystem::path(GAUGELAB_CUDA_SIDE_DIR) / kFile).string();
    if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(path);
  }
  return out;
}

#ifdef GAUGELAB_CUDA_AT_START
}  // namespace
}  // namespace gaugelab::gpt2
extern "C" const gaugelab::gpt2::CudaSide* gaugelab_cuda_side_v1();  // linked: a real reference keeps it linked
namespace gaugelab::gpt2 {
namespace {
#endif

Loaded load() {
  Loaded l;
#ifdef GAUGELAB_CUDA_AT_START
  l.handle = ::dlopen(nullptr, RTLD_NOW);  // the process's global scope: the linked half's symbols
  l.side = gaugelab_cuda_side_v1();
  return l;
#else
  std::string tried;
  for (const std::string& path : candidates()) {
    tried += (tried.empty() ? "" : ", ") + path;
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) continue;
    l.handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (l.handle == nullptr) {
      const char* e = ::dlerror();
      l.error = "cannot load the CUDA half " + path + ": " + (e != nullptr ? e : "unknown dlopen error");
      return l;
    }
    using Entry = const CudaSide* (*)();
    auto entry = reinterpret_cast<Entry>(::dlsym(l.handle, kEntry));
    if (entry == nullptr) {
      l.error = "the CUDA half " + path + " has no entry point " + kEntry + " (a library of another build?)";
      return l;
    }
    l.side = entry();
    return l;
  }
  l.error = "the CUDA half (" + std::string(kFile) + ") is not built or not found (looked at: " +
            (tried.empty() ? std::string("nothing") : tried) + "; GAUGELAB_CUDA_SIDE names it)";
  return l;
#endif
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

bool driver_visible() {
  if (const char* env = std::getenv("GAUGELAB_LOAD_CUDA"); env != nullptr && *env != '\0')
    return std::string(env) != "0";
  std::error_code ec;
  for (const char* f : {"/dev/nvidiactl", "/proc/driver/nvidia/version", "/dev/dxg"})
    if (std::filesystem::exists(f, ec)) return true;
  return false;
}

// Where a driver is visible, the CUDA half loads before main(): LibTorch answers "is there CUDA?" once per process
// and caches a "no" asked before libtorch_cuda.so is in (at::detail::getCUDAHooks). A failure is kept for the first
// use to report; nothing is printed here.
[[maybe_unused]] const bool kLoadedAtStart = [] {
  if (driver_visible()) (void)loaded();
  return true;
}();

}  // namespace

const CudaSide& cuda_side() {
  const Loaded& l = loaded();
  if (l.side == nullptr) throw std::runtime_error(l.error);
  return *l.side;
}

const CudaKernels& cuda_kernel_table() {
  const CudaKernels* k = cuda_side().kernels();
  if (k == nullptr)
    throw std::logic_error("the CUDA half was built without our kernels (no CUDA compiler when CMake ran): run with "
                           "the ATen path (--ln-kernel, --lrm-kernel, --lm-head-kernel aten)");
  return *k;
}

void* cuda_side_symbol(const char* name) {
  (void)cuda_side();
  void* s = ::dlsym(loaded().handle, name);
  if (s == nullptr) {
    (void)::dlerror();  // cleared: the message is ours
    throw std::runtime_error(std::string("the CUDA half has no symbol ") + name);
  }
  return s;
}

bool cuda_present() {
  if (!driver_visible()) return false;
  (void)cuda_side();
  return at::hasCUDA();
}

}  // namespace gaugelab::gpt2
