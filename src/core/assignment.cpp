#include "core/assignment.hpp"

#include <cmath>
#include <cstdint>

#include <dlib/optimization/max_cost_assignment.h>

#include "core/gauge_linalg.hpp"

namespace gaugelab::core {

Permutation max_score_assignment(const Mat<double>& score) {
  require(score.rows() == score.cols(), "max_score_assignment", "the score matrix must be square [n, n]");
  require(score.allFinite(), "max_score_assignment", "the score matrix has a non-finite entry");
  const Index n = score.rows();
  if (n == 0) return {};
  const double top = score.cwiseAbs().maxCoeff();
  if (top == 0) return identity_permutation(n);  // every assignment ties
  const double scale = std::ldexp(1.0, 40) / top;
  dlib::matrix<std::int64_t> c(n, n);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < n; ++j) c(i, j) = static_cast<std::int64_t>(std::llround(score(i, j) * scale));
  const std::vector<long> a = dlib::max_cost_assignment(c);
  Permutation p(a.begin(), a.end());
  require_permutation(p, n, "max_score_assignment (dlib's answer)");
  return p;
}

Permutation min_cost_assignment(const Mat<double>& cost) { return max_score_assignment(-cost); }

}  // namespace gaugelab::core
