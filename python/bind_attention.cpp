// One attention head (core/attention_head.hpp) and the factor gauge (core/factor_gauge.hpp).
#include "bindings.hpp"
#include "core/attention_head.hpp"
#include "core/factor_gauge.hpp"

namespace gaugelab::python {

using namespace core;

template <class T>
void bind_attention_t(py::module_& m) {
  using H = AttentionHead<T>;
  py::class_<H>(m, suffixed<T>("AttentionHead").c_str(),
                "One attention head: Q = X W_q + b_q, K = X W_k + b_k, V = X W_v + b_v, output softmax(QKᵀ/√d_k) V W_o")
      .def(py::init([](Mat<T> wq, Mat<T> wk, Mat<T> wv, Mat<T> wo, RowVec<T> bq, RowVec<T> bk, RowVec<T> bv) {
             H h{std::move(wq), std::move(wk), std::move(wv), std::move(wo), std::move(bq), std::move(bk), std::move(bv)};
             require_head(h, "AttentionHead");
             return h;
           }),
           py::arg("W_q"), py::arg("W_k"), py::arg("W_v"), py::arg("W_o"), py::arg("b_q"), py::arg("b_k"), py::arg("b_v"))
      .def_readwrite("W_q", &H::W_q, "[d, dk]")
      .def_readwrite("W_k", &H::W_k, "[d, dk]")
      .def_readwrite("W_v", &H::W_v, "[d, dv]")
      .def_readwrite("W_o", &H::W_o, "[dv, d]")
      .def_readwrite("b_q", &H::b_q, "[dk]")
      .def_readwrite("b_k", &H::b_k, "[dk]")
      .def_readwrite("b_v", &H::b_v, "[dv]")
      .def_property_readonly("d_model", &H::d_model)
      .def_property_readonly("d_k", &H::d_k)
      .def_property_readonly("d_v", &H::d_v);

  const bool causal = AttentionOptions{}.causal;
  m.def("head_logits", [](const H& h, const Mat<T>& x, bool c) { return head_logits(h, x, AttentionOptions{c}); },
        py::arg("head"), py::arg("X"), py::arg("causal") = causal, "Q·Kᵀ/√d_k [T, T] for X [T, d] (−inf above the diagonal when causal)");
  m.def("head_output", [](const H& h, const Mat<T>& x, bool c) { return head_output(h, x, AttentionOptions{c}); },
        py::arg("head"), py::arg("X"), py::arg("causal") = causal, "softmax(logits)·V·W_o [T, d]");
  m.def("apply_qk_gauge", &apply_qk_gauge<T>, py::arg("head"), py::arg("S"),
        "Q/K gauge S [dk, dk]: W_q S, b_q S, W_k S⁻ᵀ, b_k S⁻ᵀ (logits unchanged)");
  m.def("apply_vo_gauge", &apply_vo_gauge<T>, py::arg("head"), py::arg("C"),
        "V/O gauge C [dv, dv]: W_v C, b_v C, C⁻¹ W_o (output unchanged)");
  m.def("apply_head_gauge", &apply_head_gauge<T>, py::arg("head"), py::arg("S"), py::arg("C"), "both sectors at once");

  m.def("represented", [](const Mat<T>& a, const Mat<T>& b) { return represented(FactorPair<T>{a, b}); },
        py::arg("A"), py::arg("B"), "M = A·Bᵀ of the factor pair A [m, r], B [n, r]");
  m.def("apply_factor_gauge", [](const Mat<T>& a, const Mat<T>& b, const Mat<T>& s) {
          FactorPair<T> p = apply_gauge(FactorPair<T>{a, b}, s);
          return py::make_tuple(p.A, p.B);
        },
        py::arg("A"), py::arg("B"), py::arg("S"), "(A·S, B·S⁻ᵀ): same A·Bᵀ");
}

void bind_attention(py::module_& m) {
  bind_attention_t<double>(m);
  bind_attention_t<float>(m);
}

}  // namespace gaugelab::python
