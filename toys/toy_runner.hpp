// `gaugelab toy NAME`: every seed of one toy configuration, run in parallel, written to one log.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "io/provenance.hpp"
#include "io/run_flags.hpp"
#include "toys/toy.hpp"

namespace gaugelab::toys {

/// Runs seeds flags.seed, flags.seed+1, ... (toy.seeds() of them; OpenMP over seeds), writes the
/// log at flags.out (DESIGN §2 with the toy tables of toys/toy_log.hpp) and returns the summary.
std::vector<std::pair<std::string, io::Cell>> run_toy(const Toy& toy, const io::RunFlags& flags,
                                                       const io::Provenance& prov);

/// The summary as an aligned two-column block for the terminal.
std::string format_summary(const std::vector<std::pair<std::string, io::Cell>>& summary);

}  // namespace gaugelab::toys
