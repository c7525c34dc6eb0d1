// `gaugelab diag`: its tier has not landed yet; it says so and fails, never pretends.
#include "verbs.hpp"

namespace gaugelab::cli {

int verb_diag(const Args&) { return not_built("diag", "tier 2 harness"); }

}  // namespace gaugelab::cli
