#include "toys/toy_runner.hpp"

#include <cstdio>
#include <exception>
#include <sstream>

#include "io/run_log.hpp"
#include "toys/toy_log.hpp"

namespace gaugelab::toys {

std::vector<std::pair<std::string, io::Cell>> run_toy(const Toy& toy, const io::RunFlags& flags,
                                                       const io::Provenance& prov) {
  io::prepare_output_path(flags.out, flags.force);
  const int n = toy.seeds();
  std::vector<ToyRun> runs(static_cast<size_t>(n));
  // Seeds are independent: one per thread, results kept in seed order so the log never depends
  // on the thread count.
  // An exception must not leave an OpenMP region (that is std::terminate, exit 134): the first one is
  // kept and rethrown after the loop, so the front door prints it as one line.
  std::exception_ptr error;
#pragma omp parallel for schedule(dynamic, 1)
  for (int i = 0; i < n; ++i) {
    try {
      runs[static_cast<size_t>(i)] = toy.run(flags.seed + static_cast<std::uint64_t>(i));
    } catch (...) {
#pragma omp critical(gaugelab_toy_error)
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);

  auto log = io::RunLog::create(flags.out, prov, flags.force);
  declare_toy_log(log, {}, runs.front(), /*first_series=*/true);
  log.start();
  write_first_series(log, runs.front());
  for (int i = 0; i < n; ++i) append_toy_run(log, i, {}, runs[static_cast<size_t>(i)]);
  const auto summary = toy.summarize(runs);
  for (const auto& [k, v] : summary) log.set_summary(k, v);
  log.close();
  return summary;
}

std::string format_summary(const std::vector<std::pair<std::string, io::Cell>>& summary) {
  std::ostringstream os;
  size_t w = 0;
  for (const auto& [k, _] : summary) w = std::max(w, k.size());
  for (const auto& [k, v] : summary) {
    os << "  " << k << std::string(w + 2 - k.size(), ' ');
    if (const auto* d = std::get_if<double>(&v)) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.6g", *d);
      os << buf;
    } else if (const auto* i = std::get_if<std::int64_t>(&v)) {
      os << *i;
    } else {
      os << std::get<std::string>(v);
    }
    os << "\n";
  }
  return os.str();
}

}  // namespace gaugelab::toys
