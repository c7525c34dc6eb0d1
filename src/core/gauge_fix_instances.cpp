// The gauge fixes (gauge_fix_gram, gauge_fix_lrm, gauge_fix_qr, gauge_fix_relu) instantiated once for
// float and double. Their headers declare these instantiations extern, so the bindings, the checkpoint
// checks and the tests that include core/gauge_fix.hpp link these instead of compiling them again.
// The float instantiations are in core/float32/gauge_fix_instances.cpp (library gaugecore_float), linked only
// by what uses float (the GPT-2 tier, the Python module, the tests): the torch-free gaugelab builds without them.
#include "core/eigen_decompositions.hpp"  // first: the decompositions below link its instances
#include "core/gauge_fix.hpp"
#include "core/instance_lists.hpp"

namespace gaugelab::core {

GAUGELAB_CORE_GAUGE_FIX_ALL(double)

}  // namespace gaugelab::core
