// The Lie-algebra view (core/gauge_lie.hpp): orbit tangents and the exact (Remark 51) and approximate
// (Alg. 2) horizontal projections of a head's or a factor pair's direction. A head direction is an
// AttentionHead of the head's shapes (δW_q, δW_k, δW_v, δW_o, δb_q, δb_k, δb_v).
#include "bindings.hpp"
#include "core/gauge_lie.hpp"

namespace gaugelab::python {

using namespace core;

namespace {

/// A symmetric positive semi-definite matrix [n, n] (to a few hundred ulps of its size).
template <class T>
Mat<T> psd(const Args& a, py::handle x, const char* arg) {
  const Mat<T> m = a.matrix<T>(x, arg);
  a.check(m.rows() == m.cols(), arg, "square", "[" + std::to_string(m.rows()) + ", " + std::to_string(m.cols()) + "]");
  const T tol = T(100) * T(m.rows()) * std::numeric_limits<T>::epsilon() * std::max(m.norm(), T(1e-300));
  a.check((m - m.transpose()).norm() <= tol, arg, "symmetric", "asymmetry ‖M − Mᵀ‖_F = " + Args::fmt((m - m.transpose()).norm()));
  const T lo = Eigen::SelfAdjointEigenSolver<Mat<T>>(m, Eigen::EigenvaluesOnly).eigenvalues().minCoeff();
  a.check(lo >= -tol, arg, "positive semi-definite", "eigenvalue " + Args::fmt(lo));
  return m;
}

/// A head direction: an AttentionHead of the head's shapes.
template <class T>
const AttentionHead<T>& direction(const Args& a, py::handle g, const AttentionHead<T>& h) {
  const AttentionHead<T>& d = a.head<T>(g, "direction");
  a.check(d.d_model() == h.d_model() && d.d_k() == h.d_k() && d.d_v() == h.d_v(), "direction",
          "of the head's shapes (d_model, d_k, d_v) = (" + std::to_string(h.d_model()) + ", " + std::to_string(h.d_k()) +
              ", " + std::to_string(h.d_v()) + ")",
          "(" + std::to_string(d.d_model()) + ", " + std::to_string(d.d_k()) + ", " + std::to_string(d.d_v()) + ")");
  return d;
}

/// The functions of a head and a direction: f(head, direction).
template <class F>
void head_direction_def(py::module_& m, const char* name, F f, const char* doc) {
  m.def(name, [name, f](py::handle h, py::handle g) {
          Args a(name);
          return a.by_dtype(h, "head", [&](auto t) {
            using T = decltype(t);
            const auto& head = a.head<T>(h, "head");
            return f(head, direction(a, g, head));
          });
        },
        py::arg("head"), py::arg("direction"), doc);
}

}  // namespace

void bind_lie(py::module_& m) {
  m.def("solve_sylvester_psd", [](py::handle A, py::handle B, py::handle C, double rel_tol) {
          Args a("solve_sylvester_psd");
          return a.by_dtype(A, "A", [&](auto t) {
            using T = decltype(t);
            const Mat<T> pa = psd<T>(a, A, "A"), pb = psd<T>(a, B, "B");
            return solve_sylvester_psd(pa, pb, a.matrix<T>(C, "C", pa.rows(), pb.rows()), T(a.number(rel_tol, "rel_tol", 0.0)));
          });
        },
        py::arg("A"), py::arg("B"), py::arg("C"), py::arg("rel_tol") = 1e-12,
        "X with A X + X B = C [n, m] for symmetric PSD A [n, n], B [m, m] (minimum norm where singular)");
  m.def("head_orbit_tangent", [](py::handle h, py::handle x, py::handle y) {
          Args a("head_orbit_tangent");
          return a.by_dtype(h, "head", [&](auto t) {
            using T = decltype(t);
            const auto& head = a.head<T>(h, "head");
            return head_orbit_tangent(head, HeadAlgebra<T>{a.matrix<T>(x, "X", head.d_k(), head.d_k()),
                                                           a.matrix<T>(y, "Y", head.d_v(), head.d_v())});
          });
        },
        py::arg("head"), py::arg("X"), py::arg("Y"),
        "the direction (W_q X, b_q X, −W_k Xᵀ, −b_k Xᵀ, W_v Y, b_v Y, −Y W_o) of (X [dk, dk], Y [dv, dv])");
  head_direction_def(m, "head_vertical_coordinates", [](const auto& h, const auto& g) {
        const auto e = head_vertical_coordinates(h, g);
        return py::make_tuple(e.X, e.Y);
      },
      "(X, Y) whose orbit tangent is nearest to the direction (two Sylvester solves)");
  head_direction_def(m, "head_horizontal_projection", [](const auto& h, const auto& g) { return head_horizontal_projection(h, g); },
                     "the direction minus its nearest orbit tangent: orthogonal to the gauge orbit (seed 001 Remark 51)");
  head_direction_def(m, "head_horizontal_projection_approx",
                     [](const auto& h, const auto& g) { return head_horizontal_projection_approx(h, g); },
                     "seed 001 Alg. 2: the two least-squares estimates per sector averaged; exact on orbit tangents only");
  m.def("head_inner", [](py::handle x, py::handle y) {
          Args a("head_inner");
          return a.by_dtype(x, "a", [&](auto t) {
            using T = decltype(t);
            const auto& p = a.head<T>(x, "a");
            const auto& q = a.head<T>(y, "b");
            a.check(p.d_model() == q.d_model() && p.d_k() == q.d_k() && p.d_v() == q.d_v(), "b", "of a's shapes");
            return head_inner(p, q);
          });
        },
        py::arg("a"), py::arg("b"), "Euclidean inner product of two head directions");
  m.def("factor_horizontal_projection", [](py::handle A, py::handle B, py::handle GA, py::handle GB) {
          Args a("factor_horizontal_projection");
          return a.by_dtype(A, "A", [&](auto t) {
            using T = decltype(t);
            const Mat<T> pa = a.matrix<T>(A, "A"), pb = a.matrix<T>(B, "B", -1, pa.cols());
            const FactorPair<T> p = factor_horizontal_projection(
                FactorPair<T>{pa, pb}, FactorPair<T>{a.matrix<T>(GA, "G_A", pa.rows(), pa.cols()), a.matrix<T>(GB, "G_B", pb.rows(), pb.cols())});
            return py::make_tuple(p.A, p.B);
          });
        },
        py::arg("A"), py::arg("B"), py::arg("G_A"), py::arg("G_B"),
        "(G_A, G_B) minus its nearest tangent (A X, −B Xᵀ) of the GL(r) orbit of A·Bᵀ");
}

}  // namespace gaugelab::python
