// The gauge actions, coordinates and Lie-algebra view (gauge_linalg, factor_gauge, relu_gauge, lrm_gauge,
// attention_head, attention_layer, coordinates, gauge_lie) instantiated once for float and double.
// Their headers declare these instantiations extern, so every includer links these instead of
// compiling the eigensolves, LU solves and pseudo-inverses again.
// The float instantiations are in core/float32/gauge_instances.cpp (library gaugecore_float), linked only
// by what uses float (the GPT-2 tier, the Python module, the tests): the torch-free gaugelab builds without them.
#include "core/eigen_decompositions.hpp"  // first: the decompositions below link its instances
#include "core/attention_layer.hpp"
#include "core/coordinates.hpp"
#include "core/gauge_lie.hpp"
#include "core/gauge_linalg.hpp"
#include "core/instance_lists.hpp"

namespace gaugelab::core {

GAUGELAB_CORE_GAUGE_ALL(double)

}  // namespace gaugelab::core
