// Python bindings of the symmetry core (module gaugelab._core): one bind_* function per area, each in
// its own file. Every templated function is bound for float64 and float32; pybind11 picks the overload
// whose dtype matches the arrays passed (float64 first), and templated classes carry a _f64 / _f32
// suffix (the gaugelab package's factories choose the suffix from the arrays' dtype).
// Core exceptions reach Python as ValueError (std::invalid_argument, std::domain_error).
#pragma once

#include <pybind11/eigen.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>

namespace gaugelab::python {

namespace py = pybind11;

void bind_attention(py::module_& m);    // bind_attention.cpp: heads, forward, Q/K and V/O gauges, factor pairs
void bind_random(py::module_& m);       // bind_random.cpp: seeded generator and gauge draws
void bind_coordinates(py::module_& m);  // bind_coordinates.cpp: gauge coordinates, drift, invariance errors
void bind_fixes(py::module_& m);        // bind_fixes.cpp: GaugeFix-LRM, Gram balance, QR slice
void bind_quotient(py::module_& m);     // bind_quotient.cpp: quotient corrections, represented motion
void bind_updates(py::module_& m);      // bind_updates.cpp: update rules, optimizer state, steps
void bind_lie(py::module_& m);          // bind_lie.cpp: orbit tangents, horizontal projections

/// Class-name suffix of scalar T: "_f64" or "_f32".
template <class T>
std::string suffixed(const char* name) {
  return std::string(name) + (sizeof(T) == sizeof(double) ? "_f64" : "_f32");
}

/// An options struct built from keyword arguments: its defaults, then each keyword set as an
/// attribute (an unknown keyword raises AttributeError naming it).
template <class O>
O options_from_kwargs(const py::kwargs& kw) {
  py::object o = py::cast(O{});
  for (const auto& [k, v] : kw) py::setattr(o, k, v);
  return o.cast<O>();
}

}  // namespace gaugelab::python
