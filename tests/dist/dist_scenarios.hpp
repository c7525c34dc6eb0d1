// What the data-parallel tests compute, shared by the parent test and the worker processes:
// deterministic tensors per rank, and a small GPT trained with SGD on a slice of a fixed batch.
#pragma once

#include <cstdint>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/grad_mode.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/zeros_like.h>

#include "gpt2/dist/data_parallel.hpp"
#include "gpt2/model/model.hpp"

namespace gaugelab::test::dist {

/// Tensors of mixed shapes and dtypes, N(0,1) from `seed`: [3,5] f32, [7] f32, [2,2,2] f64,
/// [1000] f32 (larger than the tests' small bucket: a bucket of its own), [4] f32.
inline std::vector<at::Tensor> make_tensors(std::uint64_t seed) {
  auto gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const std::vector<std::pair<std::vector<std::int64_t>, at::ScalarType>> spec{
      {{3, 5}, at::kFloat}, {{7}, at::kFloat}, {{2, 2, 2}, at::kDouble}, {{1000}, at::kFloat}, {{4}, at::kFloat}};
  std::vector<at::Tensor> out;
  for (const auto& [shape, dt] : spec) {
    at::Tensor t = at::empty(shape, at::TensorOptions().dtype(dt));
    t.normal_(0.0, 1.0, gen);
    out.push_back(t);
  }
  return out;
}
/// In average_gradients scenarios: tensor kGradMissingOnRank1 has no gradient on rank 1, tensor
/// kGradMissingEverywhere has none on any rank.
inline constexpr std::size_t kGradMissingOnRank1 = 1;
inline constexpr std::size_t kGradMissingEverywhere = 4;
/// Gradient bucket of the tensor scenarios: 256 bytes, so the five tensors need several buckets.
inline constexpr std::int64_t kSmallBucketBytes = 256;

/// The training scenario: a nano GPT (2 layers, 2 heads, d 64, vocabulary 500), a fixed batch of
/// kBatch sequences of kSeq tokens, plain SGD with momentum for kSteps steps.
struct TrainSetup {
  static constexpr std::int64_t kBatch = 4;    // global batch (rows); each of 2 ranks takes half
  static constexpr std::int64_t kSeq = 16;     // tokens per row
  static constexpr int kSteps = 12;
  static constexpr double kLr = 0.3;           // large enough that the loss visibly moves in 12 steps
  static constexpr double kMomentum = 0.9;
  static constexpr std::uint64_t kModelSeed = 7;
  static constexpr std::uint64_t kDataSeed = 11;
};

inline gpt2::ModelConfig train_config() {
  gpt2::ModelConfig c = gpt2::ModelConfig::preset("nano");
  c.vocab_size = 500;
  return c;
}

/// Trains on rows [row_begin, row_end) of the fixed batch, with gradients averaged by `dp`, and
/// returns the loss per step averaged over ranks (the logged loss). The model is initialised from
/// kModelSeed + init_offset, so ranks with an offset start elsewhere until broadcast_parameters.
/// `final_params` (optional) receives copies of the trained parameters.
inline std::vector<double> train_curve(gpt2::DataParallel& dp, std::int64_t row_begin, std::int64_t row_end,
                                       std::uint64_t init_offset, std::vector<at::Tensor>* final_params) {
  using S = TrainSetup;
  gpt2::GPT model(train_config(), S::kModelSeed + init_offset);
  std::vector<at::Tensor> params;
  for (auto& [name, t] : model.named_parameters()) params.push_back(t);
  dp.broadcast_parameters(params);
  auto gen = at::make_generator<at::CPUGeneratorImpl>(S::kDataSeed);
  const at::Tensor tokens = at::randint(0, train_config().vocab_size, {S::kBatch, S::kSeq + 1}, gen);  // [B, T+1]
  const at::Tensor rows = tokens.narrow(0, row_begin, row_end - row_begin);
  const at::Tensor idx = rows.narrow(1, 0, S::kSeq).contiguous();      // [b, T]
  const at::Tensor targets = rows.narrow(1, 1, S::kSeq).contiguous();  // [b, T]
  std::vector<at::Tensor> momentum;
  for (const auto& p : params) momentum.push_back(at::zeros_like(p));
  std::vector<double> curve;
  for (int step = 0; step < S::kSteps; ++step) {
    for (auto& p : params) p.mutable_grad() = at::Tensor();
    at::Tensor loss = model.loss(idx, targets);
    loss.backward();
    dp.average_gradients(params);
    curve.push_back(dp.all_reduce_mean(loss.item<double>()));
    at::NoGradGuard no_grad;
    for (std::size_t i = 0; i < params.size(); ++i) {
      momentum[i].mul_(S::kMomentum).add_(params[i].grad());
      params[i].sub_(momentum[i], S::kLr);
    }
  }
  if (final_params) {
    final_params->clear();
    for (const auto& p : params) final_params->push_back(p.detach().clone());
  }
  return curve;
}

/// Writes "key v1 v2 ..." with every value in hexfloat (exact round trip).
inline void write_values(std::ostream& out, const std::string& key, const std::vector<double>& v) {
  out << key;
  char buf[64];
  for (double x : v) {
    std::snprintf(buf, sizeof buf, " %a", x);
    out << buf;
  }
  out << "\n";
}

inline std::vector<double> values_of(const at::Tensor& t) {
  at::Tensor c = t.detach().to(at::kDouble).contiguous().reshape({-1});
  return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
}

}  // namespace gaugelab::test::dist
