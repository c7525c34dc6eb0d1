// `gaugelab eval`: mean validation loss over fixed batches of a token file, and/or the logits of one
// given token sequence (optionally dumped to HDF5 for cross-implementation checks).
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <stdexcept>

#include <ATen/core/grad_mode.h>
#include <ATen/ops/empty.h>

#include "data/token_files.hpp"
#include "gpt2/use/loaded_model.hpp"
#include "io/options.hpp"
#include "io/run_flags.hpp"
#include "io/run_log.hpp"

namespace gaugelab::gpt2 {


EvalResult run_eval(const EvalOptions& o, io::Provenance prov) {
  if (o.data.empty() && o.tokens.empty())
    throw io::UsageError("eval: give --data FILE (validation loss) or --tokens IDS (logits of one sequence)");
  if (!o.dump_logits.empty() && o.tokens.empty()) throw io::UsageError("eval: --dump-logits needs --tokens");
  if (!o.dump_logits.empty()) io::prepare_output_path(o.dump_logits, o.run.force, {o.checkpoint, o.data}, "--dump-logits");
  if (!o.run.out.empty()) io::prepare_output_path(o.run.out, o.run.force, {o.checkpoint, o.data, o.dump_logits});
  if (!o.data.empty()) check_window_count(o.data, o.batch_size, o.batches, o.seq_len);  // before the model loads
  prov.threads = apply_torch_threads(o.run.threads);
  std::cerr << "threads    " << prov.threads << "\n";
  const auto t0 = std::chrono::steady_clock::now();
  LoadedModel lm = load_for_run(o.checkpoint, o.model);
  const ModelConfig& cfg = lm.model->config();
  at::NoGradGuard no_grad;
  EvalResult res;
  res.val_loss = res.sequence_loss = std::numeric_limits<double>::quiet_NaN();

  if (!o.tokens.empty()) {
    const std::vector<std::int64_t> ids = parse_token_ids(o.tokens, lm.ids, "--tokens");  // GPT-2 ids
    const auto T = static_cast<std::int64_t>(ids.size());
    if (T > cfg.block_size)
      throw io::UsageError("--tokens: " + std::to_string(T) + " tokens exceed the context " + std::to_string(cfg.block_size));
    std::vector<std::int64_t> model_ids;
    for (const std::int64_t id : ids) model_ids.push_back(lm.ids.to_model(id, "--tokens"));
    const at::Tensor idx = token_tensor(model_ids, lm.device);
    at::Tensor logits;
    {
      AutocastScope autocast(lm.device, lm.precision);
      logits = lm.model->logits(idx);  // [1, T, V] float32
    }
    if (T >= 2) res.sequence_loss = lm.model->loss(idx.narrow(1, 0, T - 1), idx.narrow(1, 1, T - 1)).item<double>();
    const std::int64_t next = lm.ids.to_gpt2(logits.select(1, T - 1).argmax(-1).item<std::int64_t>());
    std::cout << "sequence   " << T << " tokens; next-token loss " << res.sequence_loss << "; predicted next id " << next
              << "\n";
    if (!o.dump_logits.empty()) {
      prov.kind = "gpt2/eval";
      io::RunLog log = io::RunLog::create(o.dump_logits, prov, o.run.force);
      log.declare_array("tokens", {static_cast<std::uint64_t>(T)}, io::DType::i64);
      log.declare_array("logits", {static_cast<std::uint64_t>(T), static_cast<std::uint64_t>(cfg.vocab_size)});
      // a compact model's logit column k belongs to GPT-2 id vocab_ids[k]
      if (lm.ids.compact())
        log.declare_array("vocab_ids", {static_cast<std::uint64_t>(lm.ids.ids().size())}, io::DType::i64);
      log.start();
      if (lm.ids.compact()) log.write_array("vocab_ids", lm.ids.ids().data(), lm.ids.ids().size());
      log.write_array("tokens", ids.data(), ids.size());
      const at::Tensor l64 = logits.squeeze(0).to(at::kCPU, at::kDouble).contiguous();
      log.write_array("logits", l64.data_ptr<double>(), static_cast<std::size_t>(l64.numel()));
      log.set_summary("sequence_loss", res.sequence_loss);
      log.set_summary("predicted_next", next);
      log.close();
      std::cout << "logits     [" << T << ", " << cfg.vocab_size << "] -> " << o.dump_logits << "\n";
    }
  }

  if (!o.data.empty()) {
    const std::int64_t T = o.seq_len > 0 ? o.seq_len : cfg.block_size;
    if (T > cfg.block_size)
      throw io::UsageError("--seq-len " + std::to_string(T) + " exceeds the context " + std::to_string(cfg.block_size));
    std::vector<double> per_batch;
    res.val_loss = validation_loss(lm, o.data, o.batch_size, o.batches, T, per_batch);
    res.val_tokens = o.batches * o.batch_size * T;
    std::cout << "val loss   " << res.val_loss << " over " << o.batches << " batches of " << o.batch_size << " x " << T
              << " tokens (" << res.val_tokens << " predictions) from " << o.data << "\n";
    if (!o.run.out.empty()) {
      prov.kind = "gpt2/eval";
      io::RunLog log = io::RunLog::create(o.run.out, prov, o.run.force);
      log.declare_series({"loss"});
      log.start();
      for (std::size_t i = 0; i < per_batch.size(); ++i) log.append_series(static_cast<std::int64_t>(i), {per_batch[i]});
      log.set_summary("val_loss", res.val_loss);
      log.set_summary("val_tokens", res.val_tokens);
      log.close();
      std::cout << "log        " << o.run.out << "\n";
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "time       " << secs << " s\n";
  return res;
}

}  // namespace gaugelab::gpt2
