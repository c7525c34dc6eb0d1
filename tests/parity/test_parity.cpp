// The parity table (parity_table.hpp): every row on the CPU (a CUDA-only row prints "skipped: CUDA only" there),
// and on CUDA too when at::hasCUDA(); one line per row and device on stdout (prefixed "parity |") for a GPU script
// to capture:
//   parity | op | reference | device | shapes | dtype | max error | tolerance | why
#include <cmath>
#include <exception>
#include <iomanip>
#include <iostream>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <ATen/Context.h>
#include <c10/core/Device.h>

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
  if (at::hasCUDA()) devices.emplace_back(c10::kCUDA);
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

}  // namespace GAUGELAB_TU
