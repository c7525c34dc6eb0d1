// Update rules (core/update_rules.hpp): the options struct of each rule (keywords over the core's
// defaults), the per-matrix optimizer state, propose() and apply_step(). A step is W ← ρ·W + U, then the
// Hyperball retraction when radius > 0; quotient corrections act on U between propose and apply_step.
#include "bindings.hpp"
#include "core/update_rules.hpp"

namespace gaugelab::python {

using namespace core;

namespace {

template <class O>
py::class_<O> options_class(py::module_& m, const char* name, const char* doc) {
  return py::class_<O>(m, name, doc).def(py::init(&options_from_kwargs<O>));
}

template <class T>
void bind_state_classes(py::module_& m) {
  using S = RuleState<T>;
  py::class_<S> st(m, suffixed<T>("RuleState").c_str(), "optimizer state of one matrix (moments, step count, Hyperball radius)");
  st.def(py::init<>()).def_readwrite("step", &S::step).def_readwrite("radius", &S::radius);
  array_field(st, "moment1", &S::moment1, "[m, n] first moment (empty until the first step)");
  array_field(st, "moment2", &S::moment2, "[m, n] second moment (AdamW)");
  using P = Step<T>;
  py::class_<P> sp(m, suffixed<T>("Step").c_str(), "a proposed step: W ← rho·W + U, then retraction onto ‖W‖_F = radius if > 0");
  sp.def_readwrite("rho", &P::rho).def_readwrite("radius", &P::radius);
  array_field(sp, "U", &P::U, "[m, n] increment");
}

/// The rule's options object (SgdOptions, ...) with every number in it finite.
RuleOptions rule_options(const Args& a, py::handle rule) {
  RuleOptions o;
  try {
    o = rule.cast<RuleOptions>();
  } catch (const py::cast_error&) {
    a.fail("rule", "an options object (SgdOptions, MomentumOptions, AdamWOptions, MuonOptions, HyperballOptions)",
           py::str(py::type::handle_of(rule).attr("__name__")));
  }
  for (const py::handle name : py::reinterpret_steal<py::list>(PyObject_Dir(rule.ptr()))) {
    const std::string n = py::str(name);
    if (n.empty() || n[0] == '_') continue;
    const py::object v = rule.attr(name);
    if (py::isinstance<py::float_>(v)) a.number(v.cast<double>(), ("rule." + n).c_str());
  }
  return o;
}

void bind_step_functions(py::module_& m) {
  m.def("propose", [](py::handle rule, py::handle W, py::handle G, py::handle state) {
          Args a("propose");
          const RuleOptions o = rule_options(a, rule);
          return a.by_dtype(W, "W", [&](auto t) {
            using T = decltype(t);
            const Mat<T> w = a.matrix<T>(W, "W"), g = a.matrix<T>(G, "G", w.rows(), w.cols());
            auto& st = a.object<RuleState<T>>(state, "state", std::string("a RuleState of ") + dtype_name<T>());
            const auto same = [&](const Mat<T>& x, const char* arg) {
              a.check(x.size() == 0 || (x.rows() == w.rows() && x.cols() == w.cols()), arg, "empty or of W's shape");
              a.finite(x, arg);
            };
            same(st.moment1, "state.moment1"), same(st.moment2, "state.moment2");
            a.number(st.radius, "state.radius", 0.0);
            return propose(o, w, g, st);
          });
        },
        py::arg("rule"), py::arg("W"), py::arg("G"), py::arg("state"),
        "one step of `rule` (an options object) for W with gradient G [m, n]; updates `state`");
  m.def("apply_step", [](py::handle W, py::handle step) {
          Args a("apply_step");
          return a.by_dtype(W, "W", [&](auto t) {
            using T = decltype(t);
            Mat<T> w = a.matrix<T>(W, "W");
            const auto& s = a.object<Step<T>>(step, "step", std::string("a Step of ") + dtype_name<T>() + " (from propose)");
            a.check(s.U.rows() == w.rows() && s.U.cols() == w.cols(), "step", "a step for W's shape");
            a.finite(s.U, "step.U");
            a.number(s.rho, "step.rho"), a.number(s.radius, "step.radius", 0.0);
            apply_step(w, s);
            return w;
          });
        },
        py::arg("W"), py::arg("step"), "W after the step (a new array)");
}

}  // namespace

void bind_updates(py::module_& m) {
  options_class<SgdOptions>(m, "SgdOptions", "U = −lr·G; decoupled weight decay")
      .def_readwrite("lr", &SgdOptions::lr)
      .def_readwrite("weight_decay", &SgdOptions::weight_decay);
  options_class<MomentumOptions>(m, "MomentumOptions", "heavy-ball or Nesterov momentum (torch.optim.SGD semantics)")
      .def_readwrite("lr", &MomentumOptions::lr)
      .def_readwrite("momentum", &MomentumOptions::momentum)
      .def_readwrite("dampening", &MomentumOptions::dampening)
      .def_readwrite("nesterov", &MomentumOptions::nesterov)
      .def_readwrite("weight_decay", &MomentumOptions::weight_decay);
  options_class<AdamWOptions>(m, "AdamWOptions", "torch.optim.AdamW")
      .def_readwrite("lr", &AdamWOptions::lr)
      .def_readwrite("beta1", &AdamWOptions::beta1)
      .def_readwrite("beta2", &AdamWOptions::beta2)
      .def_readwrite("eps", &AdamWOptions::eps)
      .def_readwrite("weight_decay", &AdamWOptions::weight_decay)
      .def_readwrite("bias_correction", &AdamWOptions::bias_correction);
  options_class<NewtonSchulzOptions>(m, "NewtonSchulzOptions", "NS5 iteration of Muon")
      .def_readwrite("steps", &NewtonSchulzOptions::steps)
      .def_readwrite("a", &NewtonSchulzOptions::a)
      .def_readwrite("b", &NewtonSchulzOptions::b)
      .def_readwrite("c", &NewtonSchulzOptions::c)
      .def_readwrite("eps", &NewtonSchulzOptions::eps)
      .def_readwrite("bf16", &NewtonSchulzOptions::bf16);
  options_class<MuonOptions>(m, "MuonOptions", "KellerJordan Muon: orthogonalised Nesterov momentum")
      .def_readwrite("lr", &MuonOptions::lr)
      .def_readwrite("momentum", &MuonOptions::momentum)
      .def_readwrite("nesterov", &MuonOptions::nesterov)
      .def_readwrite("weight_decay", &MuonOptions::weight_decay)
      .def_property("orthogonaliser",
                    [](const MuonOptions& o) { return o.orthogonaliser == Orthogonaliser::newton_schulz ? "newton_schulz" : "polar_svd"; },
                    [](MuonOptions& o, const std::string& s) { o.orthogonaliser = parse_orthogonaliser(s); })
      .def_readwrite("ns", &MuonOptions::ns);
  options_class<HyperballOptions>(m, "HyperballOptions", "step of Frobenius length lr·R along `inner`'s direction, then retraction")
      .def_readwrite("lr", &HyperballOptions::lr)
      .def_readwrite("radius", &HyperballOptions::radius)
      .def_readwrite("inner", &HyperballOptions::inner);
  m.def("default_rule_options",
        [](const std::string& name) {
          Args a("default_rule_options");
          RuleKind k{};
          try {
            k = parse_rule_kind(name);
          } catch (const std::invalid_argument& e) {
            std::string must = "a known rule";
            must += std::string(e.what()).substr(std::string(e.what()).find(" ("));
            a.fail("name", must, "'" + name + "'");
          }
          return a.run([&] { return default_rule_options(k); });
        },
        py::arg("name"), "the options of sgd|momentum|adamw|muon|hyperball with every default");
  bind_state_classes<double>(m);
  bind_state_classes<float>(m);
  bind_step_functions(m);
}

}  // namespace gaugelab::python
