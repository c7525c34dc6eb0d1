// libFuzzer target: the INI config reader and option parser (io::Options) with the options of
// `gaugelab toy relu` (numbers, ranges, choices, switches) and the run flags. A bad file must be refused
// with io::UsageError (exit 2 at the front door); nothing else may escape.
#include "fuzz_support.hpp"
#include "io/options.hpp"
#include "io/run_flags.hpp"
#include "toys/toy.hpp"

namespace io = gaugelab::io;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* d, std::size_t size) {
  const std::string& path = gaugelab::fuzz::input_file(d, size, ".ini");
  for (const char* name : {"relu", "factor-matrix"}) {
    auto toy = gaugelab::toys::make_toy(name);
    io::Options opts(std::string("toy ") + name, toy->summary());
    io::RunFlags flags;
    io::add_run_flags(opts, flags, "HDF5 log to write");
    toy->declare(opts);
    try {
      if (opts.parse({"--config", path})) (void)opts.to_json().dump();
    } catch (const io::UsageError&) {
    }
  }
  return 0;
}
