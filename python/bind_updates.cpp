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

}  // namespace

template <class T>
void bind_updates_t(py::module_& m) {
  using S = RuleState<T>;
  py::class_<S>(m, suffixed<T>("RuleState").c_str(), "optimizer state of one matrix (moments, step count, Hyperball radius)")
      .def(py::init<>())
      .def_readwrite("moment1", &S::moment1)
      .def_readwrite("moment2", &S::moment2)
      .def_readwrite("step", &S::step)
      .def_readwrite("radius", &S::radius);
  using P = Step<T>;
  py::class_<P>(m, suffixed<T>("Step").c_str(), "a proposed step: W ← rho·W + U, then retraction onto ‖W‖_F = radius if > 0")
      .def_readwrite("U", &P::U)
      .def_readwrite("rho", &P::rho)
      .def_readwrite("radius", &P::radius);
  m.def("propose", &propose<T>, py::arg("rule"), py::arg("W"), py::arg("G"), py::arg("state"),
        "one step of `rule` (an options object) for W with gradient G; updates `state`");
  m.def("apply_step", [](Mat<T> w, const P& s) { apply_step(w, s); return w; }, py::arg("W"), py::arg("step"),
        "W after the step (a new array)");
}

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
  m.def("default_rule_options", [](const std::string& name) { return default_rule_options(parse_rule_kind(name)); },
        py::arg("name"), "the options of sgd|momentum|adamw|muon|hyperball with every default");
  bind_updates_t<double>(m);
  bind_updates_t<float>(m);
}

}  // namespace gaugelab::python
