// The float half of core/gauge_instances.cpp (see there): its own library, gaugecore_float, so that what
// needs no float instantiation (the torch-free gaugelab) does not compile them.
#include "core/eigen_decompositions.hpp"  // first: the decompositions below link its instances
#include "core/attention_layer.hpp"
#include "core/coordinates.hpp"
#include "core/gauge_lie.hpp"
#include "core/gauge_linalg.hpp"
#include "core/instance_lists.hpp"

namespace gaugelab::core {

GAUGELAB_CORE_GAUGE_ALL(float)

}  // namespace gaugelab::core
