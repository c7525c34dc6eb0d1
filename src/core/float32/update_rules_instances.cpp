// The float half of core/update_rules_instances.cpp (see there): its own library, gaugecore_float, so that what
// needs no float instantiation (the torch-free gaugelab) does not compile them.
#include "core/update_rules.hpp"
#include "core/instance_lists.hpp"

namespace gaugelab::core {

GAUGELAB_CORE_UPDATE_RULES_ALL(float)

}  // namespace gaugelab::core
