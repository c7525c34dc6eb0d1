// `gaugelab train`: its tier has not landed yet; it says so and fails, never pretends.
#include "verbs.hpp"

namespace gaugelab::cli {

int verb_train(const Args&) { return not_built("train", "GPT-2 trainer"); }

}  // namespace gaugelab::cli
