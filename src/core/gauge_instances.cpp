// The gauge actions, coordinates and Lie-algebra view (gauge_linalg, factor_gauge, relu_gauge, lrm_gauge,
// attention_head, attention_layer, coordinates, gauge_lie) instantiated once for float and double.
// Their headers declare these instantiations extern, so every includer links these instead of
// compiling the eigensolves, LU solves and pseudo-inverses again.
// The float instantiations are in core/float32/gauge_instances.cpp (library gaugecore_float), linked only
// by what uses float (the GPT-2 tier, the Python module, the tests): the torch-free gaugelab builds without them.
#include "core/attention_layer.hpp"
#include "core/coordinates.hpp"
#include "core/gauge_lie.hpp"
#include "core/gauge_linalg.hpp"

namespace gaugelab::core {

#define GAUGELAB_CORE_GAUGE_ALL(T) \
  GAUGELAB_CORE_GAUGE_LINALG_INSTANCES(, T) \
  GAUGELAB_CORE_FACTOR_GAUGE_INSTANCES(, T) \
  GAUGELAB_CORE_RELU_GAUGE_INSTANCES(, T) \
  GAUGELAB_CORE_LRM_GAUGE_INSTANCES(, T) \
  GAUGELAB_CORE_ATTENTION_HEAD_INSTANCES(, T) \
  GAUGELAB_CORE_ATTENTION_LAYER_INSTANCES(, T) \
  GAUGELAB_CORE_COORDINATES_INSTANCES(, T) \
  GAUGELAB_CORE_GAUGE_LIE_INSTANCES(, T)

GAUGELAB_CORE_GAUGE_ALL(double)

}  // namespace gaugelab::core
