// The double half of core/eigen_decompositions.hpp (see there): both lists, in gaugecore.
#include "core/eigen_decompositions.hpp"

GAUGELAB_CORE_EIGEN_DECOMPOSITIONS_GAUGES(, double)
GAUGELAB_CORE_EIGEN_DECOMPOSITIONS_UPDATES(, double)
