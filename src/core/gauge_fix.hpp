// Gauge fixing (DESIGN §3 "Gauge fixing"): one header per gauge family, all included here.
//   core/gauge_fix_relu.hpp  soft penalty G, its gradient, relaxation rates κ, hard neuron balance (seed 004)
//   core/gauge_fix_lrm.hpp   GaugeFix-LRM Q/K multiplier projection (seed 000 eqs. 4–6)
//   core/gauge_fix_gram.hpp  Gram balance of factor pairs and of a head's Q/K sector (seed 001 App. E.4/G)
//   core/gauge_fix_qr.hpp    QR canonical slice + head ordering, canonicalize_layer (seed 001 Algorithm 1)
// Each fix's comment states the group it removes and why its representative was chosen.
#pragma once

#include "core/gauge_fix_gram.hpp"
#include "core/gauge_fix_lrm.hpp"
#include "core/gauge_fix_qr.hpp"
#include "core/gauge_fix_relu.hpp"
