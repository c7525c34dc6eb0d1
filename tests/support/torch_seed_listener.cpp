// One seed for LibTorch's global generator in every test case of the LibTorch test areas.
//
// PyTorch (2.15 here) seeds its default CPU generator from the system at start-up, so a test that draws with
// at::randn / at::randint without a generator of its own saw other data on each run (a statistical check
// that held here failed on CI). This listener seeds the global generators (CPU, and CUDA when
// present) at the start of each test case with Catch's --rng-seed (0 unless given), so a case's data do not
// depend on the run, nor on the cases before it in the same process. To look for thin margins, run a binary
// with other seeds: `build/tests/test_gpt2 --rng-seed 17`.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <ATen/Context.h>

#include "gpt2/gpt2_catch.hpp"  // last: see there

namespace {

struct TorchSeedListener : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void testCaseStarting(Catch::TestCaseInfo const& /*info*/) override { at::manual_seed(Catch::rngSeed()); }
};

}  // namespace

CATCH_REGISTER_LISTENER(TorchSeedListener)
