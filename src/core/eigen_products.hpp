// Eigen's dense product and triangular kernels for dynamic matrices, instantiated once per scalar type, so that each
// unit that multiplies Mat<T>s (the core's instance and decomposition units, through core/eigen_decompositions.hpp,
// and the toys' and harness' units that include it) calls these instead of compiling the same kernels again. The
// list is the heavy ones those units instantiated (nm of their objects; inline kernels such as
// triangular_solve_vector are still compiled where used): the GEMM kernel and its packing (reached from every matrix
// product), the matrix-vector products, and the triangular products and solves behind the Householder applications
// and the QR and LU solves. Double: core/eigen_products.cpp (gaugecore); float: core/float32/eigen_products.cpp
// (gaugecore_float), so a unit that includes this header and multiplies float matrices links gaugecore_float (the
// core's float units do; the toys and harness use double).
// The kernels are unchanged Eigen code compiled with the same flags; only where they are compiled moves. The
// blocking sizes and packet types (mr, nr, the packing packet) are read from Eigen's traits, never written out: they
// follow the instruction set the build targets, in the declaring units and the defining one alike. Most of these are
// Eigen's EIGEN_DONT_INLINE entry points, never inlined into their callers anyway; the three
// general_matrix_matrix_product::run are defined in their class (inline): the compiler still sees their bodies to
// inline them, and when it does not, it calls the one copy instead of compiling its own.
#pragma once

#include <Eigen/Dense>

static_assert(EIGEN_VERSION_AT_LEAST(3, 4, 0), "core/eigen_products.hpp names Eigen 3.4's kernel signatures");

namespace gaugelab::core::eigen_products {

template <class T> using Traits = Eigen::internal::gebp_traits<T, T>;
// A matrix read by a kernel (column- or row-major), and the column-major result it writes.
template <class T, int Order> using Src = Eigen::internal::const_blas_data_mapper<T, Eigen::Index, Order>;
template <class T> using Dst = Eigen::internal::blas_data_mapper<T, Eigen::Index, Eigen::ColMajor, Eigen::Unaligned, 1>;

}  // namespace gaugelab::core::eigen_products

// PREFIX is empty (definition) or extern (declaration). The GEMM path: C += A·B for the three storage-order
// pairs the code forms (A and B column-major, or one of them a transpose), its kernel and its four packings.
#define GAUGELAB_CORE_EIGEN_GEMM(PREFIX, T) \
  PREFIX template struct Eigen::internal::general_matrix_matrix_product< \
      Eigen::Index, T, Eigen::ColMajor, false, T, Eigen::ColMajor, false, Eigen::ColMajor, 1>; \
  PREFIX template struct Eigen::internal::general_matrix_matrix_product< \
      Eigen::Index, T, Eigen::ColMajor, false, T, Eigen::RowMajor, false, Eigen::ColMajor, 1>; \
  PREFIX template struct Eigen::internal::general_matrix_matrix_product< \
      Eigen::Index, T, Eigen::RowMajor, false, T, Eigen::ColMajor, false, Eigen::ColMajor, 1>; \
  PREFIX template struct Eigen::internal::gebp_kernel<T, T, Eigen::Index, gaugelab::core::eigen_products::Dst<T>, \
      gaugelab::core::eigen_products::Traits<T>::mr, gaugelab::core::eigen_products::Traits<T>::nr, false, false>; \
  PREFIX template struct Eigen::internal::gemm_pack_lhs<T, Eigen::Index, \
      gaugelab::core::eigen_products::Src<T, Eigen::ColMajor>, gaugelab::core::eigen_products::Traits<T>::mr, \
      gaugelab::core::eigen_products::Traits<T>::LhsProgress, \
      gaugelab::core::eigen_products::Traits<T>::LhsPacket4Packing, Eigen::ColMajor>; \
  PREFIX template struct Eigen::internal::gemm_pack_lhs<T, Eigen::Index, \
      gaugelab::core::eigen_products::Src<T, Eigen::RowMajor>, gaugelab::core::eigen_products::Traits<T>::mr, \
      gaugelab::core::eigen_products::Traits<T>::LhsProgress, \
      gaugelab::core::eigen_products::Traits<T>::LhsPacket4Packing, Eigen::RowMajor>; \
  PREFIX template struct Eigen::internal::gemm_pack_rhs<T, Eigen::Index, \
      gaugelab::core::eigen_products::Src<T, Eigen::ColMajor>, gaugelab::core::eigen_products::Traits<T>::nr, \
      Eigen::ColMajor>; \
  PREFIX template struct Eigen::internal::gemm_pack_rhs<T, Eigen::Index, \
      gaugelab::core::eigen_products::Src<T, Eigen::RowMajor>, gaugelab::core::eigen_products::Traits<T>::nr, \
      Eigen::RowMajor>;

// The matrix-vector products: y += A·x with A column- or row-major, the x of the vector triangular solves
// column-major, and the row-major BuiltIn one that triangular_matrix_vector_product (below) calls.
#define GAUGELAB_CORE_EIGEN_GEMV(PREFIX, T) \
  PREFIX template struct Eigen::internal::general_matrix_vector_product<Eigen::Index, T, \
      gaugelab::core::eigen_products::Src<T, Eigen::ColMajor>, Eigen::ColMajor, false, T, \
      gaugelab::core::eigen_products::Src<T, Eigen::RowMajor>, false, Eigen::Specialized>; \
  PREFIX template struct Eigen::internal::general_matrix_vector_product<Eigen::Index, T, \
      gaugelab::core::eigen_products::Src<T, Eigen::ColMajor>, Eigen::ColMajor, false, T, \
      gaugelab::core::eigen_products::Src<T, Eigen::ColMajor>, false, Eigen::Specialized>; \
  PREFIX template struct Eigen::internal::general_matrix_vector_product<Eigen::Index, T, \
      gaugelab::core::eigen_products::Src<T, Eigen::RowMajor>, Eigen::RowMajor, false, T, \
      gaugelab::core::eigen_products::Src<T, Eigen::ColMajor>, false, Eigen::Specialized>; \
  PREFIX template struct Eigen::internal::general_matrix_vector_product<Eigen::Index, T, \
      gaugelab::core::eigen_products::Src<T, Eigen::RowMajor>, Eigen::RowMajor, false, T, \
      gaugelab::core::eigen_products::Src<T, Eigen::RowMajor>, false, Eigen::BuiltIn>; \
  PREFIX template struct Eigen::internal::selfadjoint_matrix_vector_product<T, Eigen::Index, Eigen::ColMajor, \
      Eigen::Lower, false, false, Eigen::Specialized>;

// The triangular products (T·B, T triangular and on the left: the block Householder applications) and the
// triangular solves (QR and LU solves, T on either side, T column- or row-major), each over a column-major B.
#define GAUGELAB_CORE_EIGEN_TRMM(PREFIX, T, MODE, TRI_ORDER) \
  PREFIX template struct Eigen::internal::product_triangular_matrix_matrix<T, Eigen::Index, MODE, true, TRI_ORDER, \
      false, Eigen::ColMajor, false, Eigen::ColMajor, 1, Eigen::Specialized>;
#define GAUGELAB_CORE_EIGEN_TRSM(PREFIX, T, SIDE, MODE, TRI_ORDER) \
  PREFIX template struct Eigen::internal::triangular_solve_matrix<T, Eigen::Index, SIDE, MODE, false, TRI_ORDER, \
      Eigen::ColMajor, 1>;
#define GAUGELAB_CORE_EIGEN_TRIANGULAR(PREFIX, T) \
  GAUGELAB_CORE_EIGEN_TRMM(PREFIX, T, Eigen::Lower, Eigen::ColMajor) \
  GAUGELAB_CORE_EIGEN_TRMM(PREFIX, T, Eigen::Upper, Eigen::RowMajor) \
  GAUGELAB_CORE_EIGEN_TRMM(PREFIX, T, Eigen::UnitLower, Eigen::ColMajor) \
  GAUGELAB_CORE_EIGEN_TRMM(PREFIX, T, Eigen::UnitUpper, Eigen::RowMajor) \
  PREFIX template struct Eigen::internal::triangular_matrix_vector_product<Eigen::Index, Eigen::UnitUpper, T, false, \
      T, false, Eigen::RowMajor, Eigen::Specialized>; \
  GAUGELAB_CORE_EIGEN_TRSM(PREFIX, T, Eigen::OnTheLeft, Eigen::Lower, Eigen::RowMajor) \
  GAUGELAB_CORE_EIGEN_TRSM(PREFIX, T, Eigen::OnTheLeft, Eigen::Upper, Eigen::ColMajor) \
  GAUGELAB_CORE_EIGEN_TRSM(PREFIX, T, Eigen::OnTheLeft, Eigen::UnitLower, Eigen::ColMajor) \
  GAUGELAB_CORE_EIGEN_TRSM(PREFIX, T, Eigen::OnTheRight, Eigen::Lower, Eigen::ColMajor) \
  GAUGELAB_CORE_EIGEN_TRSM(PREFIX, T, Eigen::OnTheRight, Eigen::Lower, Eigen::RowMajor) \
  GAUGELAB_CORE_EIGEN_TRSM(PREFIX, T, Eigen::OnTheRight, Eigen::Upper, Eigen::RowMajor) \
  GAUGELAB_CORE_EIGEN_TRSM(PREFIX, T, Eigen::OnTheRight, Eigen::UnitUpper, Eigen::ColMajor) \
  GAUGELAB_CORE_EIGEN_TRSM(PREFIX, T, Eigen::OnTheRight, Eigen::UnitUpper, Eigen::RowMajor)

#define GAUGELAB_CORE_EIGEN_PRODUCTS(PREFIX, T) \
  GAUGELAB_CORE_EIGEN_GEMM(PREFIX, T) \
  GAUGELAB_CORE_EIGEN_GEMV(PREFIX, T) \
  GAUGELAB_CORE_EIGEN_TRIANGULAR(PREFIX, T)

GAUGELAB_CORE_EIGEN_PRODUCTS(extern, double)
GAUGELAB_CORE_EIGEN_PRODUCTS(extern, float)
