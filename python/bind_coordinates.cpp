// Gauge coordinates and metrics (core/coordinates.hpp): LRM head scales and drift, Gram imbalance,
// Q/K covariance imbalance, value orthonormality, invariance errors between two evaluations.
#include "bindings.hpp"
#include "core/coordinates.hpp"

namespace gaugelab::python {

using namespace core;
using namespace pybind11::literals;

template <class T>
void bind_coordinates_t(py::module_& m) {
  m.def("lrm_head_scales", [](const Vec<T>& r_q, const Vec<T>& r_k, Index n_heads) {
          const HeadScales<T> s = lrm_head_scales(r_q, r_k, n_heads);
          return py::make_tuple(s.s_q, s.s_k);
        },
        py::arg("r_q"), py::arg("r_k"), py::arg("n_heads"), "(s_Q, s_K) [h]: RMS of each head's slice of r_q, r_k [h·dk]");
  m.def("lrm_drift", [](const Vec<T>& s_q, const Vec<T>& s_k) { return lrm_drift(HeadScales<T>{s_q, s_k}); },
        py::arg("s_q"), py::arg("s_k"), "max and mean of |log(s_Q/s_K)| over heads (seed 000 eq. 3 is the max)");
  m.def("gram_imbalance", [](const Mat<T>& a, const Mat<T>& b) {
          const GramImbalance<T> g = gram_imbalance(FactorPair<T>{a, b});
          return py::dict("H_A"_a = g.H_A, "H_B"_a = g.H_B, "D"_a = g.D, "norm"_a = g.norm, "relative"_a = g.relative);
        },
        py::arg("A"), py::arg("B"), "AᵀA − BᵀB and its (relative) Frobenius norm");
  const bool center = CovarianceOptions{}.center;
  m.def("qk_covariances", [](const AttentionHead<T>& h, const Mat<T>& x, bool c) {
          const QkCovariances<T> s = qk_covariances(h, x, CovarianceOptions{c});
          return py::make_tuple(s.S_Q, s.S_K);
        },
        py::arg("head"), py::arg("X"), py::arg("center") = center, "(S_Q, S_K) [dk, dk] on inputs X [T, d]");
  m.def("activation_covariance_imbalance",
        [](const AttentionHead<T>& h, const Mat<T>& x, bool c) { return activation_covariance_imbalance(h, x, CovarianceOptions{c}); },
        py::arg("head"), py::arg("X"), py::arg("center") = center, "‖S_Q − S_K‖_F / ‖S_Q‖_F");
  m.def("value_orthonormality_error", &value_orthonormality_error<T>, py::arg("head"), "‖W_vᵀW_v − I‖_F");
  m.def("invariance_error", &invariance_error<T>, py::arg("f_a"), py::arg("f_b"),
        "errors of f_b [N, m] against the reference f_a [N, m]");
}

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
  bind_coordinates_t<double>(m);
  bind_coordinates_t<float>(m);
}

}  // namespace gaugelab::python
