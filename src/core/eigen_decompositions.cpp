// The double half of core/eigen_decompositions.hpp (see there).
#include "core/eigen_decompositions.hpp"

GAUGELAB_CORE_EIGEN_DECOMPOSITIONS(, double)
