// The relu toy's sorted O(N + H) task pass against the dense O(N·H) one (the reference, itself checked
// against the core in test_relu_toy.cpp) on the same inputs: residual sums and every neuron's
// backward sums, on both implementations (AVX-512 where the build has it, and the portable loops),
// at random nets, at kinks placed exactly on samples, across jumps of the parameters (the boundary
// search starts from the previous step's), and over whole training runs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "core/random.hpp"
#include "toys/relu_kernel.hpp"
#include "toys/relu_sorted_pass.hpp"
#include "toys/relu_toy.hpp"

using namespace gaugelab;

namespace {

using Index = Eigen::Index;

// Same sums in another order: the difference is round-off, a few ulps of the sum of the |terms| each
// side adds up (N ≤ 200 terms of 1.1e-16 each, with room).
constexpr double kOrderTol = 1e-13;

// The dense reference of the pass: per neuron Σ r·1[z>0], Σ r·x·1[z>0] with z = fma(w1, x, b1), and the
// scale of each: the same sums over |terms|. A sample's residual r = f − y has the magnitude scale
// m = |b2| + |y| + Σ_active |w2|·(|w1·(x − x̄)| + |w1·x̄ + b1|), the terms the sorted pass adds (f as an
// affine piece about the data's middle x̄); so sb_i's rounding is bounded by kOrderTol·Σ_active_i m,
// a bound that only the neuron's own samples enter (a dead neuron's sums must be exactly 0).
struct DenseSums {
  double sse = 0, rsum = 0, sse_scale = 0, rsum_scale = 0;
  std::vector<double> sb, sx, sb_scale, sx_scale;
};
DenseSums dense(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& w1,
                const std::vector<double>& b1, const std::vector<double>& w2, double b2) {
  const size_t h = w1.size();
  const double xbar = x.empty() ? 0.0 : 0.5 * (*std::min_element(x.begin(), x.end()) + *std::max_element(x.begin(), x.end()));
  DenseSums d;
  d.sb.assign(h, 0.0);
  d.sx.assign(h, 0.0);
  d.sb_scale.assign(h, 0.0);
  d.sx_scale.assign(h, 0.0);
  for (size_t k = 0; k < x.size(); ++k) {
    double f = b2, m = std::fabs(b2) + std::fabs(y[k]);
    for (size_t i = 0; i < h; ++i)
      if (std::fma(w1[i], x[k], b1[i]) > 0.0) {
        f += w2[i] * std::fma(w1[i], x[k], b1[i]);
        m += std::fabs(w2[i]) * (std::fabs(w1[i] * (x[k] - xbar)) + std::fabs(std::fma(w1[i], xbar, b1[i])));
      }
    const double r = f - y[k];
    d.sse += r * r;
    d.rsum += r;
    d.sse_scale += m * m;
    d.rsum_scale += m;
    for (size_t i = 0; i < h; ++i)
      if (std::fma(w1[i], x[k], b1[i]) > 0.0) {
        d.sb[i] += r;
        d.sx[i] += r * x[k];
        d.sb_scale[i] += m;
        d.sx_scale[i] += m * std::fabs(x[k]);
      }
  }
  return d;
}

struct Net {
  std::vector<double> w1, b1, w2;
  double b2 = 0;
};

// A random net whose kinks fall among the samples:
// - every 5th neuron has w1 = 0 (constant z = b1), and every 10th b1 = 0 as well (z = 0: inactive);
// - every 7th has a kink exactly on a sample: w1 = 0.5 or −2, so b1 = −w1·x_k is exact and z = 0 there
//   (inactive by the strict predicate; a ≥ would count it);
// - every 6th has w2 a million times larger: a big term switched on and off along the samples.
Net random_net(core::Rng& rng, size_t h, const std::vector<double>& x) {
  Net n;
  for (size_t i = 0; i < h; ++i) {
    const double w = core::normal(rng);
    const double kink = x.empty() ? 0.0 : x[static_cast<size_t>(core::uniform(rng, 0, 1) * static_cast<double>(x.size() - 1))];
    double w1 = i % 5 == 4 ? 0.0 : w, b1 = core::normal(rng);
    if (i % 7 == 6) {
      w1 = w > 0 ? 0.5 : -2.0;
      b1 = -w1 * kink;
    } else if (i % 5 == 4 && i % 10 == 9) {
      b1 = 0.0;
    } else if (w1 != 0.0) {
      b1 = -w1 * kink + 0.1 * core::normal(rng);  // a kink near a sample
    }
    n.w1.push_back(w1);
    n.b1.push_back(b1);
    n.w2.push_back(core::normal(rng) * (i % 6 == 5 ? 1e6 : 1.0));
  }
  n.b2 = core::normal(rng);
  return n;
}

// The pass against the dense reference on n samples x ~ U[offset − 2, offset + 2] (an offset far from 0
// is where an affine piece about 0 would cancel), `nets` nets alternating jumps and small moves.
template <int H, toys::SortedPassPath P>
void check_pass_against_dense(size_t h, Index n, int nets, std::uint64_t seed, double offset = 0.0) {
  core::Rng rng(seed);
  std::vector<double> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
  for (auto& v : x) v = offset + core::uniform(rng, -2, 2);
  for (auto& v : y) v = core::normal(rng);
  if (n > 3) x[2] = x[1];  // a tie
  toys::ReluSortedPass<H, P> pass(x.data(), y.data(), n, static_cast<Index>(h));
  using Arr = typename toys::ReluSortedPass<H, P>::Arr;
  Arr w1(h), b1(h), w2(h), sb(h), sx(h);
  Net net;
  int dead = 0;
  for (int t = 0; t < nets; ++t) {
    // Alternate jumps to a fresh net with small moves of the last one (the search's two regimes).
    if (t % 3 == 0) net = random_net(rng, h, x);
    else
      for (size_t i = 0; i < h; ++i) net.b1[i] += 0.05 * core::normal(rng);
    for (size_t i = 0; i < h; ++i) {
      w1(static_cast<Index>(i)) = net.w1[i];
      b1(static_cast<Index>(i)) = net.b1[i];
      w2(static_cast<Index>(i)) = net.w2[i];
    }
    const auto s = pass.run(w1, b1, w2, net.b2, sb, sx);
    const auto d = dense(x, y, net.w1, net.b1, net.w2, net.b2);
    INFO("n " << n << " h " << h << " offset " << offset << " net " << t);
    CHECK(std::fabs(s.sse - d.sse) <= kOrderTol * d.sse_scale);
    CHECK(std::fabs(s.rsum - d.rsum) <= kOrderTol * d.rsum_scale);
    for (size_t i = 0; i < h; ++i) {
      INFO("neuron " << i << " w1 " << net.w1[i] << " b1 " << net.b1[i]);
      CHECK(std::fabs(sb(static_cast<Index>(i)) - d.sb[i]) <= kOrderTol * d.sb_scale[i]);
      CHECK(std::fabs(sx(static_cast<Index>(i)) - d.sx[i]) <= kOrderTol * d.sx_scale[i]);
      dead += d.sb_scale[i] == 0.0;
    }
  }
  CHECK(dead > 0);  // the exact-zero case was exercised
}

}  // namespace

TEST_CASE("relu sorted pass: first_true equals a linear scan from any start", "[toys][relu][sorted]") {
  for (Index n : {0, 1, 2, 7, 64, 200}) {
    for (Index answer = 0; answer <= n; ++answer) {
      const auto q = [&](Index k) {
        REQUIRE(k >= 0);
        REQUIRE(k < n);  // never evaluated outside [0, n)
        return k >= answer;
      };
      for (Index guess : {Index{-3}, Index{0}, answer / 2, answer, answer + 1, n - 1, n, n + 5}) {
        INFO("n " << n << " answer " << answer << " guess " << guess);
        CHECK(toys::first_true(q, n, guess) == answer);
      }
    }
  }
}

TEST_CASE("relu sorted pass: residual and backward sums equal the dense pass", "[toys][relu][sorted]") {
  // n = 1, 7 (one partial block), 8 (exact block, boundary at n on the spare block), 37, 200 (the protocol).
  for (Index n : {1, 7, 8, 37, 200}) {
    check_pass_against_dense<20, toys::kDefaultSortedPath>(20, n, 60, 100 + static_cast<std::uint64_t>(n));
    check_pass_against_dense<Eigen::Dynamic, toys::kDefaultSortedPath>(13, n, 60, 200 + static_cast<std::uint64_t>(n));
    check_pass_against_dense<20, toys::SortedPassPath::portable>(20, n, 60, 300 + static_cast<std::uint64_t>(n));
    check_pass_against_dense<Eigen::Dynamic, toys::SortedPassPath::portable>(13, n, 60, 400 + static_cast<std::uint64_t>(n));
  }
  // Data far from 0 (--train-lo/--train-hi allow it): the affine piece is taken about the data's middle.
  for (double offset : {1e3, 1e6}) {
    check_pass_against_dense<20, toys::kDefaultSortedPath>(20, 200, 30, 500, offset);
    check_pass_against_dense<20, toys::SortedPassPath::portable>(20, 37, 30, 600, offset);
  }
}

TEST_CASE("relu sorted pass: a large term switched off leaves the residuals where it is off exact",
          "[toys][relu][sorted]") {
  // Neuron 0 (w2 = 1e17) is active on x < 0.5 only; neuron 1 (w2 = 0) on x > 0.5, where f = b2 = 1 and
  // y = 0, so its sum Σ r over x ∈ {1, 2, 3} is 3 exactly. Without compensated sums the intercept after
  // switching neuron 0 off is 1 + 1e17·z − 1e17·z, which rounds to 0 or 16.
  const std::vector<double> x{0, 1, 2, 3}, y{0, 0, 0, 0};
  for (bool portable : {false, true}) {
    Eigen::ArrayXd w1(2), b1(2), w2(2), sb(2), sx(2);
    w1 << -1, 1;
    b1 << 0.5, -0.5;
    w2 << 1e17, 0;
    if (portable) toys::ReluSortedPass<Eigen::Dynamic, toys::SortedPassPath::portable>(x.data(), y.data(), 4, 2).run(w1, b1, w2, 1.0, sb, sx);
    else toys::ReluSortedPass<Eigen::Dynamic>(x.data(), y.data(), 4, 2).run(w1, b1, w2, 1.0, sb, sx);
    INFO("portable " << portable);
    CHECK(sb(1) == 3.0);
    CHECK(sx(1) == 6.0);
  }
}

TEST_CASE("relu sorted pass: non-finite training x is refused", "[toys][relu][sorted]") {
  const std::vector<double> x{0, NAN, 1}, y{0, 0, 0};
  CHECK_THROWS_AS(toys::ReluSortedPass<Eigen::Dynamic>(x.data(), y.data(), 3, 2), std::invalid_argument);
}

TEST_CASE("relu sorted pass: non-finite parameters give a non-finite loss, huge finite ones do not",
          "[toys][relu][sorted]") {
  const std::vector<double> x{-1, 0, 1}, y{0, 0, 0};
  toys::ReluSortedPass<Eigen::Dynamic> pass(x.data(), y.data(), 3, 2);
  Eigen::ArrayXd w1(2), b1(2), w2(2), sb(2), sx(2);
  w1 << 1, NAN;
  b1 << 0, 0;
  w2 << 1, 1;
  const auto s = pass.run(w1, b1, w2, 0.0, sb, sx);
  CHECK(std::isnan(s.sse));
  CHECK(std::isnan(sb(0)));
  // Parameters whose sum overflows but which are finite: dead neurons (w2 = 0), f = b2 = 1 everywhere.
  w1 << 1e308, 1e308;
  b1 << -1e308, -1e308;
  w2 << 0, 0;
  CHECK(pass.run(w1, b1, w2, 1.0, sb, sx).sse == 3.0);
}

TEST_CASE("relu toy: the sorted and the dense kernel train the same trajectory", "[toys][relu][sorted]") {
  // The protocol (small init, lr 1e-2) and O(1) nets at a larger rate, with and without the penalty,
  // fixed (H = 20) and dynamic (H = 9) width: losses and parameters after 300 steps agree to round-off
  // grown by the steps (a stable run does not amplify it).
  for (const auto& [init, hidden, lambda, lr] :
       {std::tuple{"small", 20, 0.0, 1e-2}, std::tuple{"small", 20, 0.2, 1e-2}, std::tuple{"torch", 20, 0.05, 5e-2},
        std::tuple{"he", 9, 0.0, 2e-2}}) {
    toys::ReluToyOptions o;
    o.init = init;
    o.hidden = hidden;
    o.lambda = lambda;
    o.lr = lr;
    core::Rng rng(5);
    const auto data = toys::make_relu_data(o, rng);
    const auto net = toys::init_relu_net(o, rng);
    o.kernel = "sorted";
    toys::ReluTrainer sorted(o, data, net);
    o.kernel = "dense";
    toys::ReluTrainer dense(o, data, net);
    INFO("init " << init << " H " << hidden << " lambda " << lambda << " lr " << lr);
    for (int t = 0; t < 300; ++t) {
      const auto a = sorted.step(), b = dense.step();
      REQUIRE(std::fabs(a.total - b.total) <= 1e-11 * (1 + std::fabs(b.total)));
    }
    const auto ps = sorted.net(), pd = dense.net();
    CHECK((ps.W1 - pd.W1).cwiseAbs().maxCoeff() < 1e-10);
    CHECK((ps.b1 - pd.b1).cwiseAbs().maxCoeff() < 1e-10);
    CHECK((ps.W2 - pd.W2).cwiseAbs().maxCoeff() < 1e-10);
    CHECK(std::fabs(sorted.val_mse() - dense.val_mse()) < 1e-10);
  }
}
