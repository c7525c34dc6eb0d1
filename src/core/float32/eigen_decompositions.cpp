// The float gauges' list of core/eigen_decompositions.hpp (see there): in gaugecore_float with the other float
// gauge instantiations, so that the torch-free gaugelab does not compile it.
#include "core/eigen_decompositions.hpp"

GAUGELAB_CORE_EIGEN_DECOMPOSITIONS_GAUGES(, float)
