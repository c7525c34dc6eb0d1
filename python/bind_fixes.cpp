// Gauge fixes (core/gauge_fix.hpp): GaugeFix-LRM (seed 000's Q/K multiplier balancing), Gram balance
// of a factor pair and of a head's Q/K sector, covariance balance, and the QR canonical slice of a head.
#include "bindings.hpp"
#include "core/gauge_fix.hpp"

namespace gaugelab::python {

using namespace core;

template <class T>
void bind_fixes_t(py::module_& m) {
  using M = QkMultipliers<T>;
  py::class_<M>(m, suffixed<T>("QkMultipliers").c_str(), "Q/K row multipliers and biases of one layer, each [h·dk]")
      .def(py::init([](Index n_heads, Vec<T> r_q, Vec<T> r_k, Vec<T> b_q, Vec<T> b_k) {
             M q{n_heads, std::move(r_q), std::move(r_k), std::move(b_q), std::move(b_k)};
             require_qk(q, "QkMultipliers");
             return q;
           }),
           py::arg("n_heads"), py::arg("r_q"), py::arg("r_k"), py::arg("b_q"), py::arg("b_k"))
      .def_readwrite("n_heads", &M::n_heads)
      .def_readwrite("r_q", &M::r_q)
      .def_readwrite("r_k", &M::r_k)
      .def_readwrite("b_q", &M::b_q)
      .def_readwrite("b_k", &M::b_k)
      .def_property_readonly("d_k", &M::d_k);

  const double eps = GaugeFixOptions{}.eps;
  m.def("lrm_head_scales", [](const M& q) {
          const HeadScales<T> s = lrm_head_scales(q);
          return py::make_tuple(s.s_q, s.s_k);
        },
        py::arg("multipliers"), "(s_Q, s_K) [h] of the multipliers");
  m.def("gauge_fix_factors", [](const M& q, double e) { return gauge_fix_factors(q, GaugeFixOptions{e}); },
        py::arg("multipliers"), py::arg("eps") = eps, "g = √((s_Q + ε)/(s_K + ε)) [h] (seed 000 eq. 4)");
  m.def("gauge_fix", [](const M& q, double e) {
          GaugeFixResult<T> r = gauge_fix(q, GaugeFixOptions{e});
          return py::make_tuple(r.multipliers, r.g);
        },
        py::arg("multipliers"), py::arg("eps") = eps, "(fixed multipliers, g): r_Q/g, b_Q/g, r_K·g, b_K·g, so s_Q = s_K");
  m.def("rescale_qk_multipliers", &rescale_qk_multipliers<T>, py::arg("multipliers"), py::arg("g"),
        "per-head Q/K gauge g [h]: r_Q/g, b_Q/g, r_K·g, b_K·g");

  m.def("gram_balance", [](const Mat<T>& a, const Mat<T>& b) {
          GramBalanceResult<T> r = gram_balance(FactorPair<T>{a, b});
          return py::make_tuple(r.pair.A, r.pair.B, r.S);
        },
        py::arg("A"), py::arg("B"), "(A S, B S⁻ᵀ, S) with AᵀA = BᵀB after, S SPD");
  m.def("gram_balance_qk", [](const AttentionHead<T>& h) {
          HeadBalanceResult<T> r = gram_balance_qk(h);
          return py::make_tuple(r.head, r.S);
        },
        py::arg("head"), "(head, S): W_qᵀW_q = W_kᵀW_k after the Q/K gauge S");
  m.def("covariance_balance_qk", [](const AttentionHead<T>& h, const Mat<T>& x, bool c) {
          HeadBalanceResult<T> r = covariance_balance_qk(h, x, CovarianceOptions{c});
          return py::make_tuple(r.head, r.S);
        },
        py::arg("head"), py::arg("X"), py::arg("center") = CovarianceOptions{}.center, "(head, S): S_Q = S_K after the gauge");
  m.def("qr_canonical_head", [](const AttentionHead<T>& h) {
          QrSliceResult<T> r = qr_canonical_head(h);
          return py::make_tuple(r.head, r.R_q, r.R_v);
        },
        py::arg("head"), "(head, R_q, R_v): the QR slice, W_qᵀW_q = I and W_vᵀW_v = I");
}

void bind_fixes(py::module_& m) {
  bind_fixes_t<double>(m);
  bind_fixes_t<float>(m);
}

}  // namespace gaugelab::python
