// The float half of core/quotient_instances.cpp (see there): its own library, gaugecore_float, so that what
// needs no float instantiation (the torch-free gaugelab) does not compile them.
#include "core/quotient.hpp"
#include "core/update_factor_literature.hpp"
#include "core/update_factor_precond.hpp"
#include "core/instance_lists.hpp"

namespace gaugelab::core {

GAUGELAB_CORE_QUOTIENT_ALL(float)

}  // namespace gaugelab::core
