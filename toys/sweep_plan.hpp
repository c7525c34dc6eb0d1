// What a sweep runs (`gaugelab sweep NAME`): the toy, the grid of flag values, the seeds per grid
// point, the shard of rows this process owns, and the configuration a sweep log records at its root
// (and that resume and merge compare against).
//
// Grid: any numeric flag of the toy given as a comma list (`--lr 5e-3,1e-2,2e-2 --lambda 0,0.2`)
// is an axis; the grid is the cartesian product of the axes in the order the flags were given,
// the first axis varying slowest. Each grid point runs the toy's own --seeds seeds, seed values
// --seed, --seed+1, ... (the same seeds at every point, so points are compared on the same data).
// Rows are numbered globally: row = point × seeds + seed index; `--shard i/n` owns the rows with
// row % n == i, so n processes of a cluster job array split any grid evenly.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/options.hpp"
#include "io/run_flags.hpp"
#include "toys/toy.hpp"

namespace gaugelab::toys {

/// One grid axis: a numeric flag and the values it takes, in the order given.
struct SweepAxis {
  std::string name;            // flag name without dashes ("lr"); also the f64 column of /tables/runs
  std::vector<double> values;  // as numbers (set on the toy's options with full precision)
};

/// Which rows of the sweep one process runs: those with row % count == index.
struct Shard {
  int index = 0, count = 1;  // 0/1: the whole sweep
  std::string str() const { return std::to_string(index) + "/" + std::to_string(count); }
  bool owns(std::int64_t row) const { return row % count == index; }
};
/// Parses "i/n" with integers 0 <= i < n; anything else is an io::UsageError naming --shard.
Shard parse_shard(const std::string& text);

/// The sweep verb's own flags, beside the toy's.
struct SweepSettings {
  io::RunFlags run;            // --out, --force, --threads, --seed (seeds of a point: seed, seed+1, ...)
  std::string shard = "0/1";   // --shard i/n: run rows with row % n == i (cluster job arrays)
  double flush_s = 2.0;        // seconds between flushes of finished rows (what survives a kill)
  double progress_s = 0.0;     // seconds between progress lines; 0 = 0.5 on a terminal, 10 otherwise
};
/// Registers the sweep flags (names listed by sweep_flag_names()) on `opts`.
void declare_sweep_flags(io::Options& opts, SweepSettings& s);
const std::vector<std::string>& sweep_flag_names();

/// The arguments split into grid axes (numeric flags whose value has a comma, as `--name v,w` or
/// `--name=v,w`) and the rest. Throws UsageError for an empty list item, a repeated value, a flag
/// given twice as a grid or both as a grid and a single value, and a grid over --seeds.
struct GridArgs {
  std::vector<SweepAxis> axes;
  std::vector<std::string> rest;
};
GridArgs split_grid_args(const std::vector<std::string>& args, const io::Options& opts);

class SweepPlan {
 public:
  /// `settings`: every toy option's resolved value except the axes (Options::to_json form).
  /// Builds one toy per grid point (declare, set every setting and the point's values, validate);
  /// an out-of-range grid value is a UsageError naming its flag.
  SweepPlan(std::string toy, std::vector<SweepAxis> axes, nlohmann::json settings, std::uint64_t seed, Shard shard);
  /// The plan a sweep log recorded (its root config_json); the toy must exist in this build.
  static SweepPlan from_config(const nlohmann::json& config);

  const std::string& toy_name() const { return toy_; }
  const std::vector<SweepAxis>& axes() const { return axes_; }
  std::vector<std::string> axis_names() const;
  const Shard& shard() const { return shard_; }
  std::int64_t points() const { return static_cast<std::int64_t>(toys_.size()); }
  std::int64_t seeds() const { return seeds_; }
  std::int64_t rows() const { return points() * seeds_; }
  std::int64_t point_of(std::int64_t row) const { return row / seeds_; }
  std::int64_t seed_index_of(std::int64_t row) const { return row % seeds_; }
  std::uint64_t seed_of(std::int64_t row) const { return seed_ + static_cast<std::uint64_t>(seed_index_of(row)); }
  /// The grid values of a point, one per axis.
  std::vector<double> point_values(std::int64_t point) const;
  /// The toy configured for a point (run() is const and thread-safe).
  const Toy& toy(std::int64_t point) const { return *toys_[static_cast<std::size_t>(point)]; }
  /// The rows this plan's shard owns, ascending.
  std::vector<std::int64_t> shard_rows() const;
  /// "row 7 (point 1: lr=0.01 lambda=0.2, seed index 3)", for messages.
  std::string describe_row(std::int64_t row) const;
  /// "lr=0.005,0.01; lambda=0,0.2" (or "no grid").
  std::string grid_text() const;

  /// Root config_json of the sweep log: {toy, grid: [{name, values}], settings, seeds, seed, shard}.
  nlohmann::json config() const;

 private:
  std::string toy_;
  std::vector<SweepAxis> axes_;
  nlohmann::json settings_;
  std::uint64_t seed_ = 0;
  Shard shard_;
  std::int64_t seeds_ = 1;
  std::vector<std::unique_ptr<Toy>> toys_;  // one per point
};

/// Parses `gaugelab sweep NAME ARGS...`: the toy (UsageError if unknown), the sweep flags into
/// `settings`, the grid and the toy's flags. Returns nullopt when --help was printed.
std::optional<SweepPlan> plan_sweep(const std::string& toy, const std::vector<std::string>& args,
                                    SweepSettings& settings);

/// The first difference between two sweep configs as "what: there vs here" (empty if equal);
/// `ignore` lists top-level keys not compared (merge ignores "shard").
std::string config_difference(const nlohmann::json& there, const nlohmann::json& here,
                              const std::vector<std::string>& ignore = {});

}  // namespace gaugelab::toys
