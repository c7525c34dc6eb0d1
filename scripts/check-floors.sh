#!/usr/bin/env bash
# Checks the floors rule of DESIGN §1: code includes only from its own floor or below.
#   src/core <- src/io <- {src/harness, toys, data} <- gpt2 <- cli;  python/ (bindings) sits on core+io
# and inside gpt2 its rooms: gpt2/model <- gpt2/dist <- {gpt2/train, gpt2/inspect, gpt2/use}, the last
# three never pointing at each other (a trainer change cannot break inspect, and the reverse), and
# gpt2/landscape (merging, loss paths) on top of inspect's group actions and use's loaders.
# Also: LibTorch headers only inside gpt2/; HDF5/Boost/JSON never inside src/core.
set -u
root=${1:-.}
cd "$root" || exit 2
fail=0
check() {  # folder, forbidden include regex, reason
  local hits
  hits=$(grep -rnE "^\s*#\s*include\s*[<\"]($2)" "$1" --include='*.hpp' --include='*.cpp' --include='*.h' 2>/dev/null)
  if [ -n "$hits" ]; then echo "floors: $1 must not include $2 ($3):"; echo "$hits"; fail=1; fi
}
check src/core  'io/|harness/|toys/|data/|gpt2/|cli/|hdf5|H5|boost/|nlohmann/|torch/|ATen/|c10/' "core is Eigen-only math"
check src/io    'harness/|toys/|data/|gpt2/|cli/|torch/|ATen/|c10/' "io sits on core only"
check src/harness 'toys/|data/|gpt2/|cli/|torch/|ATen/|c10/' "harness sits on core+io"
check toys      'harness/|data/|gpt2/|cli/|torch/|ATen/|c10/' "toys sit on core+io"
check data      'harness/|toys/|gpt2/|cli/|torch/|ATen/|c10/' "data sits on core+io"
check gpt2      'cli/' "gpt2 never points up at the front door"
check gpt2/model   'gpt2/(dist|train|inspect|use|landscape)/' "the model room is the tier's ground floor"
check gpt2/dist    'gpt2/(train|inspect|use|landscape)/' "data parallelism sits on the model only"
check gpt2/train   'gpt2/(inspect|use|landscape)/' "the trainer uses model and dist only"
check gpt2/inspect 'gpt2/(train|use|landscape)/' "inspect uses model and dist only"
check gpt2/use     'gpt2/(train|inspect|landscape)/' "the model verbs use model and dist only"
check gpt2/landscape 'gpt2/train/' "the landscape tools use model, dist, inspect and use, never the trainer"
for f in gpt2/*.cpp gpt2/*.hpp; do [ -e "$f" ] && { echo "floors: $f sits outside the gpt2 rooms (model, dist, train, inspect, use, landscape)"; fail=1; }; done
check cli       'torch/|ATen/|c10/' "LibTorch headers stay inside gpt2/"
check python    'harness/|toys/|data/|gpt2/|cli/|torch/|ATen/|c10/' "the bindings use core and io only"
check fuzz      'cli/|torch/|ATen/|c10/|gpt2/(dist|train|inspect|use|landscape)/' "fuzz targets build without LibTorch: only gpt2/model's LibTorch-free readers"
[ $fail = 0 ] && echo "floors: ok"
exit $fail
