// gaugelab._core: the symmetry core (src/core) for Python. The package python/gaugelab wraps it.
#include "bindings.hpp"

PYBIND11_MODULE(_core, m) {
  m.doc() = "gaugelab symmetry core: gauge actions, draws, coordinates, fixes, quotient corrections, update rules";
  gaugelab::python::bind_attention(m);
  gaugelab::python::bind_random(m);
  gaugelab::python::bind_coordinates(m);
  gaugelab::python::bind_fixes(m);
  gaugelab::python::bind_quotient(m);
  gaugelab::python::bind_updates(m);
  gaugelab::python::bind_lie(m);
}
