#include "toys/sweep_plan.hpp"

#include <algorithm>
#include <cstdio>
#include <set>

namespace gaugelab::toys {

namespace {

// A value of the resolved config as the text Options::set parses back to the same value.
std::string setting_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_array()) {
    std::string out;
    for (const auto& item : v) {
      if (!out.empty()) out += ',';
      out += setting_text(item);
    }
    return out;
  }
  return v.dump();  // numbers: shortest text that reads back to the same double / integer
}

std::string number_text(double v) {
  return nlohmann::json(v).dump();
}

std::string short_dump(const nlohmann::json& v) {
  std::string s = v.dump();
  constexpr std::size_t kMaxShown = 120;  // keep the one-line error one line
  return s.size() > kMaxShown ? s.substr(0, kMaxShown) + "..." : s;
}

// A grid as recorded in the config, as "lr=0.005,0.01; lambda=0.0,0.2" (the JSON if malformed).
std::string grid_json_text(const nlohmann::json& grid) {
  if (!grid.is_array()) return short_dump(grid);
  if (grid.empty()) return "no grid";
  std::string s;
  for (const auto& ax : grid) {
    if (!ax.is_object() || !ax.contains("name") || !ax.contains("values") || !ax["name"].is_string())
      return short_dump(grid);
    if (!s.empty()) s += "; ";
    s += ax["name"].get<std::string>() + "=" + setting_text(ax["values"]);
  }
  return s;
}

}  // namespace

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  const std::string what = "--shard";
  if (slash == std::string::npos) throw io::UsageError(what + " must be i/n (e.g. 0/4), got '" + text + "'");
  const auto i = io::parse_int(text.substr(0, slash), what);
  const auto n = io::parse_int(text.substr(slash + 1), what);
  if (n >= 1 && i == n)  // a 1-based task id (SLURM arrays often start at 1): name the convention
    throw io::UsageError(what + " " + text + ": shards are numbered from 0 (0/" + std::to_string(n) + " .. " +
                         std::to_string(n - 1) + "/" + std::to_string(n) + "); from a 1-based task id give " +
                         std::to_string(n - 1) + "/" + std::to_string(n));
  if (n < 1 || i < 0 || i >= n || n > 1000000)
    throw io::UsageError(what + " must be i/n with 0 <= i < n, got '" + text + "'");
  return {static_cast<int>(i), static_cast<int>(n)};
}

const std::vector<std::string>& sweep_flag_names() {
  static const std::vector<std::string> names = {"out", "force", "threads", "seed", "shard", "flush-s", "progress-s"};
  return names;
}

void declare_sweep_flags(io::Options& opts, SweepSettings& s) {
  io::add_run_flags(opts, s.run, "HDF5 sweep log to write (an existing one of the same sweep is resumed)");
  opts.add("shard", &s.shard, "run only rows with row % n == i (i/n, for cluster job arrays; join with `merge`)")
      .add("flush-s", &s.flush_s, "seconds between flushes of finished rows", io::Range::positive())
      .add("progress-s", &s.progress_s, "seconds between progress lines (0: 0.5 on a terminal, 10 otherwise)",
           io::Range::non_negative());
}

GridArgs split_grid_args(const std::vector<std::string>& args, const io::Options& opts) {
  GridArgs out;
  std::set<std::string> single;  // numeric flags given with one value
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.size() > 2 && a.compare(0, 2, "--") == 0) {
      const auto eq = a.find('=');
      const std::string name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      const bool inline_value = eq != std::string::npos;
      if (opts.is_numeric(name) && (inline_value || i + 1 < args.size())) {
        const std::string value = inline_value ? a.substr(eq + 1) : args[i + 1];
        if (value.find(',') == std::string::npos) {
          single.insert(name);
        } else {
          const std::string key = "--" + name;
          if (name == "seeds") throw io::UsageError("--seeds cannot be a grid (it sets the seeds of every point)");
          if (std::find(sweep_flag_names().begin(), sweep_flag_names().end(), name) != sweep_flag_names().end())
            throw io::UsageError(key + " cannot be a grid (it is a flag of the sweep itself)");
          for (const auto& ax : out.axes)
            if (ax.name == name) throw io::UsageError(key + " is given twice as a grid");
          SweepAxis ax{name, {}};
          for (const auto& item : io::split_list(value, key)) {
            const double v = io::parse_real(item, key);
            if (std::find(ax.values.begin(), ax.values.end(), v) != ax.values.end())
              throw io::UsageError(key + " lists the value " + item + " twice");
            ax.values.push_back(v);
          }
          out.axes.push_back(std::move(ax));
          if (!inline_value) ++i;
          continue;
        }
      }
    }
    out.rest.push_back(a);
  }
  for (const auto& ax : out.axes)
    if (single.count(ax.name)) throw io::UsageError("--" + ax.name + " is given both as a grid and as a single value");
  return out;
}

SweepPlan::SweepPlan(std::string toy, std::vector<SweepAxis> axes, nlohmann::json settings, std::uint64_t seed,
                     Shard shard)
    : toy_(std::move(toy)), axes_(std::move(axes)), settings_(std::move(settings)), seed_(seed), shard_(shard) {
  std::int64_t n = 1;
  constexpr std::int64_t kMaxPoints = 100000000;  // a grid beyond this is a typo, not a sweep
  for (const auto& ax : axes_) {
    if (ax.values.empty()) throw io::UsageError("--" + ax.name + ": empty grid");
    n *= static_cast<std::int64_t>(ax.values.size());
    if (n > kMaxPoints) throw io::UsageError("the grid has more than " + std::to_string(kMaxPoints) + " points");
  }
  toys_.reserve(static_cast<std::size_t>(n));
  for (std::int64_t p = 0; p < n; ++p) {
    auto t = make_toy(toy_);
    io::Options opts("sweep " + toy_, t->summary());
    t->declare(opts);
    for (const auto& [key, value] : settings_.items()) {
      if (!opts.has(key)) throw io::UsageError("toy " + toy_ + " has no option --" + key);
      opts.set(key, setting_text(value));
    }
    const auto vals = point_values(p);
    for (std::size_t k = 0; k < axes_.size(); ++k) {
      if (!opts.is_numeric(axes_[k].name)) throw io::UsageError("toy " + toy_ + " has no numeric option --" + axes_[k].name);
      opts.set(axes_[k].name, number_text(vals[k]));
    }
    opts.validate();
    toys_.push_back(std::move(t));
  }
  seeds_ = toys_.front()->seeds();
  if (seeds_ < 1) throw io::UsageError("--seeds must be >= 1");
}

SweepPlan SweepPlan::from_config(const nlohmann::json& c) {
  try {
    std::vector<SweepAxis> axes;
    for (const auto& a : c.at("grid")) axes.push_back({a.at("name").get<std::string>(), a.at("values").get<std::vector<double>>()});
    return SweepPlan(c.at("toy").get<std::string>(), std::move(axes), c.at("settings"), c.at("seed").get<std::uint64_t>(),
                     parse_shard(c.at("shard").get<std::string>()));
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("not a sweep configuration: ") + e.what());
  }
}

std::vector<std::string> SweepPlan::axis_names() const {
  std::vector<std::string> n;
  for (const auto& ax : axes_) n.push_back(ax.name);
  return n;
}

std::vector<double> SweepPlan::point_values(std::int64_t point) const {
  std::vector<double> v(axes_.size());
  for (std::size_t k = axes_.size(); k-- > 0;) {  // the last axis varies fastest
    const auto m = static_cast<std::int64_t>(axes_[k].values.size());
    v[k] = axes_[k].values[static_cast<std::size_t>(point % m)];
    point /= m;
  }
  return v;
}

std::vector<std::int64_t> SweepPlan::shard_rows() const {
  std::vector<std::int64_t> r;
  for (std::int64_t row = shard_.index; row < rows(); row += shard_.count) r.push_back(row);
  return r;
}

std::string SweepPlan::describe_row(std::int64_t row) const {
  std::string s = "row " + std::to_string(row) + " (point " + std::to_string(point_of(row));
  const auto v = point_values(point_of(row));
  for (std::size_t k = 0; k < axes_.size(); ++k) s += (k ? " " : ": ") + axes_[k].name + "=" + number_text(v[k]);
  return s + ", seed index " + std::to_string(seed_index_of(row)) + ")";
}

std::string SweepPlan::grid_text() const {
  if (axes_.empty()) return "no grid";
  std::string s;
  for (const auto& ax : axes_) {
    s += (s.empty() ? "" : "; ") + ax.name + "=";
    for (std::size_t i = 0; i < ax.values.size(); ++i) {
      if (i) s += ',';
      s += number_text(ax.values[i]);
    }
  }
  return s;
}

nlohmann::json SweepPlan::config() const {
  nlohmann::json grid = nlohmann::json::array();
  for (const auto& ax : axes_) grid.push_back({{"name", ax.name}, {"values", ax.values}});
  return {{"toy", toy_}, {"grid", grid}, {"settings", settings_}, {"seeds", seeds_}, {"seed", seed_},
          {"shard", shard_.str()}};
}

std::optional<SweepPlan> plan_sweep(const std::string& toy, const std::vector<std::string>& args,
                                    SweepSettings& settings) {
  auto t = make_toy(toy);
  io::Options opts("sweep " + toy,
                   t->summary() + "\nAny numeric option may be a comma list (--lr 5e-3,1e-2 --lambda 0,0.2): the "
                                  "sweep runs the cartesian product of the lists x --seeds seeds.");
  declare_sweep_flags(opts, settings);
  t->declare(opts);
  GridArgs g = split_grid_args(args, opts);
  if (!opts.parse(g.rest)) return std::nullopt;
  const Shard shard = parse_shard(settings.shard);
  nlohmann::json s = opts.to_json();
  for (const auto& n : sweep_flag_names()) s.erase(n);
  for (const auto& ax : g.axes) s.erase(ax.name);
  return SweepPlan(toy, std::move(g.axes), std::move(s), settings.run.seed, shard);
}

std::string config_difference(const nlohmann::json& there, const nlohmann::json& here,
                              const std::vector<std::string>& ignore) {
  auto get = [](const nlohmann::json& j, const std::string& k) { return j.contains(k) ? j.at(k) : nlohmann::json(); };
  auto skip = [&](const std::string& k) { return std::find(ignore.begin(), ignore.end(), k) != ignore.end(); };
  std::vector<std::string> keys;
  for (const auto* j : {&there, &here})
    for (const auto& [k, _] : j->items())
      if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(k);
  for (const auto& k : keys) {
    if (skip(k)) continue;
    const auto a = get(there, k), b = get(here, k);
    if (a == b) continue;
    if (k == "settings" && a.is_object() && b.is_object()) {
      const std::string sub = config_difference(a, b);
      if (!sub.empty()) return sub;
    }
    if (k == "toy") return "toy " + short_dump(a) + " there, " + short_dump(b) + " here";
    if (k == "grid") return "grid " + grid_json_text(a) + " there, " + grid_json_text(b) + " here";
    return "--" + k + " " + short_dump(a) + " there, " + short_dump(b) + " here";
  }
  return "";
}

}  // namespace gaugelab::toys
