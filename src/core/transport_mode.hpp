// How an explicit gauge move carries the optimizer state's first moment (transport.hpp): the enum and its one
// table of words (choice.hpp). No Eigen here: the trainer's option struct (gpt2/train/api.hpp, --state-transport)
// and the torch library's operator read the table without the transport itself.
#pragma once

#include "core/choice.hpp"

namespace gaugelab::core {

/// none: unchanged; vector: like the weights; covector: like the gradients (transport.hpp).
enum class TransportMode { none, vector, covector };
inline const ChoiceTable<TransportMode>& transport_mode_choices() {
  static const ChoiceTable<TransportMode> t = {
      {"none", TransportMode::none}, {"vector", TransportMode::vector}, {"covector", TransportMode::covector}};
  return t;
}

}  // namespace gaugelab::core
