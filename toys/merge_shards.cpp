#include "toys/merge_shards.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>

#include "io/run_flags.hpp"
#include "io/run_log.hpp"
#include "io/run_log_reader.hpp"
#include "toys/sweep_log.hpp"
#include "toys/sweep_plan.hpp"
#include "toys/sweep_points.hpp"

namespace gaugelab::toys {

namespace {

struct ShardFile {
  std::string path;
  nlohmann::json config;
  Shard shard;
  SweepContents contents;
};

bool same_columns(const std::vector<io::Column>& a, const std::vector<io::Column>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].name != b[i].name || a[i].type != b[i].type || (a[i].type == io::DType::str && a[i].width != b[i].width))
      return false;
  return true;
}

ShardFile read_shard(const std::string& path) {
  ShardFile f;
  f.path = path;
  std::optional<io::RunLogReader> reader;
  try {
    reader.emplace(path);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("cannot read shard: ") + e.what());
  }
  const io::RootAttrs root = reader->root();
  if (root.kind.rfind("sweep/", 0) != 0) throw std::runtime_error("'" + path + "' is a '" + root.kind + "' log, not a sweep");
  try {
    f.config = root.config();
    f.shard = parse_shard(f.config.at("shard").get<std::string>());
  } catch (const std::exception& e) {
    throw std::runtime_error("'" + path + "' has no readable sweep config (" + e.what() + ")");
  }
  f.contents = read_sweep(*reader);
  return f;
}

// Where a missing row should have come from, for the error message.
std::string missing_hint(const std::vector<ShardFile>& files, std::int64_t row) {
  for (const auto& f : files)
    if (f.shard.owns(row))
      return "'" + f.path + "' (shard " + f.shard.str() + ") should hold it: it is incomplete, rerun its command to resume it";
  return "no shard given owns it";
}

}  // namespace

std::vector<std::pair<std::string, io::Cell>> merge_sweeps(const std::vector<std::string>& shards,
                                                           const std::string& out, bool force, io::Provenance prov) {
  if (shards.empty()) throw io::UsageError("no shard files given");
  if (out.empty()) throw io::UsageError("--out must name the merged file");
  io::refuse_output_over_inputs(out, shards);
  std::vector<ShardFile> files;
  for (const auto& s : shards) files.push_back(read_shard(s));
  const ShardFile& first = files.front();
  for (const auto& f : files) {
    const std::string diff = config_difference(first.config, f.config, {"shard"});
    if (!diff.empty())
      throw std::runtime_error("'" + f.path + "' is not a shard of the same sweep as '" + first.path + "' (" + diff + ")");
  }
  nlohmann::json config = first.config;
  config["shard"] = Shard{}.str();
  const SweepPlan plan = SweepPlan::from_config(config);

  // Join the rows, each exactly once.
  SweepContents merged;
  std::map<std::int64_t, const std::string*> source;
  const std::string* columns_from = nullptr;
  for (auto& f : files) {
    auto& c = f.contents;
    if (c.runs_cols.empty()) continue;  // a shard that finished no row yet
    if (merged.runs_cols.empty()) {
      merged.runs_cols = c.runs_cols;
      merged.series_cols = c.series_cols;
      merged.arrays_cols = c.arrays_cols;
      columns_from = &f.path;
    } else if (!same_columns(merged.runs_cols, c.runs_cols) || !same_columns(merged.series_cols, c.series_cols) ||
               !same_columns(merged.arrays_cols, c.arrays_cols)) {
      throw std::runtime_error("'" + f.path + "' has other table columns than '" + *columns_from + "'");
    }
    for (auto& [row, rec] : c.records) {
      if (row < 0 || row >= plan.rows())
        throw std::runtime_error("'" + f.path + "' holds row " + std::to_string(row) + ", outside the sweep's " +
                                 std::to_string(plan.rows()) + " rows");
      if (const auto it = source.find(row); it != source.end())
        throw std::runtime_error(plan.describe_row(row) + " is in both '" + *it->second + "' and '" + f.path + "'");
      source[row] = &f.path;
      merged.records.emplace(row, std::move(rec));
    }
  }
  std::vector<std::int64_t> missing;
  for (std::int64_t row = 0; row < plan.rows(); ++row)
    if (!merged.records.count(row)) missing.push_back(row);
  if (!missing.empty())
    throw std::runtime_error(std::to_string(missing.size()) + " of " + std::to_string(plan.rows()) + " rows missing, first " +
                             plan.describe_row(missing.front()) + ": " + missing_hint(files, missing.front()));

  const PointsTable points = sweep_points(plan, merged);
  io::prepare_output_path(out, force);
  prov.kind = "sweep/" + plan.toy_name();
  prov.config = plan.config();
  prov.seed = config.at("seed").get<std::uint64_t>();
  auto log = io::RunLog::create(out, prov, force);
  declare_sweep_tables(log, merged);
  log.declare_table("points", points.cols);
  log.start();
  for (const auto& [row, rec] : merged.records) append_sweep_record(log, rec);
  for (const auto& r : points.rows) log.append_row("points", r);
  auto summary = sweep_summary(plan, merged);
  summary.emplace_back("merged_from", static_cast<std::int64_t>(files.size()));
  for (const auto& [k, v] : summary) log.set_summary(k, v);
  log.close();
  return summary;
}

}  // namespace gaugelab::toys
