// The float half of core/gauge_fix_instances.cpp (see there): its own library, gaugecore_float, so that what
// needs no float instantiation (the torch-free gaugelab) does not compile them.
#include "core/gauge_fix.hpp"

namespace gaugelab::core {

#define GAUGELAB_CORE_GAUGE_FIX_ALL(T) \
  GAUGELAB_CORE_GAUGE_FIX_GRAM_INSTANCES(, T) \
  GAUGELAB_CORE_GAUGE_FIX_LRM_INSTANCES(, T) \
  GAUGELAB_CORE_GAUGE_FIX_QR_INSTANCES(, T) \
  GAUGELAB_CORE_GAUGE_FIX_RELU_INSTANCES(, T)

GAUGELAB_CORE_GAUGE_FIX_ALL(float)

}  // namespace gaugelab::core
