// The Lie-algebra view (core/gauge_lie.hpp): orbit tangents and the exact (Remark 51) and approximate
// (Alg. 2) horizontal projections of a head's or a factor pair's direction. A head direction is an
// AttentionHead of the head's shapes (δW_q, δW_k, δW_v, δW_o, δb_q, δb_k, δb_v).
#include "bindings.hpp"
#include "core/gauge_lie.hpp"

namespace gaugelab::python {

using namespace core;

template <class T>
void bind_lie_t(py::module_& m) {
  using H = AttentionHead<T>;
  m.def("solve_sylvester_psd", &solve_sylvester_psd<T>, py::arg("A"), py::arg("B"), py::arg("C"),
        py::arg("rel_tol") = T(1e-12), "X with A X + X B = C for symmetric PSD A [n, n], B [m, m] (minimum norm where singular)");
  m.def("head_orbit_tangent", [](const H& h, const Mat<T>& x, const Mat<T>& y) { return head_orbit_tangent(h, HeadAlgebra<T>{x, y}); },
        py::arg("head"), py::arg("X"), py::arg("Y"),
        "the direction (W_q X, b_q X, −W_k Xᵀ, −b_k Xᵀ, W_v Y, b_v Y, −Y W_o) of (X [dk, dk], Y [dv, dv])");
  m.def("head_vertical_coordinates", [](const H& h, const H& g) {
          const HeadAlgebra<T> e = head_vertical_coordinates(h, g);
          return py::make_tuple(e.X, e.Y);
        },
        py::arg("head"), py::arg("direction"), "(X, Y) whose orbit tangent is nearest to the direction (two Sylvester solves)");
  m.def("head_horizontal_projection", &head_horizontal_projection<T>, py::arg("head"), py::arg("direction"),
        "the direction minus its nearest orbit tangent: orthogonal to the gauge orbit (seed 001 Remark 51)");
  m.def("head_horizontal_projection_approx", &head_horizontal_projection_approx<T>, py::arg("head"), py::arg("direction"),
        "seed 001 Alg. 2: the two least-squares estimates per sector averaged; exact on orbit tangents only");
  m.def("head_inner", &head_inner<T>, py::arg("a"), py::arg("b"), "Euclidean inner product of two head directions");
  m.def("factor_horizontal_projection", [](const Mat<T>& a, const Mat<T>& b, const Mat<T>& ga, const Mat<T>& gb) {
          const FactorPair<T> p = factor_horizontal_projection(FactorPair<T>{a, b}, FactorPair<T>{ga, gb});
          return py::make_tuple(p.A, p.B);
        },
        py::arg("A"), py::arg("B"), py::arg("G_A"), py::arg("G_B"),
        "(G_A, G_B) minus its nearest tangent (A X, −B Xᵀ) of the GL(r) orbit of A·Bᵀ");
}

void bind_lie(py::module_& m) {
  bind_lie_t<double>(m);
  bind_lie_t<float>(m);
}

}  // namespace gaugelab::python
