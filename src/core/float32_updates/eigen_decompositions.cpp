// The float updates' list of core/eigen_decompositions.hpp (see there): BDCSVD and LLT in gaugecore_float_updates
// with the other float update instantiations, so that neither the torch-free gaugelab nor gaugelab-torch compiles it.
#include "core/eigen_decompositions.hpp"

GAUGELAB_CORE_EIGEN_DECOMPOSITIONS_UPDATES(, float)
