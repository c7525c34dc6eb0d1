// Quotient corrections (core/quotient.hpp) and the represented motion of a factor step
// (core/quotient_motion.hpp). The options of QuotientOptions come as keywords: mode
// ("none|diagonal|full"), damping λ >= 0, solve ("cholesky|qr"); their defaults are the core's.
#include "bindings.hpp"
#include "core/quotient.hpp"

namespace gaugelab::python {

using namespace core;

namespace {

QuotientOptions quotient_options(const std::string& mode, double damping, const std::string& solve) {
  return {parse_quotient_mode(mode), damping, parse_gram_solve(solve)};
}

}  // namespace

template <class T>
void bind_quotient_t(py::module_& m) {
  const QuotientOptions d{};
  const std::string mode(quotient_mode_name(d.mode)), solve(d.solve == GramSolve::cholesky ? "cholesky" : "qr");
  m.def("correct_qk",
        [](const Mat<T>& wq, const Mat<T>& wk, const Mat<T>& uq, const Mat<T>& uk, const std::string& mo, double l, const std::string& so) {
          QkIncrement<T> r = correct_qk(wq, wk, uq, uk, quotient_options(mo, l, so));
          return py::make_tuple(r.U_Q, r.U_K);
        },
        py::arg("W_Q"), py::arg("W_K"), py::arg("U_Q"), py::arg("U_K"), py::arg("mode") = mode, py::arg("damping") = d.damping,
        py::arg("solve") = solve, "(U_Q(W_KᵀW_K + λI)⁻¹, U_K(W_QᵀW_Q + λI)⁻¹) for W_Q, W_K, U_Q, U_K [d, dh]");
  m.def("correct_vo",
        [](const Mat<T>& wv, const Mat<T>& wo, const Mat<T>& uv, const Mat<T>& uo, const std::string& mo, double l, const std::string& so) {
          VoIncrement<T> r = correct_vo(wv, wo, uv, uo, quotient_options(mo, l, so));
          return py::make_tuple(r.U_V, r.U_O);
        },
        py::arg("W_V"), py::arg("W_O"), py::arg("U_V"), py::arg("U_O"), py::arg("mode") = mode, py::arg("damping") = d.damping,
        py::arg("solve") = solve, "(U_V(W_O W_Oᵀ + λI)⁻¹, (W_VᵀW_V + λI)⁻¹U_O) for W_V, U_V [d, dh], W_O, U_O [dh, d]");
  m.def("opposite_gram_correction",
        [](const Mat<T>& a, const Mat<T>& b, const Mat<T>& ua, const Mat<T>& ub, const std::string& mo, double l, const std::string& so) {
          PairIncrement<T> r = opposite_gram_correction(a, b, ua, ub, quotient_options(mo, l, so));
          return py::make_tuple(r.U_A, r.U_B);
        },
        py::arg("A"), py::arg("B"), py::arg("U_A"), py::arg("U_B"), py::arg("mode") = mode, py::arg("damping") = d.damping,
        py::arg("solve") = solve, "(U_A(BᵀB + λI)⁻¹, U_B(AᵀA + λI)⁻¹) of a factor pair");
  m.def("first_order_motion", &first_order_motion<T>, py::arg("A"), py::arg("B"), py::arg("U_A"), py::arg("U_B"),
        "ΔM = U_A·Bᵀ + A·U_Bᵀ");
  m.def("exact_motion", &exact_motion<T>, py::arg("A"), py::arg("B"), py::arg("U_A"), py::arg("U_B"), py::arg("rho_A") = T(1),
        py::arg("rho_B") = T(1), "(ρ_A·A + U_A)(ρ_B·B + U_B)ᵀ − ABᵀ");
}

void bind_quotient(py::module_& m) {
  bind_quotient_t<double>(m);
  bind_quotient_t<float>(m);
}

}  // namespace gaugelab::python
