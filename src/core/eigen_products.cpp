// The double half of core/eigen_products.hpp (see there), in gaugecore.
#include "core/eigen_products.hpp"

GAUGELAB_CORE_EIGEN_PRODUCTS(, double)
