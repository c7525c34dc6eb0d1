// --fit-micro-batch: the divisors and the search (against every threshold), the CPU estimate's choice for a
// budget set between two sizes, and what a fitted run must keep of the plain one: the step's sequences, its
// tokens per step, its validation loss and its training losses. The CUDA probe runs in scripts/gpu-bench.sh.
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <ATen/ops/cat.h>

#include "gpt2/train/micro_batch.hpp"
#include "gpt2/train/evaluate.hpp"
#include "gpt2/train/setup.hpp"
#include "io/run_log_reader.hpp"
#include "tests/support/own_dir.hpp"
#include "tests/support/process.hpp"
#include "tests/support/synthetic_corpus.hpp"
#include "tests/gpt2/gpt2_catch.hpp"
#include "support/unity_tu.hpp"

namespace GAUGELAB_TU {

using namespace gaugelab;
namespace fs = std::filesystem;

namespace {

const std::string kRoot = std::string(GAUGELAB_BINARY_DIR) + "/test_train_micro_batch";

std::string synthetic_data() {
  static const test::OwnDir own(kRoot + "/data");
  static const std::string dir = test::prepare_synthetic_corpus(own.path);
  return dir;
}

gpt2::TrainOptions tiny(const std::string& out) {
  gpt2::TrainOptions o;
  o.data = synthetic_data();
  o.run.out = out;
  o.run.force = true;
  o.run.threads = 1;
  o.model = "nano";
  o.n_layer = 1, o.n_head = 2, o.n_embd = 32, o.block_size = 16;
  o.compact_vocab = true;
  o.batch_size = 4, o.grad_accum = 3;  // 12 sequences per step: micro-batches of 1, 2, 3, 4, 6 or 12
  o.eval_batches = 2;
  o.max_iters = 2, o.warmup_iters = 1;
  o.peak_tflops = 1;
  return o;
}

io::Provenance prov() { return io::Provenance{"gpt2/train", {"test"}, nlohmann::json::object(), 0, 1}; }

}  // namespace

TEST_CASE("micro-batch: the divisors, ascending") {
  CHECK(gpt2::divisors(1) == std::vector<std::int64_t>{1});
  CHECK(gpt2::divisors(12) == std::vector<std::int64_t>{1, 2, 3, 4, 6, 12});
  CHECK(gpt2::divisors(49) == std::vector<std::int64_t>{1, 7, 49});
  CHECK(gpt2::divisors(480).size() == 24);  // nanoGPT's 12 x 40
  CHECK_THROWS(gpt2::divisors(0));
}

TEST_CASE("micro-batch: the search finds the largest divisor under every threshold, in ~log2 tries") {
  for (std::int64_t s = 1; s <= 120; ++s) {
    const std::vector<std::int64_t> d = gpt2::divisors(s);
    for (std::int64_t limit = 0; limit <= s + 1; ++limit) {
      int probes = 0;
      const std::int64_t got = gpt2::largest_fitting(d, [&](std::int64_t b) { return b <= limit; }, &probes);
      std::int64_t want = 0;
      for (const std::int64_t b : d)
        if (b <= limit) want = b;
      INFO("s " << s << " limit " << limit);
      REQUIRE(got == want);
      REQUIRE(probes <= static_cast<int>(std::ceil(std::log2(static_cast<double>(d.size()) + 1))));
    }
  }
}

TEST_CASE("micro-batch: a CUDA probe's need adds one activation peak for a CUDA graph's private pool") {
  gpt2::ProbePeak probe;
  probe.base = 3e9, probe.peak = 10e9;  // 7 GB of activations and gradients above what the run holds
  gpt2::FitRequest q;
  q.reserve_bytes = 0.5e9;
  CHECK(gpt2::probe_need_bytes(probe, q) == 10.5e9);  // eager: the peak and the reserve
  q.graph_pool = true;
  CHECK(gpt2::probe_need_bytes(probe, q) == 17.5e9);  // the graph's pool keeps the 7 GB for the run
  probe.peak = std::numeric_limits<double>::quiet_NaN();  // the probe ran out of memory
  CHECK(std::isnan(gpt2::probe_need_bytes(probe, q)));
}

TEST_CASE("micro-batch: a fitted run keeps the plain run's sequences, tokens and validation loss") {
  gpt2::TrainRun plain = gpt2::setup_train(tiny(kRoot + "/plain"), prov());
  REQUIRE(!plain.fit);
  CHECK(plain.micro_batch == 4);
  CHECK(plain.grad_accum == 3);
  auto& model = *plain.model;
  // A budget between what 3 and 4 sequences need by the CPU estimate: 3 of the 12 is the answer.
  const double need3 = gpt2::cpu_step_bytes_estimate(model.config(), model.num_parameters(), 3);
  const double need4 = gpt2::cpu_step_bytes_estimate(model.config(), model.num_parameters(), 4);
  REQUIRE(need3 < need4);
  gpt2::TrainOptions o = tiny(kRoot + "/fitted");
  o.fit_micro_batch = gpt2::Switch::on;
  o.fit_memory = 0.5 * (need3 + need4) / gpt2::fit_device_bytes(c10::Device(c10::kCPU), 1);
  gpt2::TrainRun fitted = gpt2::setup_train(o, prov());
  REQUIRE(fitted.fit);
  CHECK(fitted.micro_batch == 3);
  CHECK(fitted.grad_accum == 4);
  CHECK(fitted.fit->need_bytes == need3);
  CHECK(fitted.fit->probes <= 3);
  CHECK(fitted.tokens_per_step == plain.tokens_per_step);
  // The same 12 sequences per step, in the same order, split 4 x 3 instead of 3 x 4.
  for (std::int64_t step = 0; step < 3; ++step) {
    std::vector<at::Tensor> a, b;
    for (std::int64_t m = 0; m < 3; ++m) a.push_back(plain.train->batch(step, m));
    for (std::int64_t m = 0; m < 4; ++m) b.push_back(fitted.train->batch(step, m));
    CHECK(at::equal(at::cat(a, 0), at::cat(b, 0)));
  }
  // The step hooks see the unfitted split's last micro-batch (its 4 sequences), not the fitted one's 3.
  REQUIRE(!plain.hook_batches);
  REQUIRE(fitted.hook_batches);
  for (std::int64_t step = 0; step < 3; ++step)
    CHECK(at::equal(fitted.hook_batches->batch(step, fitted.hook_micro), plain.train->batch(step, 2)));
  // Validation keeps --batch-size's batches of 4, evaluated in pieces of 3 and 1: the same mean loss.
  const double v_plain = gpt2::evaluate(plain), v_fitted = gpt2::evaluate(fitted);
  CHECK(std::isfinite(v_plain));
  CHECK(v_fitted == Approx(v_plain).epsilon(1e-6));
}

TEST_CASE("micro-batch: train --fit-micro-batch on prints its choice, trains the plain run's losses, resumes alike") {
  const std::string data = synthetic_data();
  auto args = [&](const std::string& out) {  // 6 sequences per step: 3 micro-batches of 2 unfitted
    return "train --data " + data + " --out " + kRoot + "/" + out +
           " --model nano --n-layer 1 --n-head 2 --n-embd 32 --block-size 16 --compact-vocab --batch-size 2 "
           "--grad-accum 3 --eval-batches 1 --warmup-iters 1 --lr-decay-iters 10 --threads 1 --peak-tflops 1";
  };
  const test::ProcessResult plain = test::run_gaugelab(args("cli_plain") + " --max-iters 3 --force");
  REQUIRE(plain.status == 0);
  const test::ProcessResult fitted =
      test::run_gaugelab(args("cli_fitted") + " --fit-micro-batch on --max-iters 2 --ckpt-every 1 --force");
  INFO(fitted.output);
  REQUIRE(fitted.status == 0);
  // A tiny model on this machine: the whole step's 6 sequences fit in one micro-batch.
  CHECK(fitted.output.find("batch      6 x 16 tokens x 1 accumulation") != std::string::npos);
  CHECK(fitted.output.find("fitted     micro-batch 6 of the step's 6 sequences per rank (--batch-size 2; estimated") !=
        std::string::npos);
  const test::ProcessResult resumed =
      test::run_gaugelab(args("cli_fitted") + " --fit-micro-batch on --max-iters 3 --resume");
  INFO(resumed.output);
  REQUIRE(resumed.status == 0);
  CHECK(resumed.output.find("kept from the checkpoint") != std::string::npos);
  const io::RunLogReader fitted_log(kRoot + "/cli_fitted/log.h5");
  CHECK(std::get<std::int64_t>(fitted_log.summary().at("micro_batch")) == 6);
  CHECK(std::get<std::int64_t>(io::RunLogReader(kRoot + "/cli_plain/log.h5").summary().at("micro_batch")) == 2);
  const io::SeriesData a = io::RunLogReader(kRoot + "/cli_plain/log.h5").series();
  const io::SeriesData b = fitted_log.series();
  REQUIRE(a.step.size() == 3);
  REQUIRE(b.step.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {  // the same sequences and mean loss: rounding apart
    INFO("step " << i + 1);
    CHECK(b.at("loss")[i] == Approx(a.at("loss")[i]).epsilon(1e-5));
    CHECK(b.at("grad_norm")[i] == Approx(a.at("grad_norm")[i]).epsilon(1e-4));
  }

  const test::ProcessResult none =
      test::run_gaugelab(args("cli_none") + " --max-iters 1 --force --fit-micro-batch on --fit-memory 1e-12");
  INFO(none.output);
  CHECK(none.status != 0);
  CHECK(none.output.find("--fit-micro-batch: not even one sequence of 16 tokens fits in --fit-memory 1e-12 x") !=
        std::string::npos);
  CHECK(test::count_lines(none.output.substr(none.output.find("error"))) == 1);
  const test::ProcessResult alone = test::run_gaugelab(args("cli_alone") + " --max-iters 1 --force --fit-memory 0.5");
  CHECK(alone.status == 2);  // --fit-memory without the fit is refused, not ignored
  CHECK(alone.output.find("--fit-memory") != std::string::npos);
}

}  // namespace GAUGELAB_TU
