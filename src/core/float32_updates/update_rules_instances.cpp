// The float half of core/update_rules_instances.cpp (see there): the library gaugecore_float_updates, so that what
// uses no float update (the torch-free gaugelab, and gaugelab-torch: the GPT-2 tier's optimizers are LibTorch's)
// does not compile them.
#include "core/eigen_decompositions.hpp"  // first: the decompositions below link its instances
#include "core/update_rules.hpp"
#include "core/instance_lists.hpp"

namespace gaugelab::core {

GAUGELAB_CORE_UPDATE_RULES_ALL(float)

}  // namespace gaugelab::core
