// The update rules (update_step, update_sgd, update_adamw, update_muon, update_bf16, update_base_rules,
// update_hyperball, update_rules) instantiated once for float and double. Their headers declare these
// instantiations extern, so a test, binding or toy that includes them links these instead of compiling
// the rules' Eigen code again (the rules were the largest part of several translation units' compile time).
// The float instantiations are in core/float32_updates/update_rules_instances.cpp (library gaugecore_float_updates),
// linked only by what uses float updates (the Python module, the tests): gaugelab and gaugelab-torch build
// without them.
#include "core/eigen_decompositions.hpp"  // first: the decompositions below link its instances
#include "core/update_rules.hpp"
#include "core/instance_lists.hpp"

namespace gaugelab::core {

GAUGELAB_CORE_UPDATE_RULES_ALL(double)

}  // namespace gaugelab::core
