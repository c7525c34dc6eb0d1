// The float half of core/gauge_instances.cpp (see there): its own library, gaugecore_float, so that what
// needs no float instantiation (the torch-free gaugelab) does not compile them.
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

}  // namespace gaugelab::core
