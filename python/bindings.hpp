// Python bindings of the symmetry core (module gaugelab._core): one bind_* function per area, each in
// its own file. A function is bound once and takes NumPy arrays as objects: Args (below) checks every
// argument before the core sees it (dimensions, dtype, shape, finiteness, invertibility where the math
// inverts) and computes in the dtype of the call's first array or object, float64 or float32 (integer
// arrays and lists are taken as that dtype). Templated classes carry a _f64 / _f32 suffix (the gaugelab
// package's factories choose the suffix from the arrays' dtype). Every bad input raises one ValueError
// "gaugelab.<function>: <argument> must be <requirement> (got <what it was>)"; the core's own refusals
// (std::invalid_argument, std::domain_error) are raised as ValueError prefixed with the function.
#pragma once

#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <Eigen/SVD>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "core/attention_head.hpp"
#include "core/types.hpp"

namespace gaugelab::python {

namespace py = pybind11;
using core::Index;
using core::Mat;
using core::RowVec;
using core::Vec;

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

template <class T>
const char* dtype_name() {
  return sizeof(T) == sizeof(double) ? "float64" : "float32";
}

/// The checks of one call of gaugelab.<fn>.
class Args {
 public:
  explicit Args(std::string fn) : fn_(std::move(fn)) {}

  [[noreturn]] void fail(const std::string& arg, const std::string& must, const std::string& got = {}) const {
    throw py::value_error("gaugelab." + fn_ + ": " + arg + " must be " + must + (got.empty() ? "" : " (got " + got + ")"));
  }
  void check(bool ok, const std::string& arg, const std::string& must, const std::string& got = {}) const {
    if (!ok) fail(arg, must, got);
  }
  /// A scalar: finite, and >= lo (> lo when strict).
  double number(double v, const char* arg, double lo = -INFINITY, bool strict = false) const {
    const bool ok = std::isfinite(v) && (strict ? v > lo : v >= lo);
    if (!ok) fail(arg, std::isinf(lo) ? "finite" : std::string("finite and ") + (strict ? "> " : ">= ") + fmt(lo), fmt(v));
    return v;
  }
  Index count(Index v, const char* arg, Index lo = 1) const {
    check(v >= lo, arg, ">= " + std::to_string(lo), std::to_string(v));
    return v;
  }

  /// Whether the call computes in float32: from x's dtype (an array, list or number) or its class suffix
  /// (AttentionHead_f32, ...). x becomes the reference the other arrays' dtype is named after.
  bool f32(py::handle x, const char* arg) {
    driver_ = arg;
    const std::string cls = py::str(py::type::handle_of(x).attr("__name__"));
    if (cls.size() > 4 && cls.compare(cls.size() - 4, 4, "_f32") == 0) return true;
    if (cls.size() > 4 && cls.compare(cls.size() - 4, 4, "_f64") == 0) return false;
    if (is_text(x) || (!py::isinstance<py::array>(x) && !py::isinstance<py::sequence>(x) &&
                       !py::isinstance<py::int_>(x) && !py::isinstance<py::float_>(x)))
      fail(arg, "an array or a gaugelab object of float64 or float32", cls);
    const py::array a = as_array(x, arg);
    const char k = a.dtype().kind();
    if (k == 'f' && a.itemsize() == 4) return true;
    check((k == 'f' && a.itemsize() == 8) || k == 'i' || k == 'u', arg, "float64 or float32", dtype_str(a));
    return false;
  }

  /// A 2-D array [rows, cols] (-1: any) of finite values, as T.
  template <class T>
  Mat<T> matrix(py::handle x, const char* arg, Index rows = -1, Index cols = -1) const {
    const py::array a = typed<T>(x, arg, 2);
    const bool fits = (rows < 0 || a.shape(0) == rows) && (cols < 0 || a.shape(1) == cols);
    check(fits, arg, "of shape [" + dim(rows) + ", " + dim(cols) + "]", shape_str(a));
    return finite(a.cast<Mat<T>>(), arg);
  }
  /// A 1-D array [n] (-1: any) of finite values, as a column (V = Vec<T>) or a row (V = RowVec<T>).
  template <class T, class V = Vec<T>>
  V vector(py::handle x, const char* arg, Index n = -1) const {
    const py::array a = typed<T>(x, arg, 1);
    check(n < 0 || a.shape(0) == n, arg, "of shape [" + dim(n) + "]", shape_str(a));
    return finite(a.cast<V>(), arg);
  }
  /// Any Eigen array type V of the core (Mat, Vec, RowVec), e.g. for a field's setter.
  template <class V>
  V array_as(py::handle x, const char* arg) const {
    using T = typename V::Scalar;
    if constexpr (V::ColsAtCompileTime == 1) return vector<T, V>(x, arg);
    else if constexpr (V::RowsAtCompileTime == 1) return vector<T, V>(x, arg);
    else return matrix<T>(x, arg);
  }

  template <class M>
  const M& finite(const M& m, const std::string& arg) const {
    if (m.allFinite()) return m;
    Index i = 0;
    while (std::isfinite(static_cast<double>(m.data()[i]))) ++i;
    fail(arg, "finite", fmt(static_cast<double>(m.data()[i])) + " in it");
  }

  /// m [rows, cols] with rows >= cols and full column rank in T's precision (smallest singular value above
  /// max(rows, cols)·ε·largest): what an inverse of m, mᵀm or its R factor needs. Square m: invertible.
  template <class T>
  void full_rank(const Mat<T>& m, const std::string& arg, const std::string& must) const {
    check(m.rows() >= m.cols(), arg, must, "shape " + shape_str(m.rows(), m.cols()) + ", more columns than rows");
    const Vec<T> s = Eigen::JacobiSVD<Mat<T>>(m).singularValues();
    const T tol = T(std::max(m.rows(), m.cols())) * std::numeric_limits<T>::epsilon() * s(0);
    if (!(s(s.size() - 1) > tol))
      fail(arg, must, s(0) > T(0) ? "condition number " + fmt(double(s(0)) / double(s(s.size() - 1))) : "all zeros");
  }
  template <class T>
  void invertible(const Mat<T>& m, const std::string& arg) const {
    full_rank<T>(m, arg, "invertible");
  }

  /// An instance of the bound class C (e.g. AttentionHead<T>), by reference.
  template <class C>
  C& object(py::handle x, const char* arg, const std::string& what) const {
    if (!py::isinstance<C>(x)) fail(arg, what, py::str(py::type::handle_of(x).attr("__name__")));
    return x.cast<C&>();
  }
  /// An AttentionHead of dtype T with consistent shapes and finite entries.
  template <class T>
  const core::AttentionHead<T>& head(py::handle x, const char* arg) const {
    const auto& h = object<core::AttentionHead<T>>(x, arg, std::string("an AttentionHead of ") + dtype_name<T>());
    run([&] { core::require_head(h, arg); });
    const std::string a(arg);
    finite(h.W_q, a + ".W_q"), finite(h.W_k, a + ".W_k"), finite(h.W_v, a + ".W_v"), finite(h.W_o, a + ".W_o");
    finite(h.b_q, a + ".b_q"), finite(h.b_k, a + ".b_k"), finite(h.b_v, a + ".b_v");
    return h;
  }

  /// f() with the core's refusals raised as ValueError naming the function.
  template <class F>
  auto run(F&& f) const -> decltype(f()) {
    try {
      return f();
    } catch (const std::invalid_argument& e) {
      throw py::value_error("gaugelab." + fn_ + ": " + e.what());
    } catch (const std::domain_error& e) {
      throw py::value_error("gaugelab." + fn_ + ": " + e.what());
    }
  }

  /// f(T{}) as a Python object, T = float when x (see f32) is float32, else double.
  template <class F>
  py::object by_dtype(py::handle x, const char* arg, F&& f) {
    if (f32(x, arg)) return run([&] { return to_object(f(float{})); });
    return run([&] { return to_object(f(double{})); });
  }
  template <class R>
  static py::object to_object(R&& r) {
    if constexpr (std::is_base_of_v<py::handle, std::decay_t<R>>) return py::object(std::forward<R>(r));
    else return py::cast(std::forward<R>(r));
  }

  static std::string fmt(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.6g", v);
    return b;
  }

 private:
  static std::string dim(Index n) { return n < 0 ? "*" : std::to_string(n); }
  static std::string shape_str(Index r, Index c) {
    std::string s = "[";  // appended, not a chain of operator+ (GCC 12 -Wrestrict false positive)
    s += std::to_string(r);
    s += ", ";
    s += std::to_string(c);
    s += "]";
    return s;
  }
  static std::string shape_str(const py::array& a) {
    std::string s = std::to_string(a.ndim()) + "-D [";
    for (py::ssize_t i = 0; i < a.ndim(); ++i) s += (i ? ", " : "") + std::to_string(a.shape(i));
    return s + "]";
  }
  static std::string dtype_str(const py::array& a) { return py::str(a.dtype()); }

  /// A string or bytes: NumPy makes an array of characters of it, which is never the array meant.
  static bool is_text(py::handle x) { return py::isinstance<py::str>(x) || py::isinstance<py::bytes>(x); }

  py::array as_array(py::handle x, const char* arg) const {
    if (is_text(x)) fail(arg, "an array", py::str(py::type::handle_of(x).attr("__name__")));
    py::array a = py::array::ensure(x);
    if (!a) fail(arg, "an array", py::str(py::type::handle_of(x).attr("__name__")));
    return a;
  }
  /// x as an array of ndim dimensions, none empty, of dtype T (or integers, taken as T).
  template <class T>
  py::array typed(py::handle x, const char* arg, int ndim) const {
    const py::array a = as_array(x, arg);
    const char k = a.dtype().kind();
    const bool same = k == 'f' && a.itemsize() == static_cast<py::ssize_t>(sizeof(T));
    if (!same && k != 'i' && k != 'u')
      fail(arg, std::string(dtype_name<T>()) + (driver_.empty() || driver_ == arg ? "" : " like " + driver_), dtype_str(a));
    check(a.ndim() == ndim, arg, ndim == 2 ? "2-D [rows, cols]" : "1-D [n]", shape_str(a));
    check(a.size() > 0, arg, "non-empty", shape_str(a));
    return a;
  }

  std::string fn_;
  std::string driver_;
};

/// A field of a bound class whose setter checks the value as Args does ("gaugelab.<Class>.<field>: value
/// must be ..."); the getter returns a view into the object, as def_readwrite does.
template <class C, class V>
void array_field(py::class_<C>& cls, const char* name, V C::*field, const char* doc) {
  const std::string who = std::string(py::str(cls.attr("__name__"))) + "." + name;
  cls.def_property(
      name, py::cpp_function([field](C& c) -> V& { return c.*field; }, py::return_value_policy::reference_internal),
      py::cpp_function([field, who](C& c, py::handle v) { c.*field = Args(who).array_as<V>(v, "value"); }), doc);
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
