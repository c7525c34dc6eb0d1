// Provenance of a run: what every HDF5 run log records at its root (DESIGN §2).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gaugelab::io {

/// What made a run. Written as the root attributes of its log by RunLog::create.
struct Provenance {
  std::string kind;               // e.g. "toy/relu", "sweep/relu", "diag/heads", "gpt2/train"
  std::vector<std::string> argv;  // the command line as given (argv[0] included)
  nlohmann::json config;          // the fully resolved configuration (Options::to_json())
  std::uint64_t seed = 0;         // master seed
  int threads = 1;                // worker threads in force
};

/// Current UTC time as "YYYY-MM-DDTHH:MM:SSZ".
std::string utc_now_iso8601();
/// This machine's host name ("unknown" if the system will not say).
std::string hostname();
/// Quotes one word for a POSIX shell (unchanged if it needs no quoting).
std::string shell_quote(const std::string& word);
/// argv joined with spaces, each word shell-quoted: pasting it into a shell reruns the command.
std::string shell_join(const std::vector<std::string>& argv);

}  // namespace gaugelab::io
