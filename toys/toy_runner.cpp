#include "toys/toy_runner.hpp"

#include <chrono>
#include <cstdio>
#include <exception>
#include <mutex>
#include <optional>
#include <sstream>

#include "io/run_log.hpp"
#include "toys/toy_log.hpp"

namespace gaugelab::toys {

std::vector<std::pair<std::string, io::Cell>> run_toy(const Toy& toy, const io::RunFlags& flags,
                                                       const io::Provenance& prov) {
  io::prepare_output_path(flags.out, flags.force);
  const int n = toy.seeds();
  std::vector<ToyRun> runs(static_cast<size_t>(n));
  // A toy that knows its log layout up front streams its first seed's /series while it runs (the log
  // flushes buffered rows every 2 s, so a killed run keeps what it had logged) and prints its progress;
  // the other toys write the log once every seed has finished.
  const ToyRun schema = toy.schema();
  const bool streaming = !schema.series_names.empty();
  std::optional<io::RunLog> log;
  std::mutex log_mutex;
  if (streaming) {
    log.emplace(io::RunLog::create(flags.out, prov, flags.force));
    declare_toy_log(*log, {}, schema, /*first_series=*/true);
    log->start();
  }
  auto last_progress = std::chrono::steady_clock::now();
  const Toy::SampleSink sink = [&](std::int64_t step, const std::vector<double>& values) {
    const std::lock_guard<std::mutex> lock(log_mutex);
    log->append_series(step, values);
    const auto now = std::chrono::steady_clock::now();
    if (now - last_progress >= std::chrono::seconds(5)) {
      last_progress = now;
      std::fprintf(stderr, "gaugelab toy %s: seed %llu at step %lld", toy.name().c_str(),
                   static_cast<unsigned long long>(flags.seed), static_cast<long long>(step));
      for (std::size_t k = 0; k < values.size() && k < 2; ++k)
        std::fprintf(stderr, ", %s %.6g", schema.series_names[k].c_str(), values[k]);
      std::fprintf(stderr, "\n");
    }
  };
  // Seeds are independent: one per thread, results kept in seed order so the log never depends
  // on the thread count.
  // An exception must not leave an OpenMP region (that is std::terminate, exit 134): the first one is
  // kept and rethrown after the loop, so the front door prints it as one line.
  std::exception_ptr error;
#pragma omp parallel for schedule(dynamic, 1)
  for (int i = 0; i < n; ++i) {
    try {
      const std::uint64_t seed = flags.seed + static_cast<std::uint64_t>(i);
      runs[static_cast<size_t>(i)] = streaming && i == 0 ? toy.run_streamed(seed, sink) : toy.run(seed);
    } catch (...) {
#pragma omp critical(gaugelab_toy_error)
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);

  if (!streaming) {
    log.emplace(io::RunLog::create(flags.out, prov, flags.force));
    declare_toy_log(*log, {}, runs.front(), /*first_series=*/true);
    log->start();
    write_first_series(*log, runs.front());
  } else {
    write_first_arrays(*log, runs.front(), schema);
  }
  for (int i = 0; i < n; ++i) append_toy_run(*log, i, {}, runs[static_cast<size_t>(i)]);
  const auto summary = toy.summarize(runs);
  for (const auto& [k, v] : summary) log->set_summary(k, v);
  log->close();
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
