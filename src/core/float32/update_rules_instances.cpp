// The float half of core/update_rules_instances.cpp (see there): its own library, gaugecore_float, so that what
// needs no float instantiation (the torch-free gaugelab) does not compile them.
#include "core/update_rules.hpp"

namespace gaugelab::core {

#define GAUGELAB_CORE_UPDATE_RULES_ALL(T) \
  GAUGELAB_CORE_UPDATE_STEP_INSTANCES(, T) \
  GAUGELAB_CORE_UPDATE_BF16_INSTANCES(, T) \
  GAUGELAB_CORE_UPDATE_SGD_INSTANCES(, T) \
  GAUGELAB_CORE_UPDATE_ADAMW_INSTANCES(, T) \
  GAUGELAB_CORE_UPDATE_MUON_INSTANCES(, T) \
  GAUGELAB_CORE_UPDATE_BASE_RULES_INSTANCES(, T) \
  GAUGELAB_CORE_UPDATE_HYPERBALL_INSTANCES(, T) \
  GAUGELAB_CORE_UPDATE_RULES_INSTANCES(, T)

GAUGELAB_CORE_UPDATE_RULES_ALL(float)

}  // namespace gaugelab::core
