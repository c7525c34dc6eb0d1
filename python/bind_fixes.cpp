// Gauge fixes (core/gauge_fix.hpp): GaugeFix-LRM (seed 000's Q/K multiplier balancing), Gram balance
// of a factor pair and of a head's Q/K sector, covariance balance, and the QR canonical slice of a head.
#include "bindings.hpp"
#include "core/gauge_fix.hpp"

namespace gaugelab::python {

using namespace core;

template <class T>
void bind_multipliers_class(py::module_& m) {
  using M = QkMultipliers<T>;
  py::class_<M> c(m, suffixed<T>("QkMultipliers").c_str(), "Q/K row multipliers and biases of one layer, each [h·dk]");
  c.def(py::init([](Index n_heads, py::handle rq, py::handle rk, py::handle bq, py::handle bk) {
         Args a("QkMultipliers");
         a.f32(rq, "r_q");
         M q;
         q.n_heads = a.count(n_heads, "n_heads");
         q.r_q = a.vector<T>(rq, "r_q");
         const Index n = q.r_q.size();
         a.check(n % n_heads == 0, "r_q", "of a length divisible by n_heads = " + std::to_string(n_heads), "length " + std::to_string(n));
         q.r_k = a.vector<T>(rk, "r_k", n);
         q.b_q = a.vector<T>(bq, "b_q", n);
         q.b_k = a.vector<T>(bk, "b_k", n);
         return q;
       }),
       py::arg("n_heads"), py::arg("r_q"), py::arg("r_k"), py::arg("b_q"), py::arg("b_k"));
  c.def_readwrite("n_heads", &M::n_heads);
  array_field(c, "r_q", &M::r_q, "[h·dk]");
  array_field(c, "r_k", &M::r_k, "[h·dk]");
  array_field(c, "b_q", &M::b_q, "[h·dk]");
  array_field(c, "b_k", &M::b_k, "[h·dk]");
  c.def_property_readonly("d_k", &M::d_k);
}

/// Multipliers of dtype T with consistent lengths and finite entries.
template <class T>
const QkMultipliers<T>& multipliers(const Args& a, py::handle x) {
  const auto& q = a.object<QkMultipliers<T>>(x, "multipliers", std::string("QkMultipliers of ") + dtype_name<T>());
  a.run([&] { require_qk(q, "multipliers"); });
  a.finite(q.r_q, "multipliers.r_q"), a.finite(q.r_k, "multipliers.r_k");
  a.finite(q.b_q, "multipliers.b_q"), a.finite(q.b_k, "multipliers.b_k");
  return q;
}

/// g = √((s_Q + ε)/(s_K + ε)) needs ε finite, >= 0, finite in T (1e300 is inf in float32, and inf/inf a NaN
/// in every multiplier), and both scales plus ε > 0 in every head. gaugelab.torch checks the same rule
/// (python/gaugelab/torch/_checks.py, gpt2/torch_library/register_ops.cpp), with the same messages.
template <class T>
GaugeFixOptions fix_options(const Args& a, const QkMultipliers<T>& q, double eps) {
  a.number(eps, "eps", 0.0);
  const double top = static_cast<double>(std::numeric_limits<T>::max());
  a.check(eps <= top, "eps", "at most " + Args::fmt(top) + ", the largest " + dtype_name<T>(), Args::fmt(eps));
  const HeadScales<T> s = lrm_head_scales(q);
  const T e = static_cast<T>(eps);
  a.check(((s.s_q.array() + e) > T(0)).all() && ((s.s_k.array() + e) > T(0)).all(), "eps",
          "> 0 where a head's Q or K multipliers are all zero (its factor would be 0/0 or x/0)", Args::fmt(eps));
  return GaugeFixOptions{eps};
}

void bind_fix_functions(py::module_& m) {
  const double eps = GaugeFixOptions{}.eps;
  m.def("lrm_head_scales", [](py::handle q) {
          Args a("lrm_head_scales");
          return a.by_dtype(q, "multipliers", [&](auto t) {
            const HeadScales<decltype(t)> s = lrm_head_scales(multipliers<decltype(t)>(a, q));
            return py::make_tuple(s.s_q, s.s_k);
          });
        },
        py::arg("multipliers"), "(s_Q, s_K) [h] of the multipliers");
  m.def("gauge_fix_factors", [](py::handle q, double e) {
          Args a("gauge_fix_factors");
          return a.by_dtype(q, "multipliers", [&](auto t) {
            const auto& mq = multipliers<decltype(t)>(a, q);
            return gauge_fix_factors(mq, fix_options(a, mq, e));
          });
        },
        py::arg("multipliers"), py::arg("eps") = eps, "g = √((s_Q + ε)/(s_K + ε)) [h] (seed 000 eq. 4), ε >= 0");
  m.def("gauge_fix", [](py::handle q, double e) {
          Args a("gauge_fix");
          return a.by_dtype(q, "multipliers", [&](auto t) {
            const auto& mq = multipliers<decltype(t)>(a, q);
            auto r = gauge_fix(mq, fix_options(a, mq, e));
            return py::make_tuple(std::move(r.multipliers), std::move(r.g));
          });
        },
        py::arg("multipliers"), py::arg("eps") = eps, "(fixed multipliers, g): r_Q/g, b_Q/g, r_K·g, b_K·g, so s_Q = s_K");
  m.def("rescale_qk_multipliers", [](py::handle q, py::handle g) {
          Args a("rescale_qk_multipliers");
          return a.by_dtype(q, "multipliers", [&](auto t) {
            using T = decltype(t);
            const auto& mq = multipliers<T>(a, q);
            const Vec<T> gv = a.vector<T>(g, "g", mq.n_heads);
            a.check((gv.array() != T(0)).all(), "g", "nonzero in every head (r_Q is divided by it)", "a zero");
            return rescale_qk_multipliers(mq, gv);
          });
        },
        py::arg("multipliers"), py::arg("g"), "per-head Q/K gauge g [h], nonzero: r_Q/g, b_Q/g, r_K·g, b_K·g");

  m.def("gram_balance", [](py::handle A, py::handle B) {
          Args a("gram_balance");
          return a.by_dtype(A, "A", [&](auto t) {
            using T = decltype(t);
            Mat<T> pa = a.matrix<T>(A, "A"), pb = a.matrix<T>(B, "B", -1, pa.cols());
            a.full_rank(pa, "A", "of full column rank (AᵀA is inverted)");
            a.full_rank(pb, "B", "of full column rank (BᵀB must be positive definite)");
            GramBalanceResult<T> r = gram_balance(FactorPair<T>{std::move(pa), std::move(pb)});
            return py::make_tuple(r.pair.A, r.pair.B, r.S);
          });
        },
        py::arg("A"), py::arg("B"), "(A S, B S⁻ᵀ, S) with AᵀA = BᵀB after, S SPD; A, B of full column rank");
  m.def("gram_balance_qk", [](py::handle h) {
          Args a("gram_balance_qk");
          return a.by_dtype(h, "head", [&](auto t) {
            using T = decltype(t);
            const auto& head = a.head<T>(h, "head");
            a.full_rank(head.W_q, "head.W_q", "of full column rank (W_qᵀW_q is inverted)");
            a.full_rank(head.W_k, "head.W_k", "of full column rank (W_kᵀW_k must be positive definite)");
            HeadBalanceResult<T> r = gram_balance_qk(head);
            return py::make_tuple(std::move(r.head), std::move(r.S));
          });
        },
        py::arg("head"), "(head, S): W_qᵀW_q = W_kᵀW_k after the Q/K gauge S");
  m.def("covariance_balance_qk", [](py::handle h, py::handle x, bool c) {
          Args a("covariance_balance_qk");
          return a.by_dtype(h, "head", [&](auto t) {
            using T = decltype(t);
            const auto& head = a.head<T>(h, "head");
            const Mat<T> X = a.matrix<T>(x, "X", -1, head.d_model());
            const QkCovariances<T> s = qk_covariances(head, X, CovarianceOptions{c});
            const auto pd = [&](const Mat<T>& cov, const char* who) {
              a.full_rank(cov, "X", std::string("inputs whose ") + who + " covariance is positive definite (of rank d_k)");
            };
            pd(s.S_Q, "query"), pd(s.S_K, "key");
            HeadBalanceResult<T> r = covariance_balance_qk(head, X, CovarianceOptions{c});
            return py::make_tuple(std::move(r.head), std::move(r.S));
          });
        },
        py::arg("head"), py::arg("X"), py::arg("center") = CovarianceOptions{}.center, "(head, S): S_Q = S_K after the gauge");
  m.def("qr_canonical_head", [](py::handle h) {
          Args a("qr_canonical_head");
          return a.by_dtype(h, "head", [&](auto t) {
            using T = decltype(t);
            const auto& head = a.head<T>(h, "head");
            a.full_rank(head.W_q, "head.W_q", "of full column rank (its R factor is inverted)");
            a.full_rank(head.W_v, "head.W_v", "of full column rank (its R factor is inverted)");
            QrSliceResult<T> r = qr_canonical_head(head);
            return py::make_tuple(std::move(r.head), std::move(r.R_q), std::move(r.R_v));
          });
        },
        py::arg("head"), "(head, R_q, R_v): the QR slice, W_qᵀW_q = I and W_vᵀW_v = I (W_q, W_v of full column rank)");
}

void bind_fixes(py::module_& m) {
  bind_multipliers_class<double>(m);
  bind_multipliers_class<float>(m);
  bind_fix_functions(m);
}

}  // namespace gaugelab::python
