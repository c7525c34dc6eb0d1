// The float half of core/gauge_fix_instances.cpp (see there): its own library, gaugecore_float, so that what
// needs no float instantiation (the torch-free gaugelab) does not compile them.
#include "core/eigen_decompositions.hpp"  // first: the decompositions below link its instances
#include "core/gauge_fix.hpp"
#include "core/instance_lists.hpp"

namespace gaugelab::core {

GAUGELAB_CORE_GAUGE_FIX_ALL(float)

}  // namespace gaugelab::core
