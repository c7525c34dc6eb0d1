#include "gpt2/train/log.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <optional>
#include <stdexcept>

#include <ATen/TensorOperators.h>
#include <ATen/ops/full_like.h>
#include <ATen/ops/stack.h>

#include "io/run_log_reader.hpp"

namespace gaugelab::gpt2 {

namespace {

const std::vector<std::string> kSeries = {"loss",     "lr",        "grad_norm",  "tokens_per_s", "tokens",
                                          "val_loss", "drift_max", "drift_mean", "spike",        "after_fix",
                                          "grad_norm_clipped", "grad_norm_multipliers", "attn_logit_max",
                                          "logz_mean", "update_ratio_matrices", "update_ratio_multipliers_qk",
                                          "update_ratio_multipliers_other", "update_ratio_biases_norms",
                                          "update_ratio_embeddings"};
const std::vector<std::string> kHeads = {"s_q", "s_k", "s_qk", "attn_logit_max"};

core::Mat<double> to_mat(const at::Tensor& t) {  // [L, H]
  const at::Tensor c = t.detach().to(at::kCPU, at::kDouble).contiguous();
  core::Mat<double> m(c.size(0), c.size(1));
  const double* p = c.data_ptr<double>();
  for (std::int64_t i = 0; i < c.size(0); ++i)
    for (std::int64_t j = 0; j < c.size(1); ++j) m(i, j) = p[i * c.size(1) + j];
  return m;
}

}  // namespace

void TrainLog::declare(io::RunLog& log, int layers, int heads) {
  log.declare_series(kSeries);
  log.declare_heads(kHeads, layers, heads);
  log.start();
}

TrainLog TrainLog::create(const std::string& path, const io::Provenance& prov, bool force, int layers, int heads) {
  io::RunLog log = io::RunLog::create(path, prov, force);
  declare(log, layers, heads);
  return TrainLog(std::move(log));
}

TrainLog TrainLog::rebuild(const std::string& path, const io::Provenance& prov, std::int64_t up_to_step, int layers,
                           int heads) {
  namespace fs = std::filesystem;
  const std::string src = path + ".resume-src";
  if (!fs::exists(src)) {
    if (!fs::exists(path)) return create(path, prov, true, layers, heads);
    fs::rename(path, src);
  }
  TrainLog out = create(path, prov, true, layers, heads);
  std::optional<io::RunLogReader> reader;
  try {
    reader.emplace(src);
  } catch (const std::exception& e) {
    // A writer killed before its first flush leaves an unreadable file; that happens only before the
    // first step, so there is nothing to copy unless a checkpoint says otherwise.
    if (up_to_step > 0)
      throw std::runtime_error(src + ": cannot read the rows of the run being resumed (" + e.what() + ")");
  }
  if (reader) {
    const io::RunLogReader& in = *reader;
    const io::SeriesData s = in.series();
    for (std::size_t r = 0; r < s.step.size() && s.step[r] <= up_to_step; ++r) {
      std::map<std::string, double> row;
      for (const std::string& name : kSeries) {  // a log written before a series existed: NaN there
        const bool has = std::find(s.names.begin(), s.names.end(), name) != s.names.end();
        row[name] = has ? s.at(name)[r] : std::numeric_limits<double>::quiet_NaN();
      }
      out.log_.append_series_named(s.step[r], row);
    }
    const std::vector<std::int64_t> hs = in.heads_step();
    if (!hs.empty()) {
      std::vector<io::HeadsData> hd;
      const std::vector<std::string> have = in.heads_names();
      for (const std::string& name : kHeads) {  // a log from before a dataset existed: NaN there
        if (std::find(have.begin(), have.end(), name) != have.end()) {
          hd.push_back(in.heads(name));
        } else {
          io::HeadsData nan_heads{hs.size(), static_cast<std::uint64_t>(layers), static_cast<std::uint64_t>(heads), {}};
          nan_heads.values.assign(hs.size() * layers * heads, std::numeric_limits<double>::quiet_NaN());
          hd.push_back(std::move(nan_heads));
        }
      }
      for (std::size_t r = 0; r < hs.size() && hs[r] <= up_to_step && r < hd[0].records; ++r) {
        std::vector<core::Mat<double>> rec;
        for (const io::HeadsData& d : hd) {
          core::Mat<double> m(layers, heads);
          for (int l = 0; l < layers; ++l)
            for (int h = 0; h < heads; ++h) m(l, h) = d.at(r, l, h);
          rec.push_back(m);
        }
        out.log_.append_heads(hs[r], rec);
      }
    }
  }
  out.log_.flush();
  fs::remove(src);
  return out;
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

void TrainLog::append_heads(std::int64_t step, const at::Tensor& s_q, const at::Tensor& s_k, const at::Tensor& attn) {
  const at::Tensor a = attn.to(at::kDouble);
  const at::Tensor nan = at::full_like(a, std::numeric_limits<double>::quiet_NaN());
  const at::Tensor q = s_q.defined() ? s_q.to(at::kCPU, at::kDouble) : nan, k = s_k.defined() ? s_k.to(at::kCPU, at::kDouble) : nan;
  log_.append_heads(step, {to_mat(q), to_mat(k), to_mat(q * k), to_mat(a)});
}

}  // namespace gaugelab::gpt2
