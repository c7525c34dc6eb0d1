// `gaugelab merge --out F SHARD...`: joins the shard logs of one sweep (`sweep --shard i/n`, e.g. the
// tasks of a cluster job array) into one log equal to the unsharded sweep's: the same root kind
// and config (shard 0/1), /tables/runs, run_series and run_arrays sorted by row, /tables/points
// and /summary recomputed from the joined rows.
//
// Refused, with one line naming the problem: a file that is not a sweep log, shards of different
// sweeps (toy, grid or any setting other than the shard), differing columns, a row present in two
// files, a row present in none (with the shard file that should hold it).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "io/provenance.hpp"
#include "io/run_log_types.hpp"

namespace gaugelab::toys {

/// Writes the merged log to `out` (refusing to replace it unless `force`). `prov` supplies argv and
/// threads; kind, config and seed come from the shards. Returns the merged log's /summary.
std::vector<std::pair<std::string, io::Cell>> merge_sweeps(const std::vector<std::string>& shards,
                                                           const std::string& out, bool force, io::Provenance prov);

}  // namespace gaugelab::toys
