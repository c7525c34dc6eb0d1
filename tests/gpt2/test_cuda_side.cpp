// The CUDA half (gpt2/model/cuda_side.hpp) on a machine without a GPU: the tier's processes start without
// libtorch_cuda.so, refuse --device cuda without loading it, and the first request of the half itself loads it, and
// with it LibTorch's CUDA kernels and our own. Its own process ([alone]): what is mapped before the first request must
// not depend on the cases run before it.
#include <fstream>
#include <sstream>
#include <string>

#include <ATen/core/dispatch/Dispatcher.h>

#include "gpt2/model/cuda_side.hpp"
#include "gpt2/model/kernel_path.hpp"
#include "gpt2/model/runtime.hpp"
#include "gpt2_catch.hpp"  // last: see there
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab::gpt2;

namespace {

// Whether a shared object whose file name contains `name` is mapped into this process.
bool mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  std::stringstream all;
  all << maps.rdbuf();
  return all.str().find(name) != std::string::npos;
}

}  // namespace

TEST_CASE("the CUDA half loads on the first CUDA request, with LibTorch's CUDA kernels and ours", "[gpt2][cuda][alone]") {
  if (mapped("libgaugelab_cuda.so")) {  // a driver is visible (or GAUGELAB_LOAD_CUDA=1, or linked at start)
    WARN("SKIPPED: the CUDA half loaded at start-up, as it must where a driver is visible");
    return;
  }
  // Nothing of CUDA at start, and a CUDA device asked for without a driver is refused in one line, loading nothing.
  CHECK_FALSE(mapped("libtorch_cuda.so"));
  CHECK_FALSE(c10::Dispatcher::singleton().findSchemaOrThrow("aten::add", "Tensor").hasKernelForDispatchKey(
      c10::DispatchKey::CUDA));
  CHECK_FALSE(cuda_present());
  CHECK_THROWS_WITH(parse_device("cuda"), Catch::Contains("no CUDA device is available"));
  CHECK_FALSE(mapped("libgaugelab_cuda.so"));
  CHECK_FALSE(mapped("libtorch_cuda.so"));

  // The CUDA half asked for (as a CUDA tensor reaching one of our kernels does): loaded, with libtorch_cuda.so.
  (void)cuda_side();
  CHECK(mapped("libgaugelab_cuda.so"));
  CHECK(mapped("libtorch_cuda.so"));
  // LibTorch's CUDA kernels registered with the dispatcher, as when linked
  CHECK(c10::Dispatcher::singleton().findSchemaOrThrow("aten::add", "Tensor").hasKernelForDispatchKey(
      c10::DispatchKey::CUDA));
  const CudaSide& side = cuda_side();
  CHECK(side.device_count() == 0);
  CHECK(&cuda_side() == &side);  // loaded once
  CHECK((side.kernels() != nullptr) == cuda_kernels_built());
  if (side.kernels() != nullptr) {
    const CudaKernels& k = *side.kernels();
    CHECK(k.lm_head_ce_rows_bf16 != nullptr);
    CHECK(k.lrm_weight.forward != nullptr);
    CHECK(k.lrm_weight.scratch_floats != nullptr);
    CHECK(k.lrm_weight.backward != nullptr);
    CHECK(k.add_layer_norm.forward != nullptr);
    CHECK(k.add_layer_norm.scratch_floats != nullptr);
    CHECK(k.add_layer_norm.backward != nullptr);
  }
  CHECK(side.error_text(2).rfind("cudaErrorMemoryAllocation (", 0) == 0);
  CHECK(cuda_side_symbol("gaugelab_make_nccl_backend") != nullptr);
  CHECK_THROWS_WITH(cuda_side_symbol("no_such_symbol"), Catch::Contains("no symbol no_such_symbol"));
}

}  // namespace GAUGELAB_TU
