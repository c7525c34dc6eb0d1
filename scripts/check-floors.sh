#!/usr/bin/env bash
# Checks the floors rule of DESIGN §1: code includes only from its own floor or below.
#   src/core <- src/io <- {src/harness, toys, data} <- gpt2 <- cli;  python/ (bindings) sits on core+io
# and inside gpt2 its rooms: gpt2/ops (per-layer raw-tensor math, ATen only) <- gpt2/model <- gpt2/dist <-
# {gpt2/train, gpt2/inspect, gpt2/use}, the last three never pointing at each other (a trainer change
# cannot break inspect, and the reverse), gpt2/landscape (merging, loss paths) on top of inspect's group
# actions and use's loaders, and gpt2/torch_library (the PyTorch operators of gaugelab.torch) on ops and
# the tables it exports (the conditions, their step hooks, the multiplier placements); no room points at it.
# Also: LibTorch headers only inside gpt2/; HDF5/Boost/JSON never inside src/core.
set -u
root=${1:-.}
cd "$root" || exit 2
fail=0
check() {  # folder, forbidden include regex, reason
  local hits
  hits=$(grep -rnE "^\s*#\s*include\s*[<\"]($2)" "$1" --include='*.hpp' --include='*.cpp' --include='*.h' --include='*.def' 2>/dev/null)
  if [ -n "$hits" ]; then echo "floors: $1 must not include $2 ($3):"; echo "$hits"; fail=1; fi
}
check src/core  'io/|harness/|toys/|data/|gpt2/|cli/|hdf5|H5|boost/|nlohmann/|torch/|ATen/|c10/' "core is Eigen-only math"
check src/io    'harness/|toys/|data/|gpt2/|cli/|torch/|ATen/|c10/' "io sits on core only"
check src/harness 'toys/|data/|gpt2/|cli/|torch/|ATen/|c10/' "harness sits on core+io"
check toys      'harness/|data/|gpt2/|cli/|torch/|ATen/|c10/' "toys sit on core+io"
check data      'harness/|toys/|gpt2/|cli/|torch/|ATen/|c10/' "data sits on core+io"
check gpt2      'cli/' "gpt2 never points up at the front door"
check gpt2/ops     'gpt2/(model|dist|train|inspect|use|landscape|torch_library)/' "the raw-tensor operations are the tier's ground floor"
check gpt2/model   'gpt2/(dist|train|inspect|use|landscape|torch_library)/' "the model sits on ops only"
check gpt2/dist    'gpt2/(train|inspect|use|landscape|torch_library)/' "data parallelism sits on the model only"
check gpt2/train   'gpt2/(inspect|use|landscape|torch_library)/' "the trainer uses model and dist only"
check gpt2/inspect 'gpt2/(train|use|landscape|torch_library)/' "inspect uses model and dist only"
check gpt2/use     'gpt2/(train|inspect|landscape|torch_library)/' "the model verbs use model and dist only"
check gpt2/landscape 'gpt2/(train|torch_library)/' "the landscape tools use model, dist, inspect and use, never the trainer"
check gpt2/torch_library 'gpt2/(dist|inspect|use|landscape)/' "the operators use ops and the tables only"
hits=$(grep -rnE '^\s*#\s*include\s*"gpt2/(model|train)/' gpt2/torch_library 2>/dev/null | grep -vE '"gpt2/(model/config|train/conditions|train/hook_registry)\.hpp"')
if [ -n "$hits" ]; then echo "floors: gpt2/torch_library includes only the tables of model and train (config.hpp, conditions.hpp, hook_registry.hpp):"; echo "$hits"; fail=1; fi
for f in gpt2/*.cpp gpt2/*.hpp; do [ -e "$f" ] && { echo "floors: $f sits outside the gpt2 rooms (ops, model, dist, train, inspect, use, landscape, torch_library)"; fail=1; }; done
check cli       'torch/|ATen/|c10/' "LibTorch headers stay inside gpt2/"
check python    'harness/|toys/|data/|gpt2/|cli/|torch/|ATen/|c10/' "the bindings use core and io only"
check fuzz      'cli/|torch/|ATen/|c10/|gpt2/(dist|train|inspect|use|landscape)/' "fuzz targets build without LibTorch: only gpt2/model's LibTorch-free readers"
[ $fail = 0 ] && echo "floors: ok"
exit $fail
