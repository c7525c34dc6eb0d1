// Shared scalar-generic Eigen aliases for the symmetry core.
//
// Conventions used throughout src/core (and mirrored by the GPT-2 tier's tensor code):
//   * Row-vector convention for activations: Q = X·W_Q with X [tokens, d_model], W_Q [d_model, d_k].
//   * A factor pair (A, B) represents M = A·Bᵀ with A [m, r], B [n, r].
//   * Every function is generic in the scalar T (float or double); tests run in double, the trainer in float.
#pragma once

#include <Eigen/Dense>
#include <cstdint>

namespace gaugelab::core {

template <class T> using Mat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
template <class T> using Vec = Eigen::Matrix<T, Eigen::Dynamic, 1>;
template <class T> using RowVec = Eigen::Matrix<T, 1, Eigen::Dynamic>;

using Index = Eigen::Index;

}  // namespace gaugelab::core
