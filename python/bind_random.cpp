// Seeded gauge draws (core/random.hpp, core/gauge_sampling.hpp). The core draws in double from the
// portable generator and casts, so a float32 draw is the float64 draw of the same seed, cast; `dtype`
// does that cast here.
#include "bindings.hpp"
#include "core/gauge_sampling.hpp"
#include "core/random.hpp"

namespace gaugelab::python {

using namespace core;

namespace {

/// f(args...) drawn in double and cast to `dtype`; sizes checked by the caller.
template <class F>
py::object draw(const char* fn, const py::object& dtype, F f) {
  Args a(fn);
  py::dtype dt;
  try {
    dt = py::dtype::from_args(dtype);
  } catch (const py::error_already_set&) {
    a.fail("dtype", "float64 or float32", py::repr(dtype));
  }
  a.check(dt.kind() == 'f' && (dt.itemsize() == 8 || dt.itemsize() == 4), "dtype", "float64 or float32", py::str(dt));
  return py::cast(a.run([&] { return f(a); })).attr("astype")(dt);
}

}  // namespace

void bind_random(py::module_& m) {
  py::class_<Rng>(m, "Rng", "the project's portable generator (mt19937_64); a seed reproduces a draw anywhere")
      .def(py::init([](const py::int_& seed) {
             Args("Rng").check(!(seed < py::int_(0)) && !(seed > py::int_(UINT64_MAX)), "seed", "in [0, 2⁶⁴)", py::repr(seed));
             return Rng(seed.cast<std::uint64_t>());
           }),
           py::arg("seed"));
  const py::object f64 = py::str("float64");
  m.def("randn", [](Rng& g, Index rows, Index cols, double sd, py::object dt) {
          return draw("randn", dt, [&](const Args& a) {
            return randn<double>(g, a.count(rows, "rows"), a.count(cols, "cols"), a.number(sd, "stddev", 0.0));
          });
        },
        py::arg("rng"), py::arg("rows"), py::arg("cols"), py::arg("stddev") = 1.0, py::arg("dtype") = f64,
        "[rows, cols] i.i.d. N(0, stddev²) (portable Box–Muller)");
  m.def("random_orthogonal", [](Rng& g, Index r, py::object dt) {
          return draw("random_orthogonal", dt, [&](const Args& a) { return random_orthogonal<double>(g, a.count(r, "r")); });
        },
        py::arg("rng"), py::arg("r"), py::arg("dtype") = f64, "Haar-distributed O(r)");
  m.def("random_gl", [](Rng& g, Index r, double kappa, py::object dt) {
          return draw("random_gl", dt, [&](const Args& a) {
            return random_gl<double>(g, a.count(r, "r"), a.number(kappa, "kappa", 1.0));
          });
        },
        py::arg("rng"), py::arg("r"), py::arg("kappa"), py::arg("dtype") = f64,
        "U·diag(σ)·Vᵀ [r, r] with condition number exactly kappa >= 1, det ±1");
  m.def("random_diagonal_kappa", [](Rng& g, Index r, double kappa, py::object dt) {
          return draw("random_diagonal_kappa", dt, [&](const Args& a) {
            return random_diagonal_kappa<double>(g, a.count(r, "r"), a.number(kappa, "kappa", 1.0));
          });
        },
        py::arg("rng"), py::arg("r"), py::arg("kappa"), py::arg("dtype") = f64, "diagonal [r, r] with condition number kappa >= 1");
  m.def("random_positive_diagonal", [](Rng& g, Index r, double s, py::object dt) {
          return draw("random_positive_diagonal", dt, [&](const Args& a) {
            return random_positive_diagonal<double>(g, a.count(r, "r"), a.number(s, "log_spread", 0.0));
          });
        },
        py::arg("rng"), py::arg("r"), py::arg("log_spread"), py::arg("dtype") = f64, "[r] factors exp(U(−a, a))");
  m.def("near_orthogonal", [](Rng& g, Index r, double delta, py::object dt) {
          return draw("near_orthogonal", dt, [&](const Args& a) {
            return near_orthogonal<double>(g, a.count(r, "r"), a.number(delta, "perturbation", 0.0));
          });
        },
        py::arg("rng"), py::arg("r"), py::arg("perturbation"), py::arg("dtype") = f64, "Q·(I + δG), Q Haar, G ~ N(0, 1/r)");
}

}  // namespace gaugelab::python
