// The harness's head source and loss: random GPT-2-shaped heads, the checkpoint-loader contract, the
// loss depends on the represented objects only, its gradient, and forward invariance under gauges.
#include "harness_test_support.hpp"

#include <stdexcept>

#include "core/gauge_sampling.hpp"
#include "harness/diag_cell.hpp"
#include "harness/head_problem.hpp"
#include "harness/head_source.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab;
using harness::HeadFactors;
using Mat = core::Mat<double>;

namespace {

// Central differences with step h = 1e-5 on an O(1) loss: truncation ~h² ≈ 1e-10 and cancellation
// ~u/h ≈ 1e-11 relative to the gradient entries; 1e-6 relative leaves margin and still catches a
// wrong factor or transpose (errors of order 1).
constexpr double kFdTol = 1e-6;
// A loss computed from two representatives of one (M_QK, M_VO): O(1) values formed through products
// with condition number ≤ κ = 100, so a few hundred roundings of size u·κ at most.
constexpr double kLossInvariance = 1e-11;

core::AttentionHead<double> head(std::int64_t d, std::int64_t r, bool biases, std::uint64_t seed) {
  harness::RandomHeadOptions o;
  o.d_model = d;
  o.d_head = r;
  o.biases = biases;
  o.seed = seed;
  return harness::random_head(o);
}

}  // namespace

TEST_CASE("head source: random heads have GPT-2 shapes, chosen conditioning, optional biases", "[harness][head]") {
  harness::RandomHeadOptions o;  // defaults: d = 768, d_h = 64
  o.cond = 50.0;
  const auto h = harness::random_head(o);
  CHECK(h.d_model() == 768);
  CHECK(h.d_k() == 64);
  CHECK(h.W_o.rows() == 64);
  CHECK(h.W_o.cols() == 768);
  CHECK(h.b_q.norm() > 0.0);
  const Eigen::JacobiSVD<Mat> svd(h.W_q);
  const double cond = svd.singularValues()(0) / svd.singularValues()(63);
  CHECK(cond > 50.0);    // a Gaussian block (≈ 1.8) times an exact-κ mixing
  CHECK(cond < 50.0 * 2.5);
  o.biases = false;
  CHECK(harness::random_head(o).b_v.norm() == 0.0);
  o.cond = 0.5;
  CHECK_THROWS_AS(harness::random_head(o), std::invalid_argument);
}

TEST_CASE("head source: checkpoint heads come through the loader, or fail in one line without one", "[harness][head]") {
  const harness::RandomHeadOptions random;
  const auto fake = head(32, 4, true, 3);
  bool called = false;
  const harness::CheckpointHeadLoader loader = [&](const std::string& ckpt, std::int64_t layer, std::int64_t h) {
    called = ckpt == "ck" && layer == 2 && h == 5;
    return fake;
  };
  const auto got = harness::resolve_head("ck", 2, 5, random, loader);
  CHECK(called);
  CHECK(got.W_q == fake.W_q);
  try {
    (void)harness::resolve_head("ck", 0, 0, random, {});
    FAIL("an empty loader must refuse --checkpoint");
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("cannot read checkpoints") != std::string::npos);
    CHECK(msg.find('\n') == std::string::npos);
  }
  auto bad = fake;
  bad.W_k(0, 0) = std::nan("");
  CHECK_THROWS_AS(harness::resolve_head("ck", 0, 0, random, [&](const std::string&, std::int64_t, std::int64_t) { return bad; }),
                  std::runtime_error);
  CHECK(harness::resolve_head("", 0, 0, random, {}).d_model() == 768);  // no checkpoint: the random head
}

TEST_CASE("head problem: the loss sees only the represented objects", "[harness][loss]") {
  for (const bool biases : {true, false})
    for (const char* kind : {"data", "attention", "matrix"}) {
      INFO("loss " << kind << " biases " << biases);
      const auto student = head(40, 6, biases, 1), teacher = head(40, 6, biases, 2);
      core::Rng rng(5);
      const Mat x = core::randn<double>(rng, 12, 40);
      const harness::HeadProblem p(harness::parse_loss_kind(kind), teacher, x, biases, true);
      const HeadFactors f = harness::factors_of(student, biases);
      const double l0 = p.loss(f);
      CHECK(l0 > 0.0);
      CHECK(p.loss(harness::factors_of(teacher, biases)) < 1e-20);  // the teacher is the minimiser
      const Mat S = core::random_gl<double>(rng, 6, 100.0), T = core::random_gl<double>(rng, 6, 100.0);
      CHECK(std::abs(p.loss(harness::gauge_factors(f, S, T)) - l0) <= kLossInvariance * l0);
    }
}

TEST_CASE("head problem: the gradient matches central differences", "[harness][loss]") {
  for (const char* kind : {"data", "attention", "matrix"}) {
    INFO("loss " << kind);
    const auto student = head(20, 3, true, 4), teacher = head(20, 3, true, 6);
    core::Rng rng(9);
    const harness::HeadProblem p(harness::parse_loss_kind(kind), teacher, core::randn<double>(rng, 7, 20), true, true);
    const HeadFactors f = harness::factors_of(student, true);
    double l = 0;
    const HeadFactors g = p.gradient(f, &l);
    CHECK(std::abs(l - p.loss(f)) <= 1e-14 * l);
    const double h = 1e-5;
    for (int i = 0; i < harness::kFactors; ++i)
      for (const auto& [r, c] : {std::pair<core::Index, core::Index>{0, 0}, {5, 2}, {f[i].rows() - 1, 1}}) {
        HeadFactors fp = f, fm = f;
        fp[i](r, c) += h;
        fm[i](r, c) -= h;
        const double fd = (p.loss(fp) - p.loss(fm)) / (2 * h);
        CHECK(std::abs(fd - g[i](r, c)) <= kFdTol * std::max(1.0, g[i].cwiseAbs().maxCoeff()));
      }
  }
}

// The attention loss's teacher output is the core's forward pass of the teacher head (core::head_output:
// causal softmax of the logits, the value path through it): one formula, two codes, equal to rounding. A
// student at the teacher's output has zero loss and zero gradient.
TEST_CASE("head problem: the attention loss is the core's head output, softmax and all", "[harness][loss]") {
  for (const bool biases : {true, false}) {
    const auto student = head(24, 4, biases, 11), teacher = head(24, 4, biases, 12);
    core::Rng rng(13);
    const Mat x = core::randn<double>(rng, 9, 24);
    const harness::HeadProblem p(harness::LossKind::attention, teacher, x, biases, true);
    const Mat y_s = core::head_output(student, x, core::AttentionOptions{true});
    const Mat y_t = core::head_output(teacher, x, core::AttentionOptions{true});
    const double expect = 0.5 * (y_s - y_t).squaredNorm() / static_cast<double>(y_s.size());
    INFO("biases " << biases);
    CHECK(p.loss(harness::factors_of(student, biases)) == Approx(expect).epsilon(1e-12));
    double l = 1;
    const HeadFactors g = p.gradient(harness::factors_of(teacher, biases), &l);
    CHECK(l < 1e-28);
    for (int i = 0; i < harness::kFactors; ++i) CHECK(g[i].cwiseAbs().maxCoeff() < 1e-14);
  }
}

TEST_CASE("forward invariance: logits and head output unchanged under every family", "[harness][forward]") {
  auto o = test::small_options({"diagonal", "orthogonal", "general"}, {1, 100, 1e4}, {"sgd"}, {"none"});
  const harness::HeadDiagnostic diag(o, test::small_head(o), 1);
  core::Rng rng(3);
  for (const char* fam : {"diagonal", "orthogonal", "general"})
    for (double kappa : {1.0, 100.0, 1e4}) {
      harness::GaugePair g{harness::draw_gauge(fam, kappa, 8, rng), harness::draw_gauge(fam, kappa, 8, rng)};
      const double err = diag.forward_error(g);
      INFO(fam << " kappa " << kappa << " forward error " << err);
      // Round-off of products through S and S⁻ᵀ: about u·κ(S) per entry, times a small constant.
      CHECK(err <= 1e-13 * std::max(1.0, kappa) + 1e-14);
      if (std::string(fam) != "orthogonal") {
        const Eigen::JacobiSVD<Mat> svd(g.S);
        CHECK(svd.singularValues()(0) / svd.singularValues()(7) == Approx(kappa).epsilon(1e-9));
      }
    }
}

TEST_CASE("a given teacher and real input rows replace the random ones", "[harness][teacher]") {
  for (const char* loss : {"data", "attention"}) {
    auto o = test::small_options({"general"}, {10}, {"sgd"}, {"none"});
    o.loss = loss;
    const auto head = test::small_head(o);
    core::Rng rng(5);
    const Mat rows = core::randn<double>(rng, o.tokens * (1 + o.warmup), head.d_model());
    // the head as its own teacher: nothing to learn, on any inputs
    const harness::HeadDiagnostic self(o, head, 1, harness::HeadData{head, rows});
    CHECK(self.loss_before() < 1e-28);
    // another head as teacher: a loss, which depends on the rows given
    const auto other = test::small_head(o, 99);
    const harness::HeadDiagnostic a(o, head, 1, harness::HeadData{other, rows});
    const harness::HeadDiagnostic b(o, head, 1, harness::HeadData{other, Mat(2.0 * rows)});
    CHECK(a.loss_before() > 1e-6);
    CHECK(std::abs(a.loss_before() - b.loss_before()) > 1e-6 * a.loss_before());
    // fewer rows than one batch is refused
    CHECK_THROWS_AS(harness::HeadDiagnostic(o, head, 1, harness::HeadData{other, Mat(rows.topRows(o.tokens - 1))}),
                    std::invalid_argument);
  }
}

}  // namespace GAUGELAB_TU
