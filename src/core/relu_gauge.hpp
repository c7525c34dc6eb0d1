// The ReLU neuron-rescaling gauge (seed 004 §II). One hidden layer in the math convention (eq. 1):
//   f(x) = W2·σ(W1·x + b1) + b2,   σ = ReLU,   W1 [H, d], b1 [H], W2 [m, H], b2 [m].
// For D = diag(s), s > 0 (eq. 3):  W1 → D W1,  b1 → D b1,  W2 → W2 D⁻¹,  b2 → b2;
// ReLU's positive homogeneity σ(αz) = ασ(z) (eq. 2) makes f exactly invariant (eq. 4).
#pragma once

#include "core/gauge_linalg.hpp"
#include "core/types.hpp"

namespace gaugelab::core {

template <class T>
struct ReluNet {
  Mat<T> W1;  // [H, d]
  Vec<T> b1;  // [H]
  Mat<T> W2;  // [m, H]
  Vec<T> b2;  // [m]

  Index input_dim() const { return W1.cols(); }
  Index hidden() const { return W1.rows(); }
  Index output_dim() const { return W2.rows(); }
};

template <class T>
void require_relu_net(const ReluNet<T>& n, const std::string& what) {
  require(n.b1.size() == n.hidden(), what, "b1 must be [H]");
  require(n.W2.cols() == n.hidden(), what, "W2 must be [m, H]");
  require(n.b2.size() == n.output_dim(), what, "b2 must be [m]");
}

/// Hidden pre-activations Z = X·W1ᵀ + b1 [N, H] for a batch X [N, d] (one sample per row).
template <class T>
Mat<T> relu_preactivations(const ReluNet<T>& n, const Mat<T>& x) {
  require_relu_net(n, "relu_preactivations");
  require(x.cols() == n.input_dim(), "relu_preactivations", "X must be [N, d]");
  return (x * n.W1.transpose()).rowwise() + n.b1.transpose();
}

/// f(X) [N, m] for X [N, d]: eq. (1) applied to each row.
template <class T>
Mat<T> relu_forward(const ReluNet<T>& n, const Mat<T>& x) {
  const Mat<T> h = relu_preactivations(n, x).cwiseMax(T(0));  // [N, H]
  return (h * n.W2.transpose()).rowwise() + n.b2.transpose();
}

/// Eq. (3) with D = diag(s), s [H] > 0: W1 → D W1, b1 → D b1, W2 → W2 D⁻¹.
template <class T>
ReluNet<T> rescale_neurons(const ReluNet<T>& n, const Vec<T>& s) {
  require_relu_net(n, "rescale_neurons");
  require(s.size() == n.hidden(), "rescale_neurons", "s must be [H]");
  require((s.array() > T(0)).all(), "rescale_neurons", "scales must be > 0 (ReLU is only positively homogeneous)");
  ReluNet<T> out = n;
  out.W1 = s.asDiagonal() * n.W1;
  out.b1 = s.cwiseProduct(n.b1);
  out.W2 = n.W2 * s.cwiseInverse().asDiagonal();
  return out;
}

// Compiled once for float and double in core/gauge_instances.cpp; the extern declarations keep every
// includer from instantiating these templates again (compile time).
#define GAUGELAB_CORE_RELU_GAUGE_INSTANCES(EXTERN, T) \
  EXTERN template void require_relu_net<T>(const ReluNet<T>&, const std::string&); \
  EXTERN template Mat<T> relu_preactivations<T>(const ReluNet<T>&, const Mat<T>&); \
  EXTERN template Mat<T> relu_forward<T>(const ReluNet<T>&, const Mat<T>&); \
  EXTERN template ReluNet<T> rescale_neurons<T>(const ReluNet<T>&, const Vec<T>&);
GAUGELAB_CORE_RELU_GAUGE_INSTANCES(extern, float)
GAUGELAB_CORE_RELU_GAUGE_INSTANCES(extern, double)

}  // namespace gaugelab::core
