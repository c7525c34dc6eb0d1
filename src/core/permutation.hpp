// Head permutations: the discrete factor S_h of the attention gauge group (seed 001, Theorem 2).
//
// Convention used everywhere in the core ("gather"): a permutation `perm` of h heads is a vector
// of h distinct indices, and applying it to a list of heads produces new[j] = old[perm[j]].
// Applying p1 and then p2 equals applying compose_permutations(p1, p2), whose entry j is p1[p2[j]].
#pragma once

#include <string>
#include <vector>

#include "core/random.hpp"
#include "core/types.hpp"

namespace gaugelab::core {

using Permutation = std::vector<Index>;

/// The identity permutation of n items.
Permutation identity_permutation(Index n);

/// A uniformly random permutation of n items (Fisher–Yates driven by uniform01, so the draw is
/// the same on every standard library, unlike std::shuffle whose algorithm is unspecified).
Permutation random_permutation(Rng& rng, Index n);

/// True when perm holds each of 0..perm.size()-1 exactly once.
bool is_permutation(const Permutation& perm);

/// The inverse q with q[perm[j]] = j, so that applying perm then q is the identity.
Permutation inverse_permutation(const Permutation& perm);

/// "Apply first, then second" in the gather convention: result[j] = first[second[j]].
Permutation compose_permutations(const Permutation& first, const Permutation& second);

/// Indices that sort `keys` in descending order; ties keep their original order (stable), which
/// makes the result deterministic (seed 001, Algorithm 1 line 23: "ties broken lexicographically").
Permutation argsort_descending(const std::vector<double>& keys);

/// Throws std::invalid_argument naming `what` when perm is not a permutation of n items.
void require_permutation(const Permutation& perm, Index n, const std::string& what);

}  // namespace gaugelab::core
