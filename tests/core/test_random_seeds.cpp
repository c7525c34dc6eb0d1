// The seed hashes of core/random.hpp, which replaced four hand-written copies: each equals the formula
// its former copy computed (written out here as the reference), so every seed derived before the move
// is derived the same after it.
#include <catch2/catch.hpp>

#include <cstdint>
#include <set>

#include "core/random.hpp"
#include "support/unity_tu.hpp"

// This file's cases and helpers in a namespace of its own (unity builds: tests/support/unity_tu.hpp).
namespace GAUGELAB_TU {

using namespace gaugelab;

namespace {

constexpr std::uint64_t kPhi = 0x9E3779B97F4A7C15ULL;

std::uint64_t finalise(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace

TEST_CASE("seed hashes: splitmix64, the harness's stream position and the trainer's mix are the former copies") {
  const std::uint64_t values[] = {0, 1, 2, 42, 123, 456, 0x5eed, 1ULL << 40, ~0ULL, kPhi};
  for (const std::uint64_t a : values) {
    CHECK(core::splitmix64(a) == finalise(a + kPhi));  // data/synthetic_corpus's and data/prepare's copy
    for (const std::uint64_t b : values) {
      CHECK(core::splitmix_at(a, b) == finalise(a + kPhi * (b + 1)));  // the harness's mix_seed(a, b)
      // the trainer's mix_seed(seed, index) (gpt2/train/data_loader.cpp)
      CHECK(core::mix_seed(a, b) == finalise((finalise(a + kPhi) ^ finalise(b + 0x632be59bd9b4e019ULL + kPhi)) + kPhi));
    }
  }
  std::set<std::uint64_t> seen;  // no collision among neighbouring (seed, index) pairs
  for (std::uint64_t s = 0; s < 32; ++s)
    for (std::uint64_t i = 0; i < 32; ++i) seen.insert(core::mix_seed(s, i));
  CHECK(seen.size() == 32 * 32);
}

}  // namespace GAUGELAB_TU
