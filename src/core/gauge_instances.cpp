// The gauge actions, coordinates and Lie-algebra view (gauge_linalg, factor_gauge, relu_gauge, lrm_gauge,
// attention_head, attention_layer, coordinates, gauge_lie) instantiated once for float and double.
// Their headers declare these instantiations extern, so every includer links these instead of
// compiling the eigensolves, LU solves and pseudo-inverses again.
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

GAUGELAB_CORE_GAUGE_ALL(float)
GAUGELAB_CORE_GAUGE_ALL(double)

}  // namespace gaugelab::core
