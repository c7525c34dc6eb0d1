// gaugelab._core: the symmetry core (src/core) for Python. The package python/gaugelab wraps it.
#include "bindings.hpp"

PYBIND11_MODULE(_core, m) {
#if PYBIND11_VERSION_HEX < 0x020C0000
  // pybind11 < 2.12 predates NumPy 2: its array casters read NumPy 1's C structures and crash (SIGSEGV)
  // on any array under NumPy 2. Refuse the import instead.
  const std::string numpy = pybind11::str(pybind11::module_::import("numpy").attr("__version__"));
  if (numpy.rfind("1.", 0) != 0)
    throw pybind11::import_error("gaugelab: this module was built with pybind11 " PYBIND11_TOSTRING(PYBIND11_VERSION_MAJOR) "." PYBIND11_TOSTRING(
        PYBIND11_VERSION_MINOR) ", which predates NumPy 2 (this Python has NumPy " + numpy +
                                 "); rebuild with pybind11 >= 2.12 (scripts/install-deps.sh installs it into the venv) or use NumPy 1");
#endif
  m.doc() = "gaugelab symmetry core: gauge actions, draws, coordinates, fixes, quotient corrections, update rules";
  m.attr("pybind11_version") = PYBIND11_TOSTRING(PYBIND11_VERSION_MAJOR) "." PYBIND11_TOSTRING(PYBIND11_VERSION_MINOR) "." PYBIND11_TOSTRING(PYBIND11_VERSION_PATCH);
  gaugelab::python::bind_attention(m);
  gaugelab::python::bind_random(m);
  gaugelab::python::bind_coordinates(m);
  gaugelab::python::bind_fixes(m);
  gaugelab::python::bind_quotient(m);
  gaugelab::python::bind_updates(m);
  gaugelab::python::bind_lie(m);
}
