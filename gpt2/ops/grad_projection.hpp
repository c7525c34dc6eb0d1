// Which gauge-orthogonal projection of the attention heads' directions (seed 001 App. H.2): none, Alg. 2's
// approximation, or the exact one (Remark 51's Sylvester solve); head_projection_layer.hpp computes them. The
// enum and its one table of words (--grad-projection, the torch library's mode argument). No LibTorch here.
#pragma once

#include <string>

#include "core/choice.hpp"

namespace gaugelab::gpt2 {

enum class GradProjection { none, approx, exact };

inline const core::ChoiceTable<GradProjection>& grad_projection_table() {
  static const core::ChoiceTable<GradProjection> t = {
      {"none", GradProjection::none}, {"approx", GradProjection::approx}, {"exact", GradProjection::exact}};
  return t;
}

}  // namespace gaugelab::gpt2
