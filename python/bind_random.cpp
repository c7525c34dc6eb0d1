// Seeded gauge draws (core/random.hpp, core/gauge_sampling.hpp). The core draws in double from the
// portable generator and casts, so a float32 draw is the float64 draw of the same seed, cast; `dtype`
// does that cast here.
#include "bindings.hpp"
#include "core/gauge_sampling.hpp"
#include "core/random.hpp"

namespace gaugelab::python {

using namespace core;

namespace {

py::object as_dtype(const Mat<double>& x, const py::object& dtype) { return py::cast(x).attr("astype")(dtype); }
py::object as_dtype(const Vec<double>& x, const py::object& dtype) { return py::cast(x).attr("astype")(dtype); }

}  // namespace

void bind_random(py::module_& m) {
  py::class_<Rng>(m, "Rng", "the project's portable generator (mt19937_64); a seed reproduces a draw anywhere")
      .def(py::init([](std::uint64_t seed) { return Rng(seed); }), py::arg("seed"));
  const py::object f64 = py::str("float64");
  m.def("randn", [](Rng& g, Index rows, Index cols, double sd, py::object dt) { return as_dtype(randn<double>(g, rows, cols, sd), dt); },
        py::arg("rng"), py::arg("rows"), py::arg("cols"), py::arg("stddev") = 1.0, py::arg("dtype") = f64,
        "[rows, cols] i.i.d. N(0, stddev²) (portable Box–Muller)");
  m.def("random_orthogonal", [](Rng& g, Index r, py::object dt) { return as_dtype(random_orthogonal<double>(g, r), dt); },
        py::arg("rng"), py::arg("r"), py::arg("dtype") = f64, "Haar-distributed O(r)");
  m.def("random_gl", [](Rng& g, Index r, double kappa, py::object dt) { return as_dtype(random_gl<double>(g, r, kappa), dt); },
        py::arg("rng"), py::arg("r"), py::arg("kappa"), py::arg("dtype") = f64,
        "U·diag(σ)·Vᵀ [r, r] with condition number exactly kappa, det ±1");
  m.def("random_diagonal_kappa",
        [](Rng& g, Index r, double kappa, py::object dt) { return as_dtype(random_diagonal_kappa<double>(g, r, kappa), dt); },
        py::arg("rng"), py::arg("r"), py::arg("kappa"), py::arg("dtype") = f64, "diagonal [r, r] with condition number kappa");
  m.def("random_positive_diagonal",
        [](Rng& g, Index r, double a, py::object dt) { return as_dtype(random_positive_diagonal<double>(g, r, a), dt); },
        py::arg("rng"), py::arg("r"), py::arg("log_spread"), py::arg("dtype") = f64, "[r] factors exp(U(−a, a))");
  m.def("near_orthogonal",
        [](Rng& g, Index r, double delta, py::object dt) { return as_dtype(near_orthogonal<double>(g, r, delta), dt); },
        py::arg("rng"), py::arg("r"), py::arg("perturbation"), py::arg("dtype") = f64, "Q·(I + δG), Q Haar, G ~ N(0, 1/r)");
}

}  // namespace gaugelab::python
