#include "core/permutation.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace gaugelab::core {

Permutation identity_permutation(Index n) {
  Permutation p(static_cast<std::size_t>(n));
  std::iota(p.begin(), p.end(), Index{0});
  return p;
}

Permutation random_permutation(Rng& rng, Index n) {
  Permutation p = identity_permutation(n);
  for (Index i = n - 1; i > 0; --i) {
    // j uniform in {0, ..., i}; the min() guards the (measure-zero) rounding of uniform01 * (i+1).
    const Index j = std::min<Index>(i, static_cast<Index>(uniform01(rng) * static_cast<double>(i + 1)));
    std::swap(p[static_cast<std::size_t>(i)], p[static_cast<std::size_t>(j)]);
  }
  return p;
}

bool is_permutation(const Permutation& perm) {
  std::vector<bool> seen(perm.size(), false);
  for (Index v : perm) {
    if (v < 0 || static_cast<std::size_t>(v) >= perm.size() || seen[static_cast<std::size_t>(v)]) return false;
    seen[static_cast<std::size_t>(v)] = true;
  }
  return true;
}

Permutation inverse_permutation(const Permutation& perm) {
  require_permutation(perm, static_cast<Index>(perm.size()), "inverse_permutation");
  Permutation q(perm.size());
  for (std::size_t j = 0; j < perm.size(); ++j) q[static_cast<std::size_t>(perm[j])] = static_cast<Index>(j);
  return q;
}

Permutation compose_permutations(const Permutation& first, const Permutation& second) {
  require_permutation(first, static_cast<Index>(first.size()), "compose_permutations (first)");
  require_permutation(second, static_cast<Index>(first.size()), "compose_permutations (second)");
  Permutation r(first.size());
  for (std::size_t j = 0; j < first.size(); ++j) r[j] = first[static_cast<std::size_t>(second[j])];
  return r;
}

Permutation argsort_descending(const std::vector<double>& keys) {
  Permutation p = identity_permutation(static_cast<Index>(keys.size()));
  std::stable_sort(p.begin(), p.end(), [&](Index a, Index b) {
    return keys[static_cast<std::size_t>(a)] > keys[static_cast<std::size_t>(b)];
  });
  return p;
}

void require_permutation(const Permutation& perm, Index n, const std::string& what) {
  if (static_cast<Index>(perm.size()) != n || !is_permutation(perm))
    throw std::invalid_argument(what + ": expected a permutation of " + std::to_string(n) + " heads");
}

}  // namespace gaugelab::core
