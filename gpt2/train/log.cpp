#include "gpt2/train/log.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <stdexcept>
#include <variant>

#include <ATen/TensorOperators.h>
#include <ATen/ops/full_like.h>
#include <ATen/ops/stack.h>

#include "io/run_log_reader.hpp"
#include "io/atomic_file.hpp"

namespace gaugelab::gpt2 {

namespace {

const std::vector<std::string> kSeries = {"loss",     "lr",        "grad_norm",  "tokens_per_s", "tokens",
                                          "val_loss", "drift_max", "drift_mean", "spike",        "after_fix",
                                          "grad_norm_clipped", "grad_norm_multipliers", "attn_logit_max",
                                          "logz_mean", "update_ratio_matrices", "update_ratio_multipliers_qk",
                                          "update_ratio_multipliers_other", "update_ratio_biases_norms",
                                          "update_ratio_embeddings"};
const std::vector<std::string> kHeads = {"s_q", "s_k", "s_qk", "attn_logit_max", "qk_eff_log_ratio",
                                         "attn_logit_max_signed"};

core::Mat<double> to_mat(const at::Tensor& t) {  // [L, H]
  const at::Tensor c = t.detach().to(at::kCPU, at::kDouble).contiguous();
  core::Mat<double> m(c.size(0), c.size(1));
  const double* p = c.data_ptr<double>();
  for (std::int64_t i = 0; i < c.size(0); ++i)
    for (std::int64_t j = 0; j < c.size(1); ++j) m(i, j) = p[i * c.size(1) + j];
  return m;
}

}  // namespace

const char* const kProcesses = "processes";

void TrainLog::declare(io::RunLog& log, int layers, int heads) {
  log.declare_series(kSeries);
  log.declare_heads(kHeads, layers, heads);
  log.declare_table(kProcesses, {{"start_step", io::DType::i64}, {"end_step", io::DType::i64}, {"seconds", io::DType::f64}});
  log.start();
}

TrainLog TrainLog::create(const std::string& path, const io::Provenance& prov, bool force, int layers, int heads) {
  io::RunLog log = io::RunLog::create(path, prov, force);
  declare(log, layers, heads);
  return TrainLog(std::move(log));
}

namespace {

// The rows of a log kept by a resume: series and heads records with step <= the checkpoint's.
struct KeptRows {
  std::vector<std::int64_t> series_step;
  std::vector<std::map<std::string, double>> series;
  std::vector<std::int64_t> heads_step;
  std::vector<std::vector<core::Mat<double>>> heads;
};

// Steps are 1-based and strictly increasing; a row that breaks this (a log whose last write failed
// can hold rows whose data never reached the disk: zeros) ends the rows worth keeping.
std::size_t valid_prefix(const std::vector<std::int64_t>& step, std::int64_t up_to_step) {
  std::size_t n = 0;
  for (std::int64_t prev = 0; n < step.size() && step[n] > prev && step[n] <= up_to_step; ++n) prev = step[n];
  return n;
}

KeptRows read_kept_rows(const std::string& path, std::int64_t up_to_step, int layers, int heads) {
  KeptRows k;
  const io::RunLogReader in(path);
  const io::SeriesData s = in.series();
  const std::size_t n = valid_prefix(s.step, up_to_step);
  for (std::size_t r = 0; r < n; ++r) {
    std::map<std::string, double> row;
    for (const std::string& name : kSeries) {  // a log written before a series existed: NaN there
      const bool has = std::find(s.names.begin(), s.names.end(), name) != s.names.end();
      row[name] = has ? s.at(name)[r] : std::numeric_limits<double>::quiet_NaN();
    }
    k.series_step.push_back(s.step[r]);
    k.series.push_back(std::move(row));
  }
  const std::vector<std::int64_t> hs = in.heads_step();
  if (hs.empty()) return k;
  std::vector<io::HeadsData> hd;
  const std::vector<std::string> have = in.heads_names();
  for (const std::string& name : kHeads) {  // a log from before a dataset existed: NaN there
    if (std::find(have.begin(), have.end(), name) != have.end()) {
      hd.push_back(in.heads(name));
      if (hd.back().layers != static_cast<std::uint64_t>(layers) || hd.back().heads != static_cast<std::uint64_t>(heads))
        throw std::runtime_error("run log '" + path + "': /heads/" + name + " has another [layers, heads] shape");
    } else {
      io::HeadsData nan_heads{hs.size(), static_cast<std::uint64_t>(layers), static_cast<std::uint64_t>(heads), {}};
      nan_heads.values.assign(hs.size() * layers * heads, std::numeric_limits<double>::quiet_NaN());
      hd.push_back(std::move(nan_heads));
    }
  }
  const std::size_t nh = valid_prefix(hs, up_to_step);
  for (std::size_t r = 0; r < nh && r < hd[0].records; ++r) {
    std::vector<core::Mat<double>> rec;
    for (const io::HeadsData& d : hd) {
      core::Mat<double> m(layers, heads);
      for (int l = 0; l < layers; ++l)
        for (int h = 0; h < heads; ++h) m(l, h) = d.at(r, l, h);
      rec.push_back(m);
    }
    k.heads_step.push_back(hs[r]);
    k.heads.push_back(std::move(rec));
  }
  return k;
}

// The processes that trained the run so far: /tables/processes, or, in a log from before that table, the one
// process its summary's seconds_this_process names (its start unknown: -1). A killed process left no row.
std::vector<TrainLog::Process> read_processes(const std::string& path) {
  const io::RunLogReader in(path);
  std::vector<TrainLog::Process> out;
  if (in.has_table(kProcesses)) {
    const io::TableData t = in.table(kProcesses);
    const auto &start = t.i64("start_step"), &end = t.i64("end_step");
    const auto& seconds = t.f64("seconds");
    for (std::size_t i = 0; i < seconds.size(); ++i) out.push_back({start[i], end[i], seconds[i]});
    return out;
  }
  const std::map<std::string, io::Cell> summary = in.summary();
  const auto it = summary.find("seconds_this_process");
  if (it != summary.end() && std::holds_alternative<double>(it->second)) {
    const auto steps = summary.find("steps");
    const std::int64_t end =
        steps != summary.end() && std::holds_alternative<std::int64_t>(steps->second) ? std::get<std::int64_t>(steps->second) : -1;
    out.push_back({-1, end, std::get<double>(it->second)});
  }
  return out;
}

bool missing_or_empty(const std::string& path) {
  std::error_code ec;
  return !std::filesystem::exists(path, ec) || std::filesystem::file_size(path, ec) == 0;
}

}  // namespace

TrainLog TrainLog::rebuild(const std::string& path, const io::Provenance& prov, std::int64_t up_to_step, int layers,
                           int heads, double val_loss_at_step) {
  namespace fs = std::filesystem;
  // PATH.resume-src: the source of a rebuild that an earlier version of this code left unfinished.
  const std::string src = path + ".resume-src";
  const bool from_src = fs::exists(src);
  const std::string from = from_src ? src : path;
  // Every row is read (and so the source validated) before any file is touched: a damaged log stays
  // where it was, and the error says what to do.
  KeptRows kept;
  std::vector<Process> earlier;
  if (missing_or_empty(from)) {
    if (up_to_step > 0)
      std::cerr << "train: " << path << " is " << (fs::exists(from) ? "empty" : "missing")
                << ": a new log starts after step " << up_to_step << " (earlier rows are not in it)\n";
  } else {
    try {
      kept = read_kept_rows(from, up_to_step, layers, heads);
      earlier = read_processes(from);
      if (std::isfinite(val_loss_at_step) && !kept.series_step.empty() && kept.series_step.back() == up_to_step)
        kept.series.back()["val_loss"] = val_loss_at_step;
    } catch (const std::exception& e) {
      throw std::runtime_error(from + " cannot be read, so --resume cannot keep its rows (" + e.what() +
                               "); move it aside (the checkpoints are untouched) and --resume again to start a new log");
    }
    if (static_cast<std::int64_t>(kept.series_step.size()) < up_to_step)
      std::cerr << "train: " << from << " holds " << kept.series_step.size() << " readable row(s) up to step "
                << up_to_step << "; the resumed log keeps those\n";
  }
  // The kept rows go to a new file that replaces the log in one rename: at every moment PATH is
  // either the old log or the complete new one.
  io::replace_file(path, ".rebuild", [&](const std::string& tmp) {
    TrainLog out = create(tmp, prov, true, layers, heads);
    for (std::size_t r = 0; r < kept.series_step.size(); ++r)
      out.log_.append_series_named(kept.series_step[r], kept.series[r]);
    for (std::size_t r = 0; r < kept.heads_step.size(); ++r) out.log_.append_heads(kept.heads_step[r], kept.heads[r]);
    for (const Process& p : earlier) out.log_.append_row(kProcesses, {p.start_step, p.end_step, p.seconds});
    out.log_.close();
  }, "train log");
  if (fs::exists(src)) fs::remove(src);
  io::RunLog log = io::RunLog::open_append(path);
  declare(log, layers, heads);
  return TrainLog(std::move(log), up_to_step, std::move(earlier));
}

void TrainLog::end_process(std::int64_t end_step, double seconds) {
  log_.append_row(kProcesses, {start_step_, end_step, seconds});
  double total = seconds;
  std::string each;
  for (const Process& p : earlier_) {
    total += p.seconds;
    each += std::to_string(p.seconds) + ", ";
  }
  log_.set_summary("seconds_this_process", seconds);
  log_.set_summary("seconds_total", total);
  log_.set_summary("processes", static_cast<std::int64_t>(earlier_.size() + 1));
  log_.set_summary("seconds_per_process", each + std::to_string(seconds));
}

void TrainLog::append(const StepRow& r) {
  auto ratio = [&](const char* group) {
    const auto it = r.update_ratio.find(group);
    return it == r.update_ratio.end() ? std::numeric_limits<double>::quiet_NaN() : it->second;
  };
  log_.append_series(r.step, {r.loss, r.lr, r.grad_norm, r.tokens_per_s, r.tokens, r.val_loss, r.drift_max,
                              r.drift_mean, r.spike ? 1.0 : 0.0, r.after_fix ? 1.0 : 0.0, r.grad_norm_clipped,
                              r.grad_norm_multipliers, r.attn_logit_max, r.logz_mean, ratio("matrices"),
                              ratio("multipliers_qk"), ratio("multipliers_other"), ratio("biases_norms"),
                              ratio("embeddings")});
}

void TrainLog::append_heads(std::int64_t step, const at::Tensor& s_q, const at::Tensor& s_k, const at::Tensor& attn,
                            const at::Tensor& eff_ratio, const at::Tensor& attn_signed) {
  const at::Tensor a = attn.to(at::kDouble);
  const at::Tensor nan = at::full_like(a, std::numeric_limits<double>::quiet_NaN());
  const at::Tensor q = s_q.defined() ? s_q.to(at::kCPU, at::kDouble) : nan, k = s_k.defined() ? s_k.to(at::kCPU, at::kDouble) : nan;
  const at::Tensor rho = eff_ratio.defined() ? eff_ratio.to(at::kCPU, at::kDouble) : nan;
  const at::Tensor sa = attn_signed.defined() ? attn_signed.to(at::kCPU, at::kDouble) : nan;
  log_.append_heads(step, {to_mat(q), to_mat(k), to_mat(q * k), to_mat(a), to_mat(rho), to_mat(sa)});
}

}  // namespace gaugelab::gpt2
