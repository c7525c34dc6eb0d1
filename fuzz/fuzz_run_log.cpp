// libFuzzer target: the run-log reader (io::RunLogReader) on mutated HDF5 files, reading everything a
// log holds the way `merge`, `sweep` resume and the analysis do. Refusals must be std::runtime_error;
// it must never hang (HDF5's SWMR metadata retries are bounded by the reader) or crash.
#include <stdexcept>

#include "fuzz_support.hpp"
#include "io/run_log_reader.hpp"

namespace io = gaugelab::io;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* d, std::size_t size) {
  const std::string& path = gaugelab::fuzz::input_file(d, size, ".h5");
  try {
    io::RunLogReader r(path);
    (void)r.root();
    (void)r.series();
    for (const auto& n : r.heads_names()) (void)r.heads(n);
    for (const auto& n : r.table_names()) (void)r.table(n);
    for (const auto& n : r.array_names()) (void)r.array(n);
    (void)r.summary();
  } catch (const std::runtime_error&) {
  }
  return 0;
}
