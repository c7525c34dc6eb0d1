// Finding and loading the CUDA half (cuda_side.hpp). Candidates, in order: GAUGELAB_CUDA_SIDE (a file), beside the
// executable or shared object this code is linked into, the build directory it was built in (tests live one folder
// down). dlopen with RTLD_GLOBAL: LibTorch's CUDA libraries then serve the whole process, as when linked.
#include "gpt2/model/cuda_side.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
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

struct Loaded {
  void* handle = nullptr;
  const CudaSide* side = nullptr;
  std::string error;  // why it did not load (kept: every later use reports it)
};

std::vector<std::string> candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("GAUGELAB_CUDA_SIDE"); env != nullptr && *env != '\0') return {env};
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&cuda_side_symbol), &info) != 0 && info.dli_fname != nullptr) {
    std::error_code ec;
    const std::filesystem::path self = std::filesystem::canonical(info.dli_fname, ec);
    if (!ec) out.push_back((self.parent_path() / kFile).string());
  }
  if (*GAUGELAB_CUDA_SIDE_DIR != '\0') out.push_back((std::filesystem::path(GAUGELAB_CUDA_SIDE_DIR) / kFile).string());
  return out;
}

Loaded load() {
  Loaded l;
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
    auto entry = reinterpret_cast<Entry>(::dlsym(l.handle, "gaugelab_cuda_side"));
    if (entry == nullptr) {
      l.error = "the CUDA half " + path + " has no entry point gaugelab_cuda_side (a library of another version?)";
      return l;
    }
    l.side = entry();
    return l;
  }
  l.error = "the CUDA half (" + std::string(kFile) + ") is not built or not found (looked at: " +
            (tried.empty() ? std::string("nothing") : tried) + "; GAUGELAB_CUDA_SIDE names it)";
  return l;
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

void* cuda_side_symbol(const char* name) {
  (void)cuda_side();
  void* s = ::dlsym(loaded().handle, name);
  if (s == nullptr) throw std::runtime_error(std::string("the CUDA half has no symbol ") + name);
  return s;
}

bool cuda_present() {
  if (!driver_visible()) return false;
  (void)cuda_side();
  return at::hasCUDA();
}

}  // namespace gaugelab::gpt2
