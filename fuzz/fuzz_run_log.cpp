// libFuzzer target: the run-log reader (io::RunLogReader) on mutated HDF5 files, reading everything a
// log holds the way `merge`, `sweep` resume and the analysis do. Refusals must be std::runtime_error;
// it must never crash, and never hang with the attempts set below (a hang made only of the shipped 24 attempts'
// backoff on many damaged blocks is outside what this target can see; tests/io/test_run_log_damaged.cpp bounds
// that case on every damaged byte it tries).
// The target reads with one metadata read attempt, not the reader's 24: no writer changes a fuzzed file,
// so HDF5's retries of a block whose checksum fails re-read the same bytes and end in the same error, after
// a backoff that sleeps ~17 ms a block (most of this target's wall time before). What the retries guard,
// a reader racing a live writer, is tested in tests/io/test_run_log_live.cpp with the default.
#include <stdexcept>

#include "fuzz_support.hpp"
#include "io/h5_helpers.hpp"
#include "io/run_log_reader.hpp"

namespace io = gaugelab::io;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  io::h5::set_metadata_read_attempts(1);
  return 0;
}

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
