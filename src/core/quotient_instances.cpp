// The quotient wrappers and the factor-pair updates built on them (quotient_solve, quotient_motion,
// quotient, update_factor_precond, update_factor_literature) instantiated once for float and double.
// Their headers declare these instantiations extern, so the tests, bindings, harness and toys that
// include them link these instead of compiling the Gram solves, QRs and eigensolves again.
// The float instantiations are in core/float32_updates/quotient_instances.cpp (library gaugecore_float_updates),
// linked only by what uses float updates (the Python module, the tests): gaugelab and gaugelab-torch build
// without them.
#include "core/eigen_decompositions.hpp"  // first: the decompositions below link its instances
#include "core/quotient.hpp"
#include "core/update_factor_literature.hpp"
#include "core/update_factor_precond.hpp"
#include "core/instance_lists.hpp"

namespace gaugelab::core {

GAUGELAB_CORE_QUOTIENT_ALL(double)

}  // namespace gaugelab::core
