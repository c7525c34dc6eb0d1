// `gaugelab inspect`: its tier has not landed yet; it says so and fails, never pretends.
#include "verbs.hpp"

namespace gaugelab::cli {

int verb_inspect(const Args&) { return not_built("inspect", "checkpoint analysis"); }

}  // namespace gaugelab::cli
