// The same start for every test case of the LibTorch test areas, and a time limit that names the case.
//
// CTest runs a source file's cases in one process there (tests/CMakeLists.txt, GAUGELAB_TEST_PER_CASE), so a
// case must not depend on the cases before it in the process. At the start of each case this listener
//  - seeds LibTorch's global generators (CPU, and CUDA when present) with Catch's --rng-seed (0 unless given):
//    PyTorch (2.15 here) seeds its default CPU generator from the system at start-up, so a test that draws with
//    at::randn / at::randint without a generator of its own saw other data on each run (a statistical check
//    that held here failed on CI). To look for thin margins, run a binary with other seeds:
//    `build/tests/test_gpt2 --rng-seed 17`;
//  - restores the intra-op thread count the process started with (a case may set its own, e.g. to 1);
//  - arms a watchdog of GAUGELAB_TEST_CASE_SECONDS: a case still running then is named on stderr and aborted,
//    which Catch2 reports as that case's failure (CTest's own limit covers the whole process).
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include <ATen/Context.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include <unistd.h>

#include "gpt2/gpt2_catch.hpp"  // last: see there

#ifndef GAUGELAB_TEST_CASE_SECONDS
#error "GAUGELAB_TEST_CASE_SECONDS: the per-case time limit, set by tests/CMakeLists.txt"
#endif

#define GAUGELAB_TEXT_(x) #x
#define GAUGELAB_TEXT(x) GAUGELAB_TEXT_(x)

namespace {

char g_case[512];  // the running case's name, for the signal handler (which may not allocate)
std::size_t g_case_len = 0;

void write_all(const char* s, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(STDERR_FILENO, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<std::size_t>(w);
  }
}

extern "C" void on_case_timeout(int /*sig*/) {
  static const char head[] = "\ntest case \"";
  static const char tail[] = "\" still running after " GAUGELAB_TEXT(GAUGELAB_TEST_CASE_SECONDS) " s: aborted\n";
  write_all(head, sizeof head - 1);
  write_all(g_case, g_case_len);
  write_all(tail, sizeof tail - 1);
  std::abort();  // Catch2's handler reports the running case as failed, with the run's totals
}

struct TorchCaseListener : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  int threads = 0;  // the process's intra-op thread count before its first case

  void testCaseStarting(Catch::TestCaseInfo const& info) override {
    if (threads == 0) {
      threads = at::get_num_threads();
      struct sigaction sa {};
      sa.sa_handler = on_case_timeout;
      sigemptyset(&sa.sa_mask);
      sigaction(SIGALRM, &sa, nullptr);
    } else if (at::get_num_threads() != threads) {
      at::set_num_threads(threads);
    }
    at::manual_seed(Catch::rngSeed());
    g_case_len = std::min(info.name.size(), sizeof g_case);
    std::memcpy(g_case, info.name.data(), g_case_len);
    alarm(GAUGELAB_TEST_CASE_SECONDS);
  }
  void testCaseEnded(Catch::TestCaseStats const& /*stats*/) override { alarm(0); }
};

}  // namespace

CATCH_REGISTER_LISTENER(TorchCaseListener)
