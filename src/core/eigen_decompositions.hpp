// The Eigen decompositions the core's templates call (their compute steps for dense dynamic matrices)
// instantiated once per scalar type: core/eigen_decompositions.cpp for double, core/float32/eigen_decompositions.cpp
// for float. The core's *_instances.cpp units include this header first, so each of them calls these
// instead of compiling the same eigensolve, QR, LU and SVD again (BDCSVD's JacobiSVD for small blocks comes
// with it). The compute steps are unchanged Eigen code compiled with the same flags; only where they are
// compiled moves.
#pragma once

#include <Eigen/Dense>

// M: a column-major dynamic matrix of T (the core's Mat<T>), MR: its row-major twin (a transposed Mat<T>
// handed to partialPivLu). PREFIX is empty (definition) or extern (declaration).
#define GAUGELAB_CORE_EIGEN_DECOMPOSITIONS(PREFIX, T) \
  PREFIX template Eigen::SelfAdjointEigenSolver<Eigen::Matrix<T, -1, -1>>& \
  Eigen::SelfAdjointEigenSolver<Eigen::Matrix<T, -1, -1>>::compute<Eigen::Matrix<T, -1, -1>>( \
      const Eigen::EigenBase<Eigen::Matrix<T, -1, -1>>&, int); \
  PREFIX template void Eigen::HouseholderQR<Eigen::Matrix<T, -1, -1>>::computeInPlace(); \
  PREFIX template void Eigen::ColPivHouseholderQR<Eigen::Matrix<T, -1, -1>>::computeInPlace(); \
  PREFIX template void Eigen::CompleteOrthogonalDecomposition<Eigen::Matrix<T, -1, -1>>::computeInPlace(); \
  PREFIX template void Eigen::PartialPivLU<Eigen::Matrix<T, -1, -1>>::compute(); \
  PREFIX template void Eigen::PartialPivLU<Eigen::Matrix<T, -1, -1, Eigen::RowMajor>>::compute(); \
  PREFIX template Eigen::BDCSVD<Eigen::Matrix<T, -1, -1>>& Eigen::BDCSVD<Eigen::Matrix<T, -1, -1>>::compute( \
      const Eigen::Matrix<T, -1, -1>&, unsigned int); \
  PREFIX template Eigen::LLT<Eigen::Matrix<T, -1, -1>, Eigen::Lower>& \
  Eigen::LLT<Eigen::Matrix<T, -1, -1>, Eigen::Lower>::compute<Eigen::Matrix<T, -1, -1>>( \
      const Eigen::EigenBase<Eigen::Matrix<T, -1, -1>>&);

GAUGELAB_CORE_EIGEN_DECOMPOSITIONS(extern, double)
GAUGELAB_CORE_EIGEN_DECOMPOSITIONS(extern, float)
