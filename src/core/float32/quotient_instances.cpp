// The float half of core/quotient_instances.cpp (see there): its own library, gaugecore_float, so that what
// needs no float instantiation (the torch-free gaugelab) does not compile them.
#include "core/quotient.hpp"
#include "core/update_factor_literature.hpp"
#include "core/update_factor_precond.hpp"

namespace gaugelab::core {

#define GAUGELAB_CORE_QUOTIENT_ALL(T) \
  GAUGELAB_CORE_QUOTIENT_SOLVE_INSTANCES(, T) \
  GAUGELAB_CORE_QUOTIENT_MOTION_INSTANCES(, T) \
  GAUGELAB_CORE_QUOTIENT_INSTANCES(, T) \
  GAUGELAB_CORE_UPDATE_FACTOR_PRECOND_INSTANCES(, T) \
  GAUGELAB_CORE_UPDATE_FACTOR_LITERATURE_INSTANCES(, T)

GAUGELAB_CORE_QUOTIENT_ALL(float)

}  // namespace gaugelab::core
