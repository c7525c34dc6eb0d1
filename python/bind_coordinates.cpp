// Gauge coordinates and metrics (core/coordinates.hpp): LRM head scales and drift, Gram imbalance,
// Q/K covariance imbalance, value orthonormality, invariance errors between two evaluations.
#include "bindings.hpp"
#include "core/coordinates.hpp"

namespace gaugelab::python {

using namespace core;
using namespace pybind11::literals;

namespace {

void bind_coordinate_functions(py::module_& m) {
  m.def("lrm_head_scales", [](py::handle rq, py::handle rk, Index n_heads) {
          Args a("lrm_head_scales");
          return a.by_dtype(rq, "r_q", [&](auto t) {
            using T = decltype(t);
            a.count(n_heads, "n_heads");
            const Vec<T> r_q = a.vector<T>(rq, "r_q");
            a.check(r_q.size() % n_heads == 0, "r_q", "of a length divisible by n_heads = " + std::to_string(n_heads),
                    "length " + std::to_string(r_q.size()));
            const HeadScales<T> s = lrm_head_scales(r_q, a.vector<T>(rk, "r_k", r_q.size()), n_heads);
            return py::make_tuple(s.s_q, s.s_k);
          });
        },
        py::arg("r_q"), py::arg("r_k"), py::arg("n_heads"), "(s_Q, s_K) [h]: RMS of each head's slice of r_q, r_k [h·dk]");
  m.def("lrm_drift", [](py::handle sq, py::handle sk) {
          Args a("lrm_drift");
          return a.by_dtype(sq, "s_q", [&](auto t) {
            using T = decltype(t);
            const Vec<T> s_q = a.vector<T>(sq, "s_q"), s_k = a.vector<T>(sk, "s_k", s_q.size());
            a.check((s_q.array() > T(0)).all(), "s_q", "positive (a zero scale has an infinite log-ratio)", "min " + Args::fmt(s_q.minCoeff()));
            a.check((s_k.array() > T(0)).all(), "s_k", "positive (a zero scale has an infinite log-ratio)", "min " + Args::fmt(s_k.minCoeff()));
            return lrm_drift(HeadScales<T>{s_q, s_k});
          });
        },
        py::arg("s_q"), py::arg("s_k"), "max and mean of |log(s_Q/s_K)| over heads, s_Q, s_K > 0 [h] (seed 000 eq. 3 is the max)");
  m.def("gram_imbalance", [](py::handle A, py::handle B) {
          Args a("gram_imbalance");
          return a.by_dtype(A, "A", [&](auto t) {
            using T = decltype(t);
            Mat<T> pa = a.matrix<T>(A, "A");
            const GramImbalance<T> g = gram_imbalance(FactorPair<T>{pa, a.matrix<T>(B, "B", -1, pa.cols())});
            return py::dict("H_A"_a = g.H_A, "H_B"_a = g.H_B, "D"_a = g.D, "norm"_a = g.norm, "relative"_a = g.relative);
          });
        },
        py::arg("A"), py::arg("B"), "AᵀA − BᵀB and its (relative) Frobenius norm");
  const bool center = CovarianceOptions{}.center;
  m.def("qk_covariances", [](py::handle h, py::handle x, bool c) {
          Args a("qk_covariances");
          return a.by_dtype(h, "head", [&](auto t) {
            using T = decltype(t);
            const auto& head = a.head<T>(h, "head");
            const QkCovariances<T> s = qk_covariances(head, a.matrix<T>(x, "X", -1, head.d_model()), CovarianceOptions{c});
            return py::make_tuple(s.S_Q, s.S_K);
          });
        },
        py::arg("head"), py::arg("X"), py::arg("center") = center, "(S_Q, S_K) [dk, dk] on inputs X [T, d]");
  m.def("activation_covariance_imbalance", [](py::handle h, py::handle x, bool c) {
          Args a("activation_covariance_imbalance");
          return a.by_dtype(h, "head", [&](auto t) {
            using T = decltype(t);
            const auto& head = a.head<T>(h, "head");
            const Mat<T> X = a.matrix<T>(x, "X", -1, head.d_model());
            a.check(qk_covariances(head, X, CovarianceOptions{c}).S_Q.norm() > T(0), "X",
                    "inputs whose queries vary (S_Q is divided by)", "S_Q = 0");
            return activation_covariance_imbalance(head, X, CovarianceOptions{c});
          });
        },
        py::arg("head"), py::arg("X"), py::arg("center") = center, "‖S_Q − S_K‖_F / ‖S_Q‖_F");
  m.def("value_orthonormality_error", [](py::handle h) {
          Args a("value_orthonormality_error");
          return a.by_dtype(h, "head", [&](auto t) { return value_orthonormality_error(a.head<decltype(t)>(h, "head")); });
        },
        py::arg("head"), "‖W_vᵀW_v − I‖_F");
  m.def("invariance_error", [](py::handle fa, py::handle fb) {
          Args a("invariance_error");
          return a.by_dtype(fa, "f_a", [&](auto t) {
            using T = decltype(t);
            const Mat<T> f_a = a.matrix<T>(fa, "f_a");
            return invariance_error(f_a, a.matrix<T>(fb, "f_b", f_a.rows(), f_a.cols()));
          });
        },
        py::arg("f_a"), py::arg("f_b"), "errors of f_b [N, m] against the reference f_a [N, m]");
}

}  // namespace

void bind_coordinates(py::module_& m) {
  py::class_<DriftStats>(m, "DriftStats", "drift over heads: max and mean of |log(s_Q/s_K)|")
      .def_readonly("max", &DriftStats::max)
      .def_readonly("mean", &DriftStats::mean)
      .def("__repr__", [](const DriftStats& d) { return "DriftStats(max=" + std::to_string(d.max) + ", mean=" + std::to_string(d.mean) + ")"; });
  py::class_<InvarianceError>(m, "InvarianceError", "Δ_inv (mean |f_a − f_b|), relative Frobenius and max error")
      .def_readonly("mean_abs", &InvarianceError::mean_abs)
      .def_readonly("relative_fro", &InvarianceError::relative_fro)
      .def_readonly("max_abs", &InvarianceError::max_abs)
      .def("__repr__", [](const InvarianceError& e) {
        return "InvarianceError(mean_abs=" + std::to_string(e.mean_abs) + ", relative_fro=" + std::to_string(e.relative_fro) +
               ", max_abs=" + std::to_string(e.max_abs) + ")";
      });
  bind_coordinate_functions(m);
}

}  // namespace gaugelab::python
