// The parity table (parity_table.hpp): every row on the CPU (a CUDA-only row prints "skipped: CUDA only" there),
// and on CUDA too when gpt2::cuda_present(); one line per row and device on stdout (prefixed "parity |") for a GPU script
// to capture:
//   parity | op | reference | device | shapes | dtype | max error | tolerance | why
#include <algorithm>
#include <cmath>
#include <exception>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <ATen/Context.h>
#include <c10/core/Device.h>

#include "core/choice.hpp"
#include "gpt2/model/choices.hpp"
#include "gpt2/model/cuda/ops_table.hpp"
#include "gpt2/model/cuda_side.hpp"
#include "gpt2/train/api.hpp"
#include "io/options.hpp"
#include "tests/parity/parity_table.hpp"
#include "tests/gpt2/gpt2_catch.hpp"  // last: see there
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using gaugelab::parity::parity_rows;
using gaugelab::parity::ParityRow;

namespace {

std::string sci(double x) {
  std::ostringstream s;
  s << std::scientific << std::setprecision(2) << x;
  return s.str();
}

}  // namespace

TEST_CASE("parity table: every tensor op agrees with its core reference, on every device here", "[parity]") {
  std::vector<c10::Device> devices{c10::Device(c10::kCPU)};
  if (gaugelab::gpt2::cuda_present()) devices.emplace_back(c10::kCUDA);
  std::cout << "parity | op | reference | device | shapes | dtype | max error | tolerance | why\n";
  for (const ParityRow& row : parity_rows())
    for (const c10::Device& device : devices) {
      if (row.cuda_only && !device.is_cuda()) {
        std::cout << "parity | " << row.op << " | " << row.reference << " | " << device.str() << " | " << row.shapes
                  << " | " << row.dtype << " | skipped: CUDA only | " << sci(row.tolerance) << " | " << row.why
                  << std::endl;
        continue;
      }
      double err = std::numeric_limits<double>::quiet_NaN();
      std::string failure;  // a side condition that failed, or an exception of the op
      try {
        err = row.max_error(device);
      } catch (const std::exception& e) {
        failure = e.what();
      }
      std::cout << "parity | " << row.op << " | " << row.reference << " | " << device.str() << " | " << row.shapes
                << " | " << row.dtype << " | " << (failure.empty() ? sci(err) : "FAILED: " + failure) << " | "
                << sci(row.tolerance) << " | " << row.why << std::endl;
      INFO("op " << row.op << " (reference " << row.reference << ") on " << device.str() << ", shapes " << row.shapes
                 << ", dtype " << row.dtype << ": max error " << err << ", tolerance " << row.tolerance);
      INFO("why: " << row.why);
      if (!failure.empty()) FAIL_CHECK("the row failed: " << failure);
      CHECK(err <= row.tolerance);
    }
}

TEST_CASE("parity table: every row is well formed (a reason, a positive tolerance, a unique op)", "[parity]") {
  const std::vector<ParityRow>& rows = parity_rows();
  REQUIRE(!rows.empty());
  std::set<std::string> ops;
  for (const ParityRow& row : rows) {
    const std::string op = row.op ? row.op : "";
    INFO("row '" << op << "'");
    CHECK(!op.empty());
    for (const char* field : {row.reference, row.shapes, row.dtype, row.why}) CHECK((field != nullptr && *field != '\0'));
    CHECK(std::isfinite(row.tolerance));
    CHECK(row.tolerance > 0);
    CHECK(static_cast<bool>(row.max_error));
    CHECK(ops.insert(op).second);  // unique op names
  }
}

TEST_CASE("parity table: every CUDA op of the ops table has its kernel files, its flag and its parity rows, one of "
          "them run on the CPU", "[parity]") {
  namespace cuda = gaugelab::gpt2::cuda;
  gaugelab::gpt2::TrainOptions o;
  gaugelab::io::Options opts("train", "");
  gaugelab::gpt2::declare_train_options(opts, o);
  const std::string kernel_words = "(one of: " + gaugelab::core::choice_list(gaugelab::gpt2::kernel_path_choices()) + ")";
  for (const cuda::CudaOp& op : cuda::kCudaOps) {
    INFO("ops_table.hpp row " << op.name << " (" << op.wrapper << ", flag " << op.flag << ")");
    const std::string dir = std::string(GAUGELAB_SOURCE_DIR) + "/gpt2/model/cuda/" + op.name;
    CHECK(std::filesystem::exists(dir + "_kernel.hpp"));
    CHECK(std::filesystem::exists(dir + "_kernel.cu"));
    const std::string flag = op.flag;
    REQUIRE(flag.rfind("--", 0) == 0);
    const auto& specs = opts.specs();
    const auto spec = std::find_if(specs.begin(), specs.end(),
                                   [&](const gaugelab::io::OptionSpec& s) { return "--" + s.name == flag; });
    REQUIRE(spec != specs.end());                                    // the trainer declares the flag ...
    CHECK(spec->help.find(kernel_words) != std::string::npos);  // ... with KernelPath's words
    int rows = 0, cpu_rows = 0;
    for (const ParityRow& row : parity_rows())
      if (cuda::names_wrapper(row.op, op.wrapper)) {
        ++rows;
        if (!row.cuda_only) ++cpu_rows;
      }
    CHECK(rows >= 1);
    CHECK(cpu_rows >= 1);  // a machine without a card runs the wrapper's reference path
  }
}

}  // namespace GAUGELAB_TU
