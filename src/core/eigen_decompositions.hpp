// The Eigen decompositions the core's templates call (their compute steps for dense dynamic matrices)
// instantiated once per scalar type, so that each of the core's *_instances.cpp units (which include this
// header first) calls these instead of compiling the same eigensolve, QR, LU and SVD again. Two lists, kept
// apart by who calls them, so that the float half of each lands in the library of its callers:
// - the gauges' (GAUGES): SelfAdjointEigenSolver (gauge_fix_gram, gauge_lie, gauge_linalg,
//   update_factor_literature), the three QRs (gauge_linalg, quotient), both LUs (gauge_linalg's solves; the
//   row-major one is a transposed Mat<T> handed to partialPivLu in times_inverse). Double:
//   core/eigen_decompositions.cpp; float: core/float32/eigen_decompositions.cpp (gaugecore_float).
// - the updates' (UPDATES): BDCSVD (update_muon; its JacobiSVD for small blocks comes with it) and LLT
//   (quotient_solve). Double: core/eigen_decompositions.cpp; float: core/float32_updates/eigen_decompositions.cpp
//   (gaugecore_float_updates, off gaugelab-torch's path like the other float updates).
// The compute steps are unchanged Eigen code compiled with the same flags; only where they are compiled moves.
#pragma once

#include <Eigen/Dense>

#include "core/eigen_products.hpp"  // the products these decompositions and their callers form, compiled once too

// Each over Eigen::Matrix<T, -1, -1> (the core's Mat<T>), and PartialPivLU over its row-major twin too (a
// transposed Mat<T> handed to partialPivLu). PREFIX is empty (definition) or extern (declaration).
#define GAUGELAB_CORE_EIGEN_DECOMPOSITIONS_GAUGES(PREFIX, T) \
  PREFIX template Eigen::SelfAdjointEigenSolver<Eigen::Matrix<T, -1, -1>>& \
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix<T, -1, -1>>::compute<Eigen::Matrix<T, -1, -1>>( \
      const Eigen::EigenBase<Eigen::Matrix<T, -1, -1>>&, int); \
  PREFIX template void Eigen::HouseholderQR<Eigen::Matrix<T, -1, -1>>::computeInPlace(); \
  PREFIX template void Eigen::ColPivHouseholderQR<Eigen::Matrix<T, -1, -1>>::computeInPlace(); \
  PREFIX template void Eigen::CompleteOrthogonalDecomposition<Eigen::Matrix<T, -1, -1>>::computeInPlace(); \
  PREFIX template void Eigen::PartialPivLU<Eigen::Matrix<T, -1, -1>>::compute(); \
  PREFIX template void Eigen::PartialPivLU<Eigen::Matrix<T, -1, -1, Eigen::RowMajor>>::compute();

#define GAUGELAB_CORE_EIGEN_DECOMPOSITIONS_UPDATES(PREFIX, T) \
  PREFIX template Eigen::BDCSVD<Eigen::Matrix<T, -1, -1>>& Eigen::BDCSVD<Eigen::Matrix<T, -1, -1>>::compute( \
      const Eigen::Matrix<T, -1, -1>&, unsigned int); \
  PREFIX template Eigen::LLT<Eigen::Matrix<T, -1, -1>, Eigen::Lower>& \
  Eigen::LLT<Eigen::Matrix<T, -1, -1>, Eigen::Lower>::compute<Eigen::Matrix<T, -1, -1>>( \
      const Eigen::EigenBase<Eigen::Matrix<T, -1, -1>>&);

GAUGELAB_CORE_EIGEN_DECOMPOSITIONS_GAUGES(extern, double)
GAUGELAB_CORE_EIGEN_DECOMPOSITIONS_UPDATES(extern, double)
GAUGELAB_CORE_EIGEN_DECOMPOSITIONS_GAUGES(extern, float)
GAUGELAB_CORE_EIGEN_DECOMPOSITIONS_UPDATES(extern, float)
