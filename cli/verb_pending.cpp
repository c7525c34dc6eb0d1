// Verbs whose tiers have not landed yet: they say so and fail, never pretend.
#include "verbs.hpp"

namespace gaugelab::cli {

int verb_diag(const Args&) { return not_built("diag", "tier 2 harness"); }
int verb_train(const Args&) { return not_built("train", "GPT-2 trainer"); }
int verb_inspect(const Args&) { return not_built("inspect", "checkpoint analysis"); }

}  // namespace gaugelab::cli
