// Quotient corrections (core/quotient.hpp) and the represented motion of a factor step
// (core/quotient_motion.hpp). The options of QuotientOptions come as keywords: mode
// ("none|diagonal|full"), damping λ >= 0, solve ("cholesky|qr"); their defaults are the core's.
#include "bindings.hpp"
#include "core/quotient.hpp"

#include <array>

namespace gaugelab::python {

using namespace core;

namespace {

QuotientOptions quotient_options(const Args& a, const std::string& mode, double damping, const std::string& solve) {
  QuotientOptions o;
  try {
    o.mode = parse_quotient_mode(mode);
  } catch (const std::invalid_argument&) {
    a.fail("mode", "none, diagonal or full", "'" + mode + "'");
  }
  try {
    o.solve = parse_gram_solve(solve);
  } catch (const std::invalid_argument&) {
    a.fail("solve", "cholesky or qr", "'" + solve + "'");
  }
  o.damping = a.number(damping, "damping", 0.0);
  return o;
}

/// Without damping a correction inverts FᵀF of each factor F it divides by: F needs full column rank
/// (mode "diagonal": no zero column).
template <class T>
void invertible_gram(const Args& a, const QuotientOptions& o, const Mat<T>& f, const char* arg) {
  if (o.damping > 0.0 || o.mode == QuotientMode::none) return;
  if (o.mode == QuotientMode::diagonal)
    a.check((f.colwise().norm().array() > T(0)).all(), arg, "without a zero column when damping = 0 (diag(FᵀF) is inverted)",
            "a zero column");
  else
    a.full_rank(f, arg, "of full column rank when damping = 0 (its Gram is inverted; or pass damping > 0)");
}

/// A pair-shaped correction f(A [m, r], B [n, r], U_A [m, r], U_B [n, r], options) bound with the
/// argument names `names`; `b_transposed`: the second factor is given as Bᵀ [r, n] (W_O, U_O).
template <class F>
void correction_def(py::module_& m, const char* fn, std::array<const char*, 4> names, bool b_transposed, F f, const char* doc) {
  const QuotientOptions d{};
  const std::string mode(quotient_mode_name(d.mode)), solve(d.solve == GramSolve::cholesky ? "cholesky" : "qr");
  m.def(fn, [=](py::handle A, py::handle B, py::handle UA, py::handle UB, const std::string& mo, double l, const std::string& so) {
          Args a(fn);
          const QuotientOptions o = quotient_options(a, mo, l, so);
          return a.by_dtype(A, names[0], [&](auto t) {
            using T = decltype(t);
            const Mat<T> pa = a.matrix<T>(A, names[0]);
            const Index r = pa.cols();
            const Mat<T> pb = b_transposed ? a.matrix<T>(B, names[1], r) : a.matrix<T>(B, names[1], -1, r);
            const Mat<T> ua = a.matrix<T>(UA, names[2], pa.rows(), r), ub = a.matrix<T>(UB, names[3], pb.rows(), pb.cols());
            invertible_gram<T>(a, o, pa, names[0]);
            invertible_gram<T>(a, o, b_transposed ? Mat<T>(pb.transpose()) : pb, names[1]);
            return f(pa, pb, ua, ub, o);
          });
        },
        py::arg(names[0]), py::arg(names[1]), py::arg(names[2]), py::arg(names[3]), py::arg("mode") = mode,
        py::arg("damping") = d.damping, py::arg("solve") = solve, doc);
}

/// f(A [m, r], B [n, r], U_A [m, r], U_B [n, r], rho_A, rho_B) of the represented motion.
template <class F>
void motion_def(py::module_& m, const char* fn, F f, const char* doc, bool with_rho) {
  auto body = [fn, f](py::handle A, py::handle B, py::handle UA, py::handle UB, double ra, double rb) {
    Args a(fn);
    return a.by_dtype(A, "A", [&](auto t) {
      using T = decltype(t);
      const Mat<T> pa = a.matrix<T>(A, "A"), pb = a.matrix<T>(B, "B", -1, pa.cols());
      return f(pa, pb, a.matrix<T>(UA, "U_A", pa.rows(), pa.cols()), a.matrix<T>(UB, "U_B", pb.rows(), pb.cols()),
               T(a.number(ra, "rho_A")), T(a.number(rb, "rho_B")));
    });
  };
  if (with_rho)
    m.def(fn, body, py::arg("A"), py::arg("B"), py::arg("U_A"), py::arg("U_B"), py::arg("rho_A") = 1.0, py::arg("rho_B") = 1.0, doc);
  else
    m.def(fn, [body](py::handle A, py::handle B, py::handle UA, py::handle UB) { return body(A, B, UA, UB, 1.0, 1.0); },
          py::arg("A"), py::arg("B"), py::arg("U_A"), py::arg("U_B"), doc);
}

}  // namespace

void bind_quotient(py::module_& m) {
  correction_def(m, "correct_qk", {"W_Q", "W_K", "U_Q", "U_K"}, false,
                 [](const auto& wq, const auto& wk, const auto& uq, const auto& uk, const QuotientOptions& o) {
                   auto r = correct_qk(wq, wk, uq, uk, o);
                   return py::make_tuple(std::move(r.U_Q), std::move(r.U_K));
                 },
                 "(U_Q(W_KᵀW_K + λI)⁻¹, U_K(W_QᵀW_Q + λI)⁻¹) for W_Q, W_K, U_Q, U_K [d, dh]");
  correction_def(m, "correct_vo", {"W_V", "W_O", "U_V", "U_O"}, true,
                 [](const auto& wv, const auto& wo, const auto& uv, const auto& uo, const QuotientOptions& o) {
                   auto r = correct_vo(wv, wo, uv, uo, o);
                   return py::make_tuple(std::move(r.U_V), std::move(r.U_O));
                 },
                 "(U_V(W_O W_Oᵀ + λI)⁻¹, (W_VᵀW_V + λI)⁻¹U_O) for W_V, U_V [d, dh], W_O, U_O [dh, d]");
  correction_def(m, "opposite_gram_correction", {"A", "B", "U_A", "U_B"}, false,
                 [](const auto& A, const auto& B, const auto& ua, const auto& ub, const QuotientOptions& o) {
                   auto r = opposite_gram_correction(A, B, ua, ub, o);
                   return py::make_tuple(std::move(r.U_A), std::move(r.U_B));
                 },
                 "(U_A(BᵀB + λI)⁻¹, U_B(AᵀA + λI)⁻¹) of a factor pair");
  motion_def(m, "first_order_motion", [](const auto& A, const auto& B, const auto& ua, const auto& ub, auto, auto) {
               return first_order_motion(A, B, ua, ub);
             },
             "ΔM = U_A·Bᵀ + A·U_Bᵀ", false);
  motion_def(m, "exact_motion", [](const auto& A, const auto& B, const auto& ua, const auto& ub, auto ra, auto rb) {
               return exact_motion(A, B, ua, ub, ra, rb);
             },
             "(ρ_A·A + U_A)(ρ_B·B + U_B)ᵀ − ABᵀ", true);
}

}  // namespace gaugelab::python
