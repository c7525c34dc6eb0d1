// What every verb does around its tier's function, written once: the provenance its log records and the
// settings line it prints before it works. (The verb table and its exit statuses: verbs.hpp.)
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "io/options.hpp"
#include "io/provenance.hpp"
#include "verbs.hpp"

namespace gaugelab::cli {

/// The provenance of a verb's log: its kind ("gpt2/train"), the command line as typed (gaugelab VERB
/// ARGS...), the resolved settings, the seed and the threads.
io::Provenance verb_provenance(const std::string& kind, const std::string& verb, const Args& args,
                               nlohmann::json config, std::uint64_t seed, int threads = 1);

/// "gaugelab VERB: [WHAT; ]settings {...}" on stderr: every resolved setting, before any work.
void print_verb_settings(const std::string& verb, const io::Options& opts, const std::string& what = "");

}  // namespace gaugelab::cli
