// The float half of core/eigen_products.hpp (see there): in gaugecore_float with the float gauges that call it
// (and, through it, the float updates of gaugecore_float_updates).
#include "core/eigen_products.hpp"

GAUGELAB_CORE_EIGEN_PRODUCTS(, float)
