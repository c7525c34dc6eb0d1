// The linear assignment problem: the discrete half of aligning two models (seed 001 Prop. 47 and
// App. H.3 Algorithm 3, "HUNGARIANALGORITHM(D)"; hidden-unit weight matching, Ainsworth et al.).
//
// Solved by dlib's max_cost_assignment (the Hungarian algorithm, O(n³); Debian's libdlib-dev, used
// header-only), not by hand. dlib needs integer costs (its floating-point path may not terminate
// on rounding), so scores are scaled to int64 with 2^40 steps per max|score|: two assignments whose
// totals differ by less than n·2^-40 of the largest score may be confused — far below the fp32 level
// the scores come from.
#pragma once

#include "core/permutation.hpp"
#include "core/types.hpp"

namespace gaugelab::core {

/// The permutation p maximising Σ_j score(j, p[j]) for a square score [n, n] (rows: the positions to
/// fill, columns: the candidates). In the gather convention of permutation.hpp: candidates reordered by
/// p put candidate p[j] at position j. Non-finite scores throw.
Permutation max_score_assignment(const Mat<double>& score);

/// The permutation p minimising Σ_j cost(j, p[j]) (max_score_assignment of −cost).
Permutation min_cost_assignment(const Mat<double>& cost);

}  // namespace gaugelab::core
