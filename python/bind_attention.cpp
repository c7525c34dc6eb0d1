// One attention head (core/attention_head.hpp) and the factor gauge (core/factor_gauge.hpp).
#include "bindings.hpp"
#include "core/attention_head.hpp"
#include "core/factor_gauge.hpp"

namespace gaugelab::python {

using namespace core;

template <class T>
void bind_head_class(py::module_& m) {
  using H = AttentionHead<T>;
  py::class_<H> c(m, suffixed<T>("AttentionHead").c_str(),
                  "One attention head: Q = X W_q + b_q, K = X W_k + b_k, V = X W_v + b_v, output softmax(QKᵀ/√d_k) V W_o");
  c.def(py::init([](py::handle wq, py::handle wk, py::handle wv, py::handle wo, py::handle bq, py::handle bk, py::handle bv) {
         Args a("AttentionHead");
         a.f32(wq, "W_q");
         H h;
         h.W_q = a.matrix<T>(wq, "W_q");
         const Index d = h.W_q.rows(), dk = h.W_q.cols();
         h.W_k = a.matrix<T>(wk, "W_k", d, dk);
         h.W_v = a.matrix<T>(wv, "W_v", d);
         h.W_o = a.matrix<T>(wo, "W_o", h.W_v.cols(), d);
         h.b_q = a.vector<T, RowVec<T>>(bq, "b_q", dk);
         h.b_k = a.vector<T, RowVec<T>>(bk, "b_k", dk);
         h.b_v = a.vector<T, RowVec<T>>(bv, "b_v", h.W_v.cols());
         return h;
       }),
       py::arg("W_q"), py::arg("W_k"), py::arg("W_v"), py::arg("W_o"), py::arg("b_q"), py::arg("b_k"), py::arg("b_v"));
  array_field(c, "W_q", &H::W_q, "[d, dk]");
  array_field(c, "W_k", &H::W_k, "[d, dk]");
  array_field(c, "W_v", &H::W_v, "[d, dv]");
  array_field(c, "W_o", &H::W_o, "[dv, d]");
  array_field(c, "b_q", &H::b_q, "[dk]");
  array_field(c, "b_k", &H::b_k, "[dk]");
  array_field(c, "b_v", &H::b_v, "[dv]");
  c.def_property_readonly("d_model", &H::d_model).def_property_readonly("d_k", &H::d_k).def_property_readonly("d_v", &H::d_v);
}

void bind_attention(py::module_& m) {
  bind_head_class<double>(m);
  bind_head_class<float>(m);

  const bool causal = AttentionOptions{}.causal;
  m.def("head_logits", [](py::handle h, py::handle x, bool c) {
          Args a("head_logits");
          return a.by_dtype(h, "head", [&](auto t) {
            using T = decltype(t);
            const auto& head = a.head<T>(h, "head");
            return head_logits(head, a.matrix<T>(x, "X", -1, head.d_model()), AttentionOptions{c});
          });
        },
        py::arg("head"), py::arg("X"), py::arg("causal") = causal, "Q·Kᵀ/√d_k [T, T] for X [T, d] (−inf above the diagonal when causal)");
  m.def("head_output", [](py::handle h, py::handle x, bool c) {
          Args a("head_output");
          return a.by_dtype(h, "head", [&](auto t) {
            using T = decltype(t);
            const auto& head = a.head<T>(h, "head");
            return head_output(head, a.matrix<T>(x, "X", -1, head.d_model()), AttentionOptions{c});
          });
        },
        py::arg("head"), py::arg("X"), py::arg("causal") = causal, "softmax(logits)·V·W_o [T, d]");
  m.def("apply_qk_gauge", [](py::handle h, py::handle s) {
          Args a("apply_qk_gauge");
          return a.by_dtype(h, "head", [&](auto t) {
            using T = decltype(t);
            const auto& head = a.head<T>(h, "head");
            const Mat<T> S = a.matrix<T>(s, "S", head.d_k(), head.d_k());
            a.invertible(S, "S");
            return apply_qk_gauge(head, S);
          });
        },
        py::arg("head"), py::arg("S"), "Q/K gauge S [dk, dk], invertible: W_q S, b_q S, W_k S⁻ᵀ, b_k S⁻ᵀ (logits unchanged)");
  m.def("apply_vo_gauge", [](py::handle h, py::handle c) {
          Args a("apply_vo_gauge");
          return a.by_dtype(h, "head", [&](auto t) {
            using T = decltype(t);
            const auto& head = a.head<T>(h, "head");
            const Mat<T> C = a.matrix<T>(c, "C", head.d_v(), head.d_v());
            a.invertible(C, "C");
            return apply_vo_gauge(head, C);
          });
        },
        py::arg("head"), py::arg("C"), "V/O gauge C [dv, dv], invertible: W_v C, b_v C, C⁻¹ W_o (output unchanged)");
  m.def("apply_head_gauge", [](py::handle h, py::handle s, py::handle c) {
          Args a("apply_head_gauge");
          return a.by_dtype(h, "head", [&](auto t) {
            using T = decltype(t);
            const auto& head = a.head<T>(h, "head");
            const Mat<T> S = a.matrix<T>(s, "S", head.d_k(), head.d_k()), C = a.matrix<T>(c, "C", head.d_v(), head.d_v());
            a.invertible(S, "S");
            a.invertible(C, "C");
            return apply_head_gauge(head, S, C);
          });
        },
        py::arg("head"), py::arg("S"), py::arg("C"), "both sectors at once");

  m.def("represented", [](py::handle A, py::handle B) {
          Args a("represented");
          return a.by_dtype(A, "A", [&](auto t) {
            using T = decltype(t);
            Mat<T> pa = a.matrix<T>(A, "A");
            return represented(FactorPair<T>{pa, a.matrix<T>(B, "B", -1, pa.cols())});
          });
        },
        py::arg("A"), py::arg("B"), "M = A·Bᵀ of the factor pair A [m, r], B [n, r]");
  m.def("apply_factor_gauge", [](py::handle A, py::handle B, py::handle s) {
          Args a("apply_factor_gauge");
          return a.by_dtype(A, "A", [&](auto t) {
            using T = decltype(t);
            Mat<T> pa = a.matrix<T>(A, "A");
            Mat<T> pb = a.matrix<T>(B, "B", -1, pa.cols());
            const Mat<T> S = a.matrix<T>(s, "S", pa.cols(), pa.cols());
            a.invertible(S, "S");
            FactorPair<T> p = apply_gauge(FactorPair<T>{std::move(pa), std::move(pb)}, S);
            return py::make_tuple(p.A, p.B);
          });
        },
        py::arg("A"), py::arg("B"), py::arg("S"), "(A·S, B·S⁻ᵀ) for S [r, r] invertible: same A·Bᵀ");
}

}  // namespace gaugelab::python
